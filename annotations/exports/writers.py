"""Exports as dataset -> formatter -> writer.

The dataset functions build plain rows once; CSV, JSONL and the REST API only format them. The
validated-metrics document (statistics) is built on the scoring side, ``scoring.metrics.document``,
which formats it with the writers here.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Iterable

from annotations import selectors
from annotations.models import Study

ANNOTATION_EXPORT_COLUMNS = [
    "item_id",
    "annotator",
    "annotator_group",
    "batch",
    "is_gold",
    "attribute",
    "attribute_value",
    "base_prompt_id",
    "domain",
    "generator",
    "mode",
    "hard_refusal",
    "cue",
    "note",
    "broken_image",
    "served_at",
    "submitted_at",
    "updated_at",
    "seconds_to_answer",
    "too_fast",
    "revision",
    "source",
    "language",
    "annotator_labels_excluded",
]


# --- datasets ------------------------------------------------------------------------------


def annotation_dataset(*, study: Study) -> list[dict]:
    return selectors.annotation_rows(study=study, include_gold=True)


# --- formatters / writers ------------------------------------------------------------------


def _plain(value):
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...) in a
# note would become a live link); tab and carriage return can hide such a start.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value):
    """A CSV cell a spreadsheet shows as text: text starting like a formula gets a leading '.

    OWASP's advice for CSV injection. Only text is changed: numbers, booleans and dates
    cannot hold a formula, and a negative number must stay a number. Every CSV writer of the
    project calls this; JSONL and the API stay raw.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(rows: Iterable[dict], handle, columns: list[str]) -> None:
    writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
    writer.writerow({key: spreadsheet_safe(key) for key in columns})
    for row in rows:
        writer.writerow(
            {
                key: "" if row.get(key) is None else spreadsheet_safe(_plain(row.get(key)))
                for key in columns
            }
        )


def write_jsonl(rows: Iterable[dict], handle, columns: list[str]) -> None:
    for row in rows:
        handle.write(
            json.dumps({key: _plain(row.get(key)) for key in columns}, allow_nan=False) + "\n"
        )


def render_rows_csv(rows: list[dict], columns: list[str]) -> str:
    buffer = io.StringIO()
    write_csv(rows, buffer, columns)
    return buffer.getvalue()


def render_metrics(document: dict) -> str:
    # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
    return json.dumps(document, indent=2, allow_nan=False, default=_plain)
