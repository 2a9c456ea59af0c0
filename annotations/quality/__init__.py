"""Actions on an annotator (``actions``): pause and resume, hand their open items to others,
leave their labels out of the statistics. The quality pages that show the statistics are
``scoring.quality``."""
