"""The annotator survey: the pages an annotator answers on (the label vocabulary they answer
in is ``annotations.labels``).

- ``views``, ``forms``, ``urls``: the survey pages (thin views over ``annotations.selectors`` and
  ``annotations.services``).
- ``language``: the middleware that shows annotator pages in the annotator's language (and
  every other page in English); the switcher's view is ``views.language_set``.
"""
