"""The PPI / judge-fairness display (issue 22 §2): report section 7, its lead sentences, the
"do not report" rule, written against fixture sections in the export's shapes."""

from __future__ import annotations

import json

import pytest

from scoring.report.dataset import audit_report
from scoring.report.executive_summary import executive_summary
from scoring.report.ppi_tables import display_ppi
from scoring.report.text import judge_only_cautions, ppi_findings
from scoring.stats.synthetic_study import synthetic_study
from tests.support.ppi_document import JUDGE, ppi_sections


@pytest.fixture(scope="module")
def plain_report():
    annotations, judgments = synthetic_study(n_items=90, n_annotated_items=30, overlap=2, seed=3)
    document = audit_report(
        annotations,
        judgments,
        study={"slug": "s", "name": "S", "mode": "t2i"},
        n_resamples=20,
        n_permutations=20,
        seed=1,
    )
    document = json.loads(json.dumps(document))
    document.pop("ppi", None)
    document.pop("judge_error", None)
    return document


@pytest.fixture
def report(plain_report):
    return {**plain_report, **ppi_sections()}


def test_cautions_follow_the_differential_test_and_the_bias_interval(report):
    cautions = judge_only_cautions(report)
    assert {(c["outcome"], c["attribute"]) for c in cautions} == {
        ("combined", "culture"),
        ("erasure", "culture"),
    }
    (erasure,) = [c for c in cautions if c["outcome"] == "erasure"]
    assert erasure["because"] == (
        "its error differs across the values (p Holm < 0.001); its rate is off the PPI rate "
        "for Nigerian by 0.170 (simultaneous 95% CI 0.060 to 0.270)"
    )
    # The warning alone is enough: gender's error does not differ, but a rate is off.
    gender = report["ppi"][JUDGE]["erasure"]["judge_bias"]["gender"]
    gender["per_value"]["male"].update(ci_low=0.01, ci_high=0.05)
    gender["warning"] = True
    flagged = {(c["outcome"], c["attribute"]) for c in judge_only_cautions(report)}
    assert ("erasure", "gender") in flagged


def test_findings_lead_with_the_ppi_delta_and_name_the_differential_attribute(report):
    lines = ppi_findings(report)
    assert lines[0].startswith(f"Judge {JUDGE} corrected by the human labels (PPI): combined Δ")
    assert "culture = 0.288 (95% CI 0.132 to 0.432)" in lines[0]
    assert any("errs differently across culture values on erasure" in line for line in lines)
    assert not any("errs differently across gender" in line for line in lines)
    assert any(
        line.startswith(f"Do not report judge {JUDGE}'s own erasure Δ for culture")
        for line in lines
    )
    summary = executive_summary(report)
    assert summary["findings"][: len(lines)] == lines


def test_without_the_sections_nothing_shows(plain_report):
    assert ppi_findings(plain_report) == []
    assert display_ppi(plain_report) == {"judges": [], "findings": [], "present": False}
    assert not executive_summary(plain_report)["findings"][0].startswith("Judge")


def test_display_rows_carry_intervals_reasons_and_the_error_per_value(report):
    (judge,) = display_ppi(report)["judges"]
    erasure = {o["outcome"]: o for o in judge["outcomes"]}["erasure"]
    culture = {row["attribute"]: row for row in erasure["deltas"]}["culture"]
    assert culture["delta"]["text"] == "0.240 [0.110, 0.360]"
    assert culture["bias"]["text"] == "Nigerian: 0.170 [0.060, 0.270]" and culture["do_not_report"]
    assert culture["bias"]["verdict"] == "warning" and culture["bias"]["reason"] == ""
    rates = {(r["attribute"], r["value"]): r for r in erasure["rates"]}
    assert rates[("culture", "Nigerian")]["rate"]["text"] == "32.0% [22.0%, 43.0%]"
    assert rates[("culture", "Nigerian")]["lambda"] == "0.65"
    # The reason goes under the table, the cell keeps a mark (issue 36 §4).
    assert rates[("gender", "nonbinary")]["rate"] == {
        "text": "—",
        "reason": "no labelled item for this value",
        "mark": "a",
    }
    assert {"mark": "a", "text": "no labelled item for this value"} in erasure["rate_notes"]
    errors = {t["attribute"]: t for t in erasure["errors"]}
    nigerian = {v["value"]: v for v in errors["culture"]["values"]}["Nigerian"]
    assert nigerian["fpr"]["text"] == "25.0% [17.0%, 35.0%]" and errors["culture"]["differential"]
    assert errors["neutral"]["reason"] == "fewer than two attribute values"
    assert errors["neutral"]["verdict"] == "Not tested: fewer than two attribute values."


def test_the_flag_reads_with_its_power_whether_it_fires_or_not(report):
    (judge,) = display_ppi(report)["judges"]
    erasure = {o["outcome"]: o for o in judge["outcomes"]}["erasure"]
    errors = {t["attribute"]: t for t in erasure["errors"]}
    assert errors["culture"]["verdict"] == (
        "Differential error detected (p Holm < 0.001; FNR p 0.600, FPR p < 0.001); with 80% "
        "power this study detects an FNR difference of 0.42 (0.10 to 0.52; 12 and 13 items) and "
        "an FPR difference of 0.18 (0.08 to 0.26; 26 and 27 items) between two values."
    )
    # Silent, with one rate's power undefined: the sentence says so and why.
    assert errors["gender"]["verdict"] == (
        "No differential error detected (p Holm 0.710; FNR p 0.355); this study could detect an "
        "FNR difference of 0.45 (0.10 to 0.55; 14 and 16 items) between two values with 80% "
        "power (FPR: fewer than two attribute values with a reference-negative item)."
    )


def test_a_partial_document_does_not_break_the_display(plain_report):
    partial = {
        **plain_report,
        "ppi": {JUDGE: {"erasure": {"delta": {"culture": None}}}},
        "judge_error": {JUDGE: {"erasure": {"culture": {"per_value": {}}}}},
    }
    shown = display_ppi(partial)
    assert (
        shown["present"] and shown["judges"][0]["outcomes"][0]["deltas"][0]["delta"]["text"] == "—"
    )


def test_report_html_has_section_9_in_the_contents(report, plain_report):
    from scoring.report.render import render_report_html

    html = render_report_html(report, with_figures=False)
    title = "9. Judges and humans combined: prediction-powered estimates and judge fairness"
    assert html.count(title) == 2  # the contents and the heading
    assert 'id="ppi"' in html and "10. Stated limitations" in html and "11. Provenance" in html
    assert "do not report" in html and "32.0% [22.0%, 43.0%]" in html
    assert "False positives [95% CI]" in html and "25.0% [17.0%, 35.0%]" in html
    # The flag's sentence, silent (gender) and fired (culture), each with the study's power.
    assert "No differential error detected (p Holm 0.710; FNR p 0.355); this study could" in html
    assert "an FNR difference of 0.42 (0.10 to 0.52; 12 and 13 items)" in html
    empty = render_report_html(plain_report, with_figures=False)
    assert title in empty and "No judge has human labels on the items it labelled" in empty
