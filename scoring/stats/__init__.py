"""Every statistic of the audit, as plain functions over numpy arrays and pandas frames.

No Django import anywhere in this package: a researcher can call it from a notebook, and the
web app, the JSON export and the report call the very same functions. Definitions live in
docs/metrics.md; each function's docstring points to its section there.
"""
