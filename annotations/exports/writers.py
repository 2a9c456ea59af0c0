"""Exports as dataset -> formatter -> writer.

The dataset functions build plain rows once; CSV, JSONL and the REST API only format them. The
validated-metrics document (statistics) is built on the scoring side, ``scoring.metrics.document``,
which formats it with the writers here.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable

from annotations import selectors
from annotations.common.csv_writer import csv_text
from annotations.common.row_fields import ANNOTATION_ROW
from annotations.models import Study

# The column order of the annotation export: the field table (annotations.common.row_fields) is the definition.
ANNOTATION_EXPORT_COLUMNS = ANNOTATION_ROW.columns


# --- datasets ------------------------------------------------------------------------------


def annotation_dataset(*, study: Study) -> list[dict]:
    return selectors.annotation_rows(study=study, include_gold=True, include_qualification=True)


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


def render_rows_csv(rows: list[dict], columns: list[str]) -> str:
    return csv_text(rows, columns)


def render_metrics(document: dict) -> str:
    # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
    return json.dumps(document, indent=2, allow_nan=False, default=_plain)
