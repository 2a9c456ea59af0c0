"""Every "[95% CI]" label of the report prints the confidence level the report was computed at
(docs/metrics.md, "Conventions": the level is a parameter everywhere)."""

import re

import pytest

from scoring.report.dataset import audit_report
from scoring.report.display import confidence, confidence_label, level
from scoring.report.render import render_report_html
from scoring.stats.synthetic_study import synthetic_study


@pytest.mark.parametrize(
    ("value", "text"), [(0.95, "95%"), (0.9, "90%"), (0.975, "97.5%"), (0.99, "99%")]
)
def test_a_level_prints_as_a_percentage(value, text):
    assert level(value) == text


def test_the_level_is_read_from_the_report_or_the_export():
    assert confidence({"settings": {"confidence": 0.9}}) == 0.9
    assert confidence({"meta": {"confidence": 0.8}}) == 0.8
    assert confidence_label({"settings": {"confidence": 0.9}}) == "90%"


def test_a_report_built_at_90_percent_labels_its_intervals_90_percent():
    # Harmful controls too, so the safety section and its interaction sentences are printed.
    annotations, judgments = synthetic_study(
        n_items=300, n_annotated_items=100, overlap=2, seed=3, harmful_share=0.3
    )
    report = audit_report(
        annotations,
        judgments,
        study={"slug": "level", "name": "Level", "mode": "t2i"},
        n_resamples=30,
        confidence=0.9,
    )
    html = render_report_html(report)
    assert "95%" not in html, re.findall(r".{60}95%.{20}", html)[:5]
    assert "95 %" not in html
    # The tables' headings, the figures' axis labels and the sentences all say 90%.
    assert html.count("90%") >= 10
    assert "[90% CI]" in html
    assert "90% CI" in html
