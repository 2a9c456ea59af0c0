"""Models side by side across studies or generators: ``selectors`` (the frames of the chosen
studies and the comparison document) → ``forms`` → ``views`` and ``urls`` (the staff page and
its JSON). The statistics are ``scoring.stats.version_change``; the table rows
``scoring.report.side_by_side``. docs/metrics.md and docs/report.md, "Models side by side".
"""
