"""The executive summary (Django-free): every sentence is built from report.json's numbers, so a
changed number changes the sentence; degenerate intervals, small groups and power are stated."""

from __future__ import annotations

import copy
import json

import pytest

from scoring.report.dataset import audit_report
from scoring.report.executive_summary import disparity_sentence, executive_summary
from scoring.stats.hypothesis_tests import minimum_detectable_h
from scoring.stats.synthetic_study import synthetic_study


@pytest.fixture(scope="module")
def report():
    annotations, judgments = synthetic_study(n_items=360, n_annotated_items=120, overlap=2, seed=2)
    document = audit_report(
        annotations,
        judgments,
        study={
            "slug": "synthetic",
            "name": "Synthetic",
            "mode": "t2i",
            "synthetic_demo": True,
            "annotations_from": "2026-01-02T10:00:00+00:00",
            "annotations_to": "2026-01-09T10:00:00+00:00",
        },
        design={
            "generators": [{"generator": "gen-x", "mode": "t2i", "n_items": 360}],
            "judges": [
                {"judge": "vlm-judge", "judge_version": "1", "n_judgments": 360, "n_errors": 2}
            ],
            "taxonomy": [
                {"attribute": "culture", "value": v, "is_neutral": False} for v in ("A", "B", "C")
            ],
        },
        generated_at="2026-01-10T00:00:00+00:00",
        n_resamples=50,
        n_permutations=50,
        seed=1,
    )
    return json.loads(json.dumps(document))  # what report.json holds


def test_summary_has_every_part_and_is_plain_text(report):
    summary = executive_summary(report)
    assert set(summary) == {"audited", "findings", "evidence", "verdicts"}
    text = " ".join(summary["audited"] + summary["findings"] + summary["evidence"])
    assert "SYNTHETIC DEMO" in text and "gen-x (t2i, 360 items)" in text
    assert "vlm-judge version 1 (360 judgments, 2 failed and left out)" in text
    assert "annotations submitted 2026-01-02 to 2026-01-09" in text
    assert "culture (3 values)" in text
    assert "None" not in text and "nan" not in text.lower().split()
    attributes = {row["attribute"] for row in report["disparities"]}
    assert {v["attribute"] for v in summary["verdicts"]} == attributes
    assert {v["verdict"] for v in summary["verdicts"]} <= {
        "flagged",
        "not_flagged",
        "not_assessable",
    }


def test_headline_disparity_follows_the_numbers(report):
    row = copy.deepcopy(max(report["disparities"], key=lambda r: r.get("delta") or 0))
    row.update(delta=0.4321, delta_ci_low=0.1, delta_ci_high=0.6, delta_p_holm=0.004, flagged=True)
    sentence = disparity_sentence(row, level="95%")
    assert "Δ = 0.43" in sentence and "95% CI 0.10 to 0.60" in sentence
    assert "Holm-adjusted 0.004" in sentence and "flagged" in sentence
    row.update(delta_ci_low=None, delta_ci_high=None, delta_ci_reason="fewer than 5 base prompts")
    assert "no interval: fewer than 5 base prompts" in disparity_sentence(row, level="95%")


def test_flagged_disparities_lead_the_findings_and_the_verdict(report):
    changed = copy.deepcopy(report)
    target = min(changed["disparities"], key=lambda r: r.get("delta") or 1)
    target.update(flagged=True, delta=0.05, delta_p_holm=0.01)
    summary = executive_summary(changed)
    # The PPI sentences come first where humans validated a judge (docs/report.md); then the
    # flagged disparities, before anything else.
    findings = summary["findings"]
    first = next(i for i, f in enumerate(findings) if "(PPI)" not in f and "Do not report" not in f)
    assert findings[first].startswith("1 of ")
    assert target["measure"] in findings[first + 1] and "flagged" in findings[first + 1]
    verdict = next(v for v in summary["verdicts"] if v["attribute"] == target["attribute"])
    assert verdict["verdict"] == "flagged" and "Holm p = 0.010" in verdict["text"]


def test_degenerate_intervals_and_untestable_attributes_are_stated(report):
    changed = copy.deepcopy(report)
    for row in changed["disparities"]:
        row.update(delta_ci_low=None, delta_ci_high=None, delta_ci_reason="too few clusters")
    gone = changed["disparities"][0]["attribute"]
    for row in changed["disparities"]:
        if row["attribute"] == gone:
            row.update(
                delta=None,
                delta_reason="fewer than two values with data",
                delta_p=None,
                delta_p_holm=None,
                flagged=False,
            )
    summary = executive_summary(changed)
    evidence = " ".join(summary["evidence"])
    defined = [r for r in changed["disparities"] if r["delta"] is not None]
    assert f"{len(defined)} of {len(defined)} Δ intervals are undefined" in evidence
    assert "too few clusters" in evidence
    verdict = next(v for v in summary["verdicts"] if v["attribute"] == gone)
    assert verdict["verdict"] == "not_assessable"
    assert "fewer than two values with data" in verdict["text"]


def test_power_sentence_uses_the_smallest_and_median_group(report):
    sizes = sorted(v["n"] for row in report["disparities"] for v in row["values"] if v["n"])
    power = next(s for s in executive_summary(report)["evidence"] if s.startswith("Power"))
    assert f"smallest group has n = {sizes[0]}" in power
    assert f"median group n = {sizes[len(sizes) // 2]}" in power
    assert f"h ≥ {minimum_detectable_h(sizes[len(sizes) // 2]).value:.2f}" in power


def test_empty_study_says_nothing_was_examined():
    empty = {
        "study": {"slug": "s", "name": "S"},
        "settings": {"alpha": 0.05, "min_n": 30},
        "counts": {},
        "disparities": [],
        "regression": [],
        "validation": {"human_vs_auto": [], "inter_annotator": {"overall": {}}},
        "provenance": {"generated_at": "2026-01-01"},
    }
    summary = executive_summary(empty)
    assert summary["findings"] == ["No annotations or judgments yet: nothing has been examined."]
    assert summary["verdicts"] == []
    assert "No generator is recorded." in summary["audited"]
