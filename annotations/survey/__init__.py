"""The annotator survey: the pages an annotator answers on (the label vocabulary they answer
in is ``annotations.labels``).

- ``views``, ``forms``, ``urls``: the survey pages (thin views over ``annotations.selectors`` and
  ``annotations.services``).
"""
