"""Imports, all or nothing (docs/formats.md).

- ``manifest``: an item manifest (JSONL) and an annotation CSV parsed into typed records (no
  Django);
- ``uploads``: an uploaded manifest or zip unpacked safely;
- ``importers``: the writes, ``items_import`` and ``annotations_import``.
"""
