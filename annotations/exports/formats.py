"""The formatter/writer end of the row exports: CSV, JSON Lines and Parquet from one typed field list.

Each dataset (annotations, judgments, aggregated labels) is a list of plain dict rows built once
elsewhere, plus its fields: ``{column: (type, nullable)}`` read from its field table
(``export_fields``) with types from ``ARROW_TYPES``. CSV and
JSONL go through the writers in ``exports``; Parquet keeps the types (ints, floats, booleans,
UTC timestamps, nulls) in an explicit schema, so an empty export has the same columns and types as
a full one. The layout (one flat table per file, no index columns) is what
``datasets.load_dataset("parquet", data_files=...)`` and ``pandas.read_parquet`` read as-is.
docs/formats.md, "Parquet exports".
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from annotations.common.csv_writer import write_csv
from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW
from annotations.exports import writers as exports

FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
}
ARROW_TYPES = {
    "string": pa.string(),
    "bool": pa.bool_(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}

# {column: (type, nullable)} of each row, read from its field table (export_fields).
ANNOTATION_EXPORT_FIELDS = ANNOTATION_ROW.types
JUDGMENT_EXPORT_FIELDS = JUDGMENT_ROW.types


def arrow_schema(fields: dict[str, tuple[str, bool]], *, dataset: str) -> pa.Schema:
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


def arrow_table(rows: list[dict], fields: dict[str, tuple[str, bool]], *, dataset: str) -> pa.Table:
    """The rows as an Arrow table of exactly ``fields``; a null in a non-nullable column is an error."""
    schema = arrow_schema(fields, dataset=dataset)
    columns = {name: [row.get(name) for row in rows] for name in fields}
    arrays = []
    for field in schema:
        values = columns[field.name]
        try:
            array = pa.array(values, type=field.type)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise ValueError(f"{dataset}: column {field.name!r}: {exc}") from exc
        if not field.nullable and array.null_count:
            row = next(i for i, value in enumerate(values) if value is None)
            raise ValueError(f"{dataset}: column {field.name!r} is empty on row {row + 1}")
        arrays.append(array)
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(rows: list[dict], handle, fields: dict[str, tuple[str, bool]], *, dataset: str):
    pq.write_table(arrow_table(rows, fields, dataset=dataset), handle, compression="zstd")


def render_rows(
    rows: Iterable[dict], fmt: str, fields: dict[str, tuple[str, bool]], *, dataset: str
) -> bytes:
    """One dataset's rows in ``fmt`` (csv, jsonl, parquet) as bytes (text formats in UTF-8)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    rows = list(rows)
    if fmt == "parquet":
        buffer = io.BytesIO()
        write_parquet(rows, buffer, fields, dataset=dataset)
        return buffer.getvalue()
    text = io.StringIO()
    writer = write_csv if fmt == "csv" else exports.write_jsonl
    writer(rows, text, list(fields))
    return text.getvalue().encode("utf-8")
