"""The demo study's report.json and study export, scanned whole: every interval holds its
estimate, and every Δ interval agrees with the p-value printed beside it (p < 1 − confidence
exactly when the interval excludes 0; both null together), in the report's disparity rows and
in every rates block of both documents (docs/metrics.md, "Test of Δ")."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotations.models import Study
from scoring.metrics.document import metrics_document
from scoring.report.documents import report_document
from scoring.stats.interval_checks import count_intervals, intervals_excluding_estimate

pytestmark = pytest.mark.django_db

# Enough resamples for the max-t band to resolve p near 1 − confidence; few enough for a test.
N_RESAMPLES = 400


@pytest.fixture(scope="module")
def built():
    return {}


@pytest.fixture
def demo_documents(built):
    """``(report, export)`` of the demo study, built once per module (the database is rolled
    back after each test; the documents are plain data and outlive it)."""
    if not built:
        call_command("seed_demo", stdout=io.StringIO())
        study = Study.objects.get(slug="demo")
        built["report"] = report_document(study=study, n_resamples=N_RESAMPLES)
        built["export"] = metrics_document(study=study, n_resamples=N_RESAMPLES)
    return built["report"], built["export"]


def rate_blocks(rates: dict):
    """``(path, block)`` of every ``rates.<source>.<measure>.<attribute>`` block."""
    for source, measures in rates.items():
        for measure, attributes in measures.items():
            for attribute, block in attributes.items():
                yield f"rates.{source}.{measure}.{attribute}", block


def disagreements(items, *, p_key: str, confidence: float) -> list[str]:
    """Where a Δ interval and its p say different things; ``items`` are ``(path, block)``."""
    alpha = 1.0 - confidence
    out = []
    for path, block in items:
        if "delta_ci_low" not in block or p_key not in block:
            continue
        low, high, p = block["delta_ci_low"], block["delta_ci_high"], block[p_key]
        if (low is None) != (p is None) or (low is None) != (high is None):
            out.append(f"{path}: interval [{low}, {high}] and p = {p} not null together")
        elif low is not None and (low > 0) != (p < alpha):
            out.append(f"{path}: Δ interval [{low}, {high}] but p = {p} (α = {alpha:g})")
    return out


def test_every_interval_of_the_demo_documents_holds_its_estimate(demo_documents):
    report, export = demo_documents
    for document in (report, export):
        assert count_intervals(document) > 0
        assert intervals_excluding_estimate(document) == []


def test_every_delta_interval_agrees_with_its_p_value(demo_documents):
    report, export = demo_documents
    confidence = report["settings"]["confidence"]
    rows = [
        (f"disparities[{row['source']}.{row['measure']}.{row['attribute']}]", row)
        for row in report["disparities"]
    ]
    assert sum(row.get("delta_p") is not None for _, row in rows) > 0
    assert disagreements(rows, p_key="delta_p", confidence=confidence) == []
    assert (
        disagreements(rate_blocks(report["rates"]), p_key="delta_p_value", confidence=confidence)
        == []
    )
    blocks = list(rate_blocks(export["rates"]))
    assert sum(block.get("delta_p_value") is not None for _, block in blocks) > 0
    assert (
        disagreements(blocks, p_key="delta_p_value", confidence=export["meta"]["confidence"]) == []
    )
