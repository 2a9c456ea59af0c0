"""Row exports as dataset -> formatter -> writer (docs/formats.md).

- ``datasets``: the row datasets behind ``export_annotations`` and the staff downloads;
- ``formats``: CSV, JSON Lines and Parquet from one typed field list;
- ``writers``: the CSV-injection guard (``spreadsheet_safe``), CSV and JSON Lines writers, rows
  and the metrics document as text.
"""
