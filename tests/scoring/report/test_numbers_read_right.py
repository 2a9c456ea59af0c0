"""Issue 21 §1.2: numbers that contradicted each other or read as internals."""

import re

import pytest

from scoring.metrics.headlines import agreement_headline, inter_annotator_rows
from scoring.report import display, study_tables
from scoring.report.executive_summary import evidence


def _report(sizes: list[int], *, min_n: int = 30) -> dict:
    values = [{"value": f"v{i}", "n": n} for i, n in enumerate(sizes)]
    return {
        "settings": {"min_n": min_n, "alpha": 0.05},
        "clusters": {},
        "study": {},
        "disparities": [
            {"source": "human", "measure": "refusal", "attribute": "culture", "values": values}
        ],
        "regression": [],
    }


@pytest.mark.parametrize(
    "sizes, expected",
    [
        ([5] * 92 + [40] * 4, "92 of the 96 rates rest on fewer than 30 observations"),
        ([5] + [40] * 3, "1 of the 4 rates rests on fewer than 30 observations"),
        ([5, 6, 7], "All 3 rates rest on fewer than 30 observations"),
        ([5], "The only rate rests on fewer than 30 observations"),
    ],
)
def test_the_small_sample_sentence_reads_as_english(sizes, expected):
    texts = evidence(_report(sizes))
    assert any(expected in text for text in texts), texts
    assert not any(re.search(r"rates of \d", text) for text in texts)


BLOCK = {
    "n_items": 99,
    "n_annotators": 5,
    "fleiss_kappa": 0.681,
    "fleiss_kappa_n_items": 67,
    "fleiss_kappa_annotations_per_item": 3,
    "krippendorff_alpha": 0.7,
}


def test_fleiss_kappa_names_the_items_it_rests_on_wherever_it_is_shown():
    metrics = {"agreement": {"inter_annotator": {"cue": BLOCK}}}
    scope = "on 67 of 99 items, those with 3 annotations each"
    assert agreement_headline(metrics)[0]["fleiss_scope"] == scope
    assert inter_annotator_rows(metrics)[0]["fleiss_scope"] == scope
    row = study_tables._agreement_row("overall", "all", "cue", BLOCK)
    assert row["fleiss"] == "0.681" and row["fleiss_scope"] == scope  # the report's row note
    same = {**BLOCK, "fleiss_kappa_n_items": 99}
    assert display.fleiss_scope(same) == ""


def test_a_zero_width_interval_is_never_printed_as_an_interval():
    assert (
        display.with_interval(0.0, 0.0, 0.0)
        == "0.000 (no interval: every resample gave the same value)"
    )
    assert display.with_interval(0.2, 0.1, 0.3) == "0.200 [0.100, 0.300]"
    assert "[" not in display.ratio_with_interval(1.0, 1.0, 1.0)
    assert display.with_interval(0.2, None, None) == "0.200"


@pytest.mark.django_db
def test_the_study_data_fingerprint_is_a_sha256(answered_study):
    from annotations import selectors

    fingerprint = selectors.study_data_fingerprint(study=answered_study)
    assert re.fullmatch(r"[0-9a-f]{64}", fingerprint)


@pytest.mark.django_db
def test_the_annotator_quality_page_never_prints_question_marks_for_a_missing_interval():
    from django.template.loader import render_to_string

    from scoring.stats.result import Stat

    no_ci = Stat(value=0.41, n=12, extra={"ci_reason": "one label only"})
    text = render_to_string("scoring/partials/quality_stat.html", {"stat": no_ci})
    assert "?" not in text and "[" not in text and "no interval: one label only" in text
    zero = Stat(value=0.5, ci_low=0.5, ci_high=0.5, n=12)
    assert "[" not in render_to_string("scoring/partials/quality_stat.html", {"stat": zero})
    shown = Stat(value=0.5, ci_low=0.3, ci_high=0.7, n=12)
    assert "[0.30–0.70]" in render_to_string("scoring/partials/quality_stat.html", {"stat": shown})


def test_the_agreement_table_has_no_rows_of_zeros_for_scopes_without_items():
    empty = {"cue": {"n_items": 0, "n_annotators": 1}, "hard_refusal": {"n_items": 0}}
    section = {
        "overall": {"cue": BLOCK},
        "by_attribute": {"Korean": {"cue": BLOCK}},
        "by_annotator_group": {"Korean": empty, "US": {"cue": BLOCK}},
    }
    rows = study_tables._inter_annotator(section)
    assert [(r["scope"], r["name"]) for r in rows] == [
        ("overall", "all"),
        ("attribute", "Korean"),
        ("annotator group", "US"),
    ]
    assert study_tables._scopes_without_items(section) == ["annotator group Korean"]


def test_numbers_that_round_to_zero_print_without_a_sign():
    assert display.number(-1e-16) == "0.000"
    assert display.number(-0.0004) == "0.000"
    assert display.number(-0.0006) == "-0.001"
    assert display.number(None) == "—"
