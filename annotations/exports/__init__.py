"""Row exports as dataset → writer (docs/formats.md), the shape of doccano's ``data_export``.

- ``datasets``: the rows of each export (``annotation_export``, ``judgment_export``), built once,
  with the field table that defines their columns; the command, the staff download and the REST
  API all read them here;
- ``writers``: one writer per file format (CSV, JSON Lines, Parquet), each with its extension and
  content type; ``WRITERS`` maps a format name to its writer and ``writer_for`` refuses an unknown
  one.
"""
