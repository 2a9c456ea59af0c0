"""The REFLECT part of the audit report (docs/report.md, "REFLECT"; docs/reflect.md), read top
to bottom like the study part, all Django-free:

- ``dataset``: answer rows → the statistics block (``full_report``) and the part of a report
  (``reflect_part``), which the report folder's verifier recomputes
- ``text``: what was audited, the headline findings, the limitations, the legal evidence lines
- ``figures``: the part's figures with their intervals (``scoring.report.charts``)

A REFLECT-only document and a study document with a REFLECT part are assembled, rendered,
written and verified by the rest of ``scoring.report`` (``bundle``, ``render``, ``verify``).
"""
