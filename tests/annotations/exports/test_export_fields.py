"""One field table per exported row: every writer (CSV, JSONL, Parquet), every REST row
serializer and docs/formats.md agree with it, and the API serves the export's rows."""

import csv
import datetime as dt
import inspect
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework import serializers as drf

from annotations.api import serializers
from annotations.common import row_fields as export_fields
from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW, Field, RowTable
from annotations.exports.datasets import ExportDataset
from annotations.exports.writers import WRITERS
from scoring.stats.label_models import AGGREGATED_LABEL_ROW
from tests.scoring.test_metrics import LABELS_A, labelled_study  # noqa: F401

DOCS = Path(__file__).resolve().parents[3] / "docs" / "formats.md"

# Every exported row: its table and its API serializer (None: the row is not served by the API).
EXPORTS = [
    (ANNOTATION_ROW, serializers.AnnotationRowSerializer),
    (JUDGMENT_ROW, serializers.JudgmentRowSerializer),
    (AGGREGATED_LABEL_ROW, None),
]
ARROW = {
    "string": pa.string(),
    "bool": pa.bool_(),
    "int64": pa.int64(),
    "float64": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
}
SERIALIZER_FIELD = {
    "string": drf.CharField,
    "bool": drf.BooleanField,
    "int64": drf.IntegerField,
    "float64": drf.FloatField,
    "timestamp": drf.DateTimeField,
}
SAMPLE = {
    "string": "text",
    "bool": True,
    "int64": 3,
    "float64": 0.5,
    "timestamp": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
}


def sample_row(table: RowTable) -> dict:
    return {field.name: SAMPLE[field.type] for field in table.fields}


def test_every_row_serializer_has_a_table():
    row_serializers = {
        cls
        for _, cls in inspect.getmembers(serializers, inspect.isclass)
        if issubclass(cls, drf.Serializer) and cls.__name__.endswith("RowSerializer")
    }
    assert row_serializers == {serializer for _, serializer in EXPORTS if serializer}


@pytest.mark.parametrize(("table", "serializer"), EXPORTS, ids=lambda v: getattr(v, "name", ""))
def test_writers_and_serializer_follow_the_table(table, serializer):
    row = sample_row(table)
    empty, one = ExportDataset("t", [], table), ExportDataset("t", [row], table)
    header = next(csv.reader(io.StringIO(WRITERS["csv"].write(empty).decode())))
    assert header == table.columns
    [line] = WRITERS["jsonl"].write(one).decode().splitlines()
    assert list(json.loads(line)) == table.columns
    parquet = pq.read_table(io.BytesIO(WRITERS["parquet"].write(one)))
    assert [(f.name, f.type, f.nullable) for f in parquet.schema] == [
        (f.name, ARROW[f.type], f.nullable) for f in table.fields
    ]
    if serializer is None:
        return
    declared = serializer().fields
    assert list(declared) == table.columns
    for field in table.fields:
        made = declared[field.name]
        assert type(made) is SERIALIZER_FIELD[field.type], field.name
        assert made.allow_null == field.nullable and made.help_text == field.description
    assert list(serializer(row).data) == table.columns


def test_the_annotation_export_has_the_excluded_labels_column():
    assert "annotator_labels_excluded" in ANNOTATION_ROW.columns
    assert "annotator_labels_excluded" in serializers.AnnotationRowSerializer().fields


def test_docs_show_every_table():
    text = DOCS.read_text(encoding="utf-8")
    for table, *_ in EXPORTS:
        assert table.markdown() in text, f"docs/formats.md: regenerate the {table.name} table"


def test_a_row_with_a_missing_or_extra_key_is_refused():
    table = RowTable("t", (Field("a", "string", "A"), Field("b", "int64", "B", nullable=True)))
    assert list(table.row({"b": None, "a": "x"})) == ["a", "b"]
    with pytest.raises(KeyError, match=r"missing \['b'\], not in the table \['c'\]"):
        table.row({"a": "x", "c": 1})
    with pytest.raises(ValueError, match="unknown type 'text'"):
        Field("a", "text", "A")
    assert export_fields.TYPES == tuple(ARROW)


def _normalised(rows: list[dict]) -> list[dict]:
    """ISO times as datetimes: the API writes UTC as 'Z', the JSONL export as '+00:00'."""
    out = []
    for row in rows:
        fixed = {}
        for key, value in row.items():
            if key.endswith("_at") and isinstance(value, str):
                value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            fixed[key] = value
        out.append(fixed)
    return out


def _export(study, tmp_path, *extra) -> list[dict]:
    out = tmp_path / f"export{len(extra)}.jsonl"
    call_command(
        "export_annotations",
        "--study",
        study.slug,
        "--format",
        "jsonl",
        "--out",
        str(out),
        *extra,
        stdout=io.StringIO(),
    )
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.django_db
def test_the_api_rows_equal_the_export_rows(labelled_study, staff_client, tmp_path):  # noqa: F811
    for route, extra in (("api:study_annotations", ()), ("api:study_judgments", ("--judgments",))):
        exported = _export(labelled_study, tmp_path, *extra)
        served = staff_client.get(
            reverse(route, args=[labelled_study.slug]), HTTP_ACCEPT="application/json"
        )
        assert served.status_code == 200
        assert exported and _normalised(served.json()) == _normalised(exported), route
    annotations = staff_client.get(
        reverse("api:study_annotations", args=[labelled_study.slug])
    ).json()
    assert {row["annotator_labels_excluded"] for row in annotations} == {False}
    assert len(annotations) == 26 and LABELS_A


@pytest.mark.django_db
def test_the_openapi_schema_lists_every_field_with_its_description(staff_client):
    schema = staff_client.get(reverse("api-schema") + "?format=json").json()
    for table, name in ((ANNOTATION_ROW, "AnnotationRow"), (JUDGMENT_ROW, "JudgmentRow")):
        properties = schema["components"]["schemas"][name]["properties"]
        assert list(properties) == table.columns
        assert all(properties[f.name]["description"] == f.description for f in table.fields)
