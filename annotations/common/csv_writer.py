"""The one CSV writer: every CSV the app writes (exports, report tables, REFLECT tables, the
rephrasing records, ROC and rate rows) goes through ``write_csv``, which neutralises cells a
spreadsheet would run as a formula. No Django here, so Django-free modules
(``generation.prompts``) use it too; ``tests/test_security.py`` checks no other module
constructs a CSV writer (docs/formats.md, docs/deployment.md#security).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Iterable

# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...) in a
# note would become a live link); tab and carriage return can hide such a start.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """A CSV cell a spreadsheet shows as text: text starting like a formula gets a leading '.

    OWASP's advice for CSV injection. Only text is changed: numbers, booleans and dates
    cannot hold a formula, and a negative number must stay a number. JSONL and the API stay raw.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_cell(value):
    """One value as the text of a cell: None empty, dates ISO 8601, lists and objects as
    JSON, then neutralised."""
    if value is None:
        return ""
    if isinstance(value, (dt.datetime, dt.date)):
        value = value.isoformat()
    elif isinstance(value, (list, tuple, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return spreadsheet_safe(value)


def write_csv(
    rows: Iterable[dict], handle, columns: list[str], *, lineterminator: str = "\r\n"
) -> None:
    """``rows`` (dicts; keys outside ``columns`` ignored) under a header of ``columns``."""
    writer = csv.writer(handle, lineterminator=lineterminator)
    writer.writerow([spreadsheet_safe(column) for column in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(column)) for column in columns])


def csv_text(rows: Iterable[dict], columns: list[str], *, lineterminator: str = "\r\n") -> str:
    buffer = io.StringIO()
    write_csv(rows, buffer, columns, lineterminator=lineterminator)
    return buffer.getvalue()
