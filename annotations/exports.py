"""Exports as dataset -> formatter -> writer.

The dataset functions build plain rows once; CSV, JSONL and the REST API only format them. The
validated-metrics document (statistics) is built on the scoring side, ``scoring.metrics.document``,
which formats it with the writers here.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterable

from . import selectors
from .csv_writer import FORMULA_STARTS, csv_text, spreadsheet_safe, write_csv  # noqa: F401
from .models import Study

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


def write_jsonl(rows: Iterable[dict], handle, columns: list[str]) -> None:
    for row in rows:
        handle.write(
            json.dumps({key: _plain(row.get(key)) for key in columns}, allow_nan=False) + "\n"
        )


WRITERS = {"csv": write_csv, "jsonl": write_jsonl}


def render_annotations(rows: list[dict], fmt: str) -> str:
    if fmt not in WRITERS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(WRITERS)}")
    buffer = io.StringIO()
    WRITERS[fmt](rows, buffer, ANNOTATION_EXPORT_COLUMNS)
    return buffer.getvalue()


def render_rows_csv(rows: list[dict], columns: list[str]) -> str:
    return csv_text(rows, columns)


def render_metrics(document: dict) -> str:
    # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
    return json.dumps(document, indent=2, allow_nan=False, default=_plain)
