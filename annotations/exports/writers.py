"""The writers of the exports: one per file format, each with its name, extension and content type.

A writer turns a dataset (``datasets.ExportDataset``: rows and their field table) into the bytes
of one file and computes nothing. ``WRITERS`` maps a format name to its writer, and
``writer_for`` refuses an unknown name; ``export_annotations --format``, the staff download and
``FORMATS`` all read that mapping, so a new format is a class here and a line in ``WRITERS``
(docs/architecture.md, "Where to add …").

- CSV goes through the one CSV writer (``annotations.common.csv_writer``), formula cells
  neutralised;
- JSON Lines writes the raw values, dates as ISO 8601;
- Parquet keeps the types (ints, floats, booleans, UTC timestamps, nulls) in an explicit schema
  read from the field table, so an empty export has the same columns and types as a full one. The
  layout (one flat table per file, no index columns) is what
  ``datasets.load_dataset("parquet", data_files=...)`` and ``pandas.read_parquet`` read as-is
  (docs/formats.md, "Parquet exports").
"""

from __future__ import annotations

import datetime as dt
import io
import json
from collections.abc import Iterable
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq

from annotations.common.csv_writer import csv_text
from annotations.exports.datasets import ExportDataset


class UnknownFormat(ValueError):
    """A format name no writer has."""


class Writer:
    """One file format: ``write`` returns the dataset's file as bytes."""

    name: ClassVar[str]
    label: ClassVar[str]  # as the staff page names it
    extension: ClassVar[str]
    content_type: ClassVar[str]

    def write(self, dataset: ExportDataset) -> bytes:
        raise NotImplementedError


def _plain(value):
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    return value


class CsvWriter(Writer):
    name, label, extension, content_type = "csv", "CSV", "csv", "text/csv"

    def write(self, dataset: ExportDataset) -> bytes:
        return csv_text(dataset.rows, dataset.columns).encode("utf-8")


class JsonlWriter(Writer):
    name, label, extension, content_type = "jsonl", "JSONL", "jsonl", "application/x-ndjson"

    def write(self, dataset: ExportDataset) -> bytes:
        columns = dataset.columns
        # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
        lines = (
            json.dumps({key: _plain(row.get(key)) for key in columns}, allow_nan=False) + "\n"
            for row in dataset.rows
        )
        return "".join(lines).encode("utf-8")


ARROW_TYPES = {
    "string": pa.string(),
    "bool": pa.bool_(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}


def arrow_schema(fields: dict[str, tuple[str, bool]], *, dataset: str) -> pa.Schema:
    """The Parquet schema of ``{column: (type, nullable)}`` (a field table's ``types``)."""
    unknown = sorted({kind for kind, _ in fields.values()} - set(ARROW_TYPES))
    if unknown:
        raise ValueError(f"unknown field type(s) {unknown}; use {', '.join(ARROW_TYPES)}")
    schema = pa.schema(
        [
            pa.field(name, ARROW_TYPES[kind], nullable=nullable)
            for name, (kind, nullable) in fields.items()
        ]
    )
    # Provenance only; readers (pandas, pyarrow, datasets) take the types from the schema itself.
    return schema.with_metadata(
        {"acrb": json.dumps({"dataset": dataset, "definitions": "docs/formats.md"})}
    )


def arrow_table(dataset: ExportDataset) -> pa.Table:
    """The rows as an Arrow table of exactly the table's fields; a null in a non-nullable column
    is an error."""
    schema = arrow_schema(dataset.types, dataset=dataset.name)
    arrays = []
    for field in schema:
        values = [row.get(field.name) for row in dataset.rows]
        try:
            array = pa.array(values, type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{dataset.name}: column {field.name!r}: {exc}") from exc
        if not field.nullable and array.null_count:
            row = next(i for i, value in enumerate(values) if value is None)
            raise ValueError(f"{dataset.name}: column {field.name!r} is empty on row {row + 1}")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)


class ParquetWriter(Writer):
    name, label, extension, content_type = (
        "parquet",
        "Parquet",
        "parquet",
        "application/vnd.apache.parquet",
    )

    def write(self, dataset: ExportDataset) -> bytes:
        buffer = io.BytesIO()
        pq.write_table(arrow_table(dataset), buffer, compression="zstd")
        return buffer.getvalue()


# The one mapping from format name to writer: the command's --format choices, the staff
# download's formats and its buttons all come from it.
WRITERS: dict[str, Writer] = {
    writer.name: writer for writer in (CsvWriter(), JsonlWriter(), ParquetWriter())
}
FORMATS = tuple(WRITERS)


def writer_for(name: str) -> Writer:
    """The writer of format ``name``; an unknown name is refused with the ones there are."""
    try:
        return WRITERS[name]
    except KeyError:
        raise UnknownFormat(
            f"unknown export format {name!r}; use one of {', '.join(FORMATS)}"
        ) from None


# --- text for the other downloads (report and ROC tables, the metrics document) ------------


def render_rows_csv(rows: Iterable[dict], columns: list[str]) -> str:
    return csv_text(rows, columns)


def render_metrics(document: dict) -> str:
    # allow_nan=False: a NaN reaching the export is a bug to surface, never a value to write.
    return json.dumps(document, indent=2, allow_nan=False, default=_plain)
