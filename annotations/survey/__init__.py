"""The annotator survey: the pages an annotator answers on.

- ``labels``: the label vocabulary (no Django);
- ``views``, ``forms``, ``urls``: the survey pages (thin views over ``annotations.selectors`` and
  ``annotations.services``).
"""
