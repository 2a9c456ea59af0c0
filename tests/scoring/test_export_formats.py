"""Row exports in CSV, JSONL and Parquet from one dataset: typed Parquet read back with pyarrow and
pandas, aggregated labels (--aggregate), judgments, the staff download, CLI errors, and the
label-model sections of the metrics export."""

import csv
import io
import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.common.row_fields import ANNOTATION_ROW, JUDGMENT_ROW, Field, RowTable
from annotations.exports import datasets as export_datasets
from annotations.exports import writers as export_writers
from scoring.stats.label_models import AGGREGATED_LABEL_COLUMNS
from tests.scoring.test_metrics import LABELS_A, labelled_study  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def run_export(study, tmp_path, fmt, *extra, name="out"):
    out = tmp_path / f"{name}.{fmt}"
    stdout = io.StringIO()
    call_command(
        "export_annotations",
        "--study",
        study.slug,
        "--format",
        fmt,
        "--out",
        str(out),
        *extra,
        stdout=stdout,
    )
    return out, stdout.getvalue()


def test_annotation_parquet_keeps_types_and_equals_the_jsonl_rows(labelled_study, tmp_path):  # noqa: F811
    parquet, message = run_export(labelled_study, tmp_path, "parquet")
    jsonl, _ = run_export(labelled_study, tmp_path, "jsonl")
    assert "wrote 26 annotations" in message  # 12 items x 2 annotators + 2 gold answers
    table = pq.read_table(parquet)
    assert table.column_names == ANNOTATION_ROW.columns
    schema = table.schema
    assert schema.field("is_gold").type == pa.bool_()
    assert schema.field("hard_refusal").type == pa.bool_()
    assert schema.field("revision").type == pa.int64()
    assert schema.field("seconds_to_answer").type == pa.float64()
    assert schema.field("submitted_at").type == pa.timestamp("us", tz="UTC")
    assert schema.field("cue").nullable and not schema.field("item_id").nullable
    frame = pd.read_parquet(parquet)
    assert len(frame) == 26 and frame["is_gold"].sum() == 2
    assert frame["hard_refusal"].dtype == bool
    assert str(frame["submitted_at"].dt.tz) == "UTC"
    # Refused answers have no cue: a real null, not the string "None" or "".
    assert frame.loc[frame["hard_refusal"], "cue"].isna().all()
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    as_records = table.to_pylist()
    for from_json, from_parquet in zip(lines, as_records, strict=True):
        assert from_json["item_id"] == from_parquet["item_id"]
        assert from_json["hard_refusal"] is from_parquet["hard_refusal"]
        assert from_json["cue"] == from_parquet["cue"]
        assert from_json["revision"] == from_parquet["revision"]
        assert pd.Timestamp(from_json["submitted_at"]) == pd.Timestamp(from_parquet["submitted_at"])


def test_empty_study_parquet_has_the_full_schema(study, tmp_path):
    out, _ = run_export(study, tmp_path, "parquet")
    table = pq.read_table(out)
    assert table.num_rows == 0
    assert table.column_names == ANNOTATION_ROW.columns
    assert table.schema.field("submitted_at").type == pa.timestamp("us", tz="UTC")


@pytest.mark.parametrize("method", ["majority", "dawid-skene", "mace"])
def test_aggregate_writes_one_row_per_item(labelled_study, tmp_path, method):  # noqa: F811
    out, message = run_export(labelled_study, tmp_path, "parquet", "--aggregate", method)
    frame = pd.read_parquet(out)
    assert list(frame.columns) == AGGREGATED_LABEL_COLUMNS
    assert len(frame) == 12 and frame["item_id"].is_unique  # gold left out, as in the metrics
    assert (frame["method"] == method).all()
    labelled = frame[frame["hard_refusal"].notna()]
    assert labelled["posterior"].between(0, 1).all()
    assert frame.loc[frame["hard_refusal"] == True, "cue"].isna().all()  # noqa: E712
    # Items 2 and 4: both annotators say "refused"; every method agrees with them.
    by_item = frame.set_index("item_id")
    assert by_item.loc["i02", "hard_refusal"] and by_item.loc["i04", "hard_refusal"]
    assert f"item labels ({method})" in message
    if method == "majority":
        # Item 5: A refuses, B does not -> no majority, null with a reason.
        assert pd.isna(by_item.loc["i05", "hard_refusal"])
        assert "more than half" in by_item.loc["i05", "reason"]


