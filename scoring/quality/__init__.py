"""The annotator-quality pages of a study (staff).

- ``selectors``: the page's reads (the statistics are ``scoring.stats.annotator_quality``);
- ``views``, ``urls``: one table of every annotator, one page per annotator. The actions on an
  annotator (pause, reassign, exclude labels) are ``annotations.quality``.
"""
