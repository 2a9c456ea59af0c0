"""Pieces every app's staff pages share (annotations is the bottom layer, so all may import it).

- ``jobs``: background-job bookkeeping (the ``BackgroundJob`` rows the staff pages poll);
- ``permissions``: ``staff_required``;
- ``http``: ``download_response``;
- ``auth``: the authentication backend (``AUTHENTICATION_BACKENDS``);
- ``bulk``: ``rows_upsert``, bulk upserts from plain tuples (no model instance per row).
"""
