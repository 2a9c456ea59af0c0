"""The demo study's export and report folder validate against their schemas, and
verify_report says when a report.json breaks its schema."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from scoring.report import schema

pytestmark = pytest.mark.django_db


def test_the_demo_study_export_and_report_validate(tmp_path):
    call_command("seed_demo", stdout=io.StringIO())
    metrics = tmp_path / "metrics.json"
    call_command(
        "export_metrics",
        "--study",
        "demo",
        "--out",
        str(metrics),
        "--resamples",
        "20",
        "--label-models",
        "majority",
        stdout=io.StringIO(),
    )
    document = json.loads(metrics.read_text())
    assert document["schema"] == schema.STUDY_METRICS
    assert schema.validation_errors(document) == []

    folder = tmp_path / "report"
    call_command(
        "audit_report",
        "--study",
        "demo",
        "--out",
        str(folder),
        "--resamples",
        "20",
        "--permutations",
        "20",
        stdout=io.StringIO(),
    )
    report = json.loads((folder / "report.json").read_text())
    assert {"people", "data_statement", "legal"} <= set(report)
    assert schema.validation_errors(report) == []
    call_command("verify_report", str(folder), stdout=io.StringIO())

    report["counts"]["n_items"] = "many"
    (folder / "report.json").write_text(json.dumps(report))
    with pytest.raises(CommandError, match="mismatch"):
        out = io.StringIO()
        try:
            call_command("verify_report", str(folder), stdout=out)
        finally:
            assert "schema: report.json: $.counts.n_items: 'many' is not of type 'integer'" in (
                out.getvalue()
            )