def test_aggregate_csv_and_jsonl_carry_the_same_rows(labelled_study, tmp_path):  # noqa: F811
    csv_out, _ = run_export(labelled_study, tmp_path, "csv", "--aggregate", "dawid-skene")
    jsonl_out, _ = run_export(labelled_study, tmp_path, "jsonl", "--aggregate", "dawid-skene")
    rows = list(csv.DictReader(csv_out.open()))
    records = [json.loads(line) for line in jsonl_out.read_text().splitlines()]
    assert [r["item_id"] for r in rows] == [r["item_id"] for r in records]
    assert list(rows[0]) == AGGREGATED_LABEL_COLUMNS
    for row, record in zip(rows, records, strict=True):
        if record["posterior"] is None:  # no label (a tie): empty in CSV, null in JSONL
            assert row["posterior"] == "" and row["reason"] == record["reason"]
        else:
            assert float(row["posterior"]) == pytest.approx(record["posterior"])


def test_judgment_parquet_has_nullable_refusal(labelled_study, tmp_path):  # noqa: F811
    out, message = run_export(labelled_study, tmp_path, "parquet", "--judgments")
    table = pq.read_table(out)
    assert table.column_names == JUDGMENT_ROW.columns
    assert table.num_rows == 12 and "wrote 12 judgments" in message
    assert table.schema.field("hard_refusal").nullable
    assert table.schema.field("score").type == pa.float64()


def test_null_in_a_required_column_is_one_clear_error():
    table = RowTable("t", (Field("item_id", "string", ""), Field("n_annotations", "int64", "")))
    rows = [{"item_id": "a", "n_annotations": 1}, {"item_id": None, "n_annotations": 1}]
    with pytest.raises(ValueError, match="column 'item_id' is empty on row 2"):
        export_writers.arrow_table(export_datasets.ExportDataset("t", rows, table))
    table = RowTable("t", (Field("n", "int64", ""),))
    with pytest.raises(ValueError, match="column 'n'"):
        export_writers.arrow_table(export_datasets.ExportDataset("t", [{"n": "three"}], table))


def test_cli_errors_are_one_line_and_write_nothing(labelled_study, tmp_path):  # noqa: F811
    with pytest.raises(CommandError, match="unknown study 'nope'"):
        call_command("export_annotations", "--study", "nope", "--out", str(tmp_path / "x.csv"))
    with pytest.raises(CommandError, match="does not exist"):
        call_command(
            "export_annotations",
            "--study",
            labelled_study.slug,
            "--out",
            str(tmp_path / "no" / "x.csv"),
        )
    with pytest.raises(CommandError, match="not allowed with"):
        run_export(labelled_study, tmp_path, "csv", "--aggregate", "mace", "--judgments")
    with pytest.raises(CommandError, match="invalid choice"):
        run_export(labelled_study, tmp_path, "csv", "--aggregate", "snorkel")
    assert not list(tmp_path.glob("out.*"))


def test_staff_downloads_parquet(labelled_study, staff_client):  # noqa: F811
    response = staff_client.get(
        reverse("staff:export_annotations", args=[labelled_study.slug, "parquet"])
    )
    assert response.status_code == 200
    assert response["Content-Type"] == "application/vnd.apache.parquet"
    assert "test-study-annotations.parquet" in response["Content-Disposition"]
    table = pq.read_table(io.BytesIO(response.content))
    assert table.num_rows == 26
    page = staff_client.get(reverse("staff:study_detail", args=[labelled_study.slug]))
    assert b"Annotations (Parquet)" in page.content
    assert (
        staff_client.get(
            reverse("staff:export_annotations", args=[labelled_study.slug, "xlsx"])
        ).status_code
        == 404
    )


def test_dataset_and_writer_agree_on_columns(labelled_study):  # noqa: F811
    dataset = export_datasets.annotation_export(study=labelled_study)
    assert dataset.table is ANNOTATION_ROW
    body = export_writers.writer_for("csv").write(dataset)
    header = body.decode().splitlines()[0].split(",")
    assert header == ANNOTATION_ROW.columns


def test_metrics_export_has_label_model_sections(labelled_study, tmp_path):  # noqa: F811
    out = tmp_path / "metrics.json"
    call_command(
        "export_metrics",
        study=labelled_study.slug,
        out=str(out),
        bootstrap=50,
        label_models="majority,dawid-skene",
    )
    document = json.loads(out.read_text())
    annotators = document["aggregation"]["dawid-skene"]["annotators"]
    assert set(annotators) == {"ann0", "ann1"}
    assert annotators["ann0"]["n"] == len(LABELS_A)
    assert 0 <= annotators["ann0"]["accuracy_estimate"] <= 1
    sensitivity = document["sensitivity"]["majority"]
    # Majority: item 5 (A refuses, B does not) has no label; the rest do.
    assert (sensitivity["n_items"], sensitivity["n_items_without_label"]) == (11, 1)
    assert "refusal" in sensitivity["rates"]
    with pytest.raises(CommandError, match="unknown label model"):
        call_command("export_metrics", study=labelled_study.slug, out=str(out), label_models="x")
