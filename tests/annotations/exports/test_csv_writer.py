"""One CSV writer, neutralised everywhere (issue 20 item 5): no module but
``annotations.common.csv_writer`` builds a CSV writer, and every door that writes CSV (the exports,
the report and REFLECT tables, the rephrasing records from the page and from
``build_prompts --rephrase-out``) neutralises formula cells."""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[3]
APP_PACKAGES = ("acrb_web", "annotations", "generation", "scoring", "bench", "scripts")
THE_WRITER = Path("annotations/common/csv_writer.py")
FORMULA = '=HYPERLINK("http://evil.example/","click")'


def csv_writers_built_outside_the_writer() -> list[str]:
    """Every call that builds a CSV writer (csv.writer, csv.DictWriter, DataFrame.to_csv)."""
    found = []
    for package in APP_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if relative == THE_WRITER or "migrations" in relative.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                    name = node.func.attr
                    owner = node.func.value
                    is_csv = isinstance(owner, ast.Name) and owner.id == "csv"
                    if (is_csv and name in ("writer", "DictWriter")) or name == "to_csv":
                        found.append(f"{relative}:{node.lineno}")
                elif isinstance(node, ast.ImportFrom) and node.module == "csv":
                    if {a.name for a in node.names} & {"writer", "DictWriter"}:
                        found.append(f"{relative}:{node.lineno}")
    return found


def test_no_module_but_the_one_writer_builds_a_csv_writer():
    assert csv_writers_built_outside_the_writer() == []


def rephrase_record(**changes):
    from generation.prompts.rephrase import RephraseRecord

    values = dict(
        prompt_id="p1",
        original=FORMULA,
        rewrite="+1+1",
        kept=True,
        reason="",
        similarity=0.9,
        benign=True,
        min_similarity=0.5,
        similarity_method="tfidf",
        rewriter="r",
        model="m",
        temperature=0.8,
        seed=7,
        cached=False,
        instruction="@SUM(A1)",
    )
    values.update(changes)
    return RephraseRecord(**values)


def writer_outputs() -> dict[str, str]:
    """The text of every CSV-producing function, for one row holding formulas."""
    from annotations.exports.writers import render_rows_csv
    from generation.prompts.rephrase import records_csv
    from scoring.reflect.page_figures import table_csv

    row = {"item_id": FORMULA, "note": "-2+3", "a": FORMULA}
    return {
        "render_rows_csv": render_rows_csv([row], ["a"]),
        "table_csv": table_csv([{"a": FORMULA}]),
        "records_csv": records_csv([rephrase_record()]),
    }


@pytest.mark.parametrize("writer", list(writer_outputs()))
def test_every_writer_neutralises_formula_cells(writer):
    text = writer_outputs()[writer]
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert any(cell == "'" + FORMULA for cell in cells), text
    assert not [c for c in cells if c[:1] in ("=", "+", "@")], text


@pytest.mark.django_db
def test_the_rephrasing_export_page_neutralises(staff_client):
    from annotations import services
    from generation.models import PromptRephrasing

    study = services.study_create(name="Rephrased", slug="rephrased")
    record = rephrase_record()
    PromptRephrasing.objects.create(study=study, **record.__dict__)
    url = reverse("generation:rephrasing_list", args=[study.slug]) + "?format=csv"
    body = staff_client.get(url).content.decode()
    row = next(csv.DictReader(io.StringIO(body)))
    assert (row["original"], row["rewrite"], row["instruction"]) == (
        "'" + FORMULA,
        "'+1+1",
        "'@SUM(A1)",
    )


def test_build_prompts_rephrase_out_neutralises(tmp_path, settings):
    from tests.support.openai_server import OpenAIServer, completion

    base = tmp_path / "base.json"
    text = FORMULA + " a person cooking dinner"
    base.write_text(json.dumps([{"prompt_id": "p1", "text": text, "domain": "food"}]))
    with OpenAIServer(lambda request: completion("+" + text)) as server:
        settings.ACRB_REWRITERS = {
            "r": {
                "kind": "openai",
                "endpoint": server.base_url,
                "model": "m",
                "seed": 7,
                "temperature": 0.0,
                "min_similarity": 0.1,
                "timeout_s": 5,
            }
        }
        out, records = tmp_path / "plan.jsonl", tmp_path / "records.csv"
        call_command(
            "build_prompts",
            "--base",
            str(base),
            "--out",
            str(out),
            "--rephrase",
            "r",
            "--rephrase-out",
            str(records),
        )
    row = next(csv.DictReader(io.StringIO(records.read_text(encoding="utf-8"))))
    assert row["original"] == "'" + text and row["rewrite"] == "'+" + text
