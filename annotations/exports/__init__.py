"""Row exports as dataset -> formatter -> writer (docs/formats.md).

- ``datasets``: the row datasets behind ``export_annotations`` and the staff downloads;
- ``formats``: CSV, JSON Lines and Parquet from one typed field list;
- ``render``: the CSV-injection guard (``spreadsheet_safe``) and rows rendered as text.
"""
