"""Validate a study's own design (docs/metrics.md, "Validate your own design"): the quick validity
suite run at the study's design, as a background job whose result the study page shows.

- ``services``: start the job (one open job per study) and run it (frames → the Django-free
  ``scoring.stats.validity.study_design.validate_study_design`` → the job's result);
- ``selectors``: the study's last result and its open job;
- ``tasks``: the Celery task (queue "default": CPU work, not the GPU queue);
- ``views``, ``urls``: the study page's fragment and its button.
"""
