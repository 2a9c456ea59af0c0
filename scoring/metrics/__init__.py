"""A study's validated metrics (docs/metrics.md).

- ``document``: the validated-metrics document (the one place the statistics' input frames are
  built: exclusions, label source), cached per study;
- ``headlines``: the staff study page's one-screen summary, picked from the metrics document
  and the report (no Django; computes nothing);
- ``views``, ``urls``: the staff statistics fragment, rate charts, the metrics download and API.
"""
