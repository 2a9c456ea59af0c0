"""The staff pages of a study: studies, the validation dashboard, batches, imports and exports.

- ``views``, ``forms``, ``urls``: the pages;
- ``audit_context``: the study's audit context (what was audited and for what), its checks,
  writes and history.
"""
