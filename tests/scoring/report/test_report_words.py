"""Issue 36 §4: the report's words where the numbers are degenerate, and its tables' notes.

Δ = 0 names no highest value; a one-value attribute says why it has no Δ and compares its value
with the neutral baseline; prose names sources and outcomes as a reader would; a reason in a
cell is a mark with the reason once under the table; Fleiss' κ shows the items it stands on; the
summary lists the PPI Δ of every judge its warning names."""

import re

from scoring.metrics.headlines import SUMMARY_CAUTIONS, largest_disparities, ppi_headline
from scoring.report import display, study_tables
from scoring.report.executive_summary import disparity_sentence, evidence
from scoring.report.ppi_tables import display_ppi

ZERO_WIDTH_REASON = "every label in the cell is the same class"


def _row(values, *, delta, max_value, min_value, **extra):
    return {
        "source": "auto:sim-vlm-b@1",
        "measure": "combined",
        "attribute": "religion",
        "n": 20,
        "delta": delta,
        "delta_ci_low": None,
        "delta_ci_high": None,
        "max_value": max_value,
        "min_value": min_value,
        "delta_p": None,
        "delta_p_holm": None,
        "delta_p_bh": None,
        "flagged": False,
        "neutral_rate": 0.12,
        "values": values,
        "pairwise_tests": [],
        **extra,
    }


TIED = _row(
    [{"value": "hijab", "n": 10, "rate": 0.2}, {"value": "kippah", "n": 10, "rate": 0.2}],
    delta=0.0,
    max_value="hijab",
    min_value="hijab",
    delta_ci_reason="the interval has zero width",
)
ONE_VALUE = _row(
    [
        {
            "value": "hijab",
            "n": 10,
            "successes": 4,
            "rate": 0.352,
            "ci_low": 0.1,
            "ci_high": 0.6,
            "ratio_to_neutral": 2.93,
            "ratio_to_neutral_ci_low": 1.2,
            "ratio_to_neutral_ci_high": 5.1,
        }
    ],
    delta=None,
    max_value=None,
    min_value=None,
    delta_reason="fewer than two attribute values with a defined rate",
)


def test_where_delta_is_zero_no_value_is_named_highest():
    assert display.highest_lowest("hijab", "hijab", 0.0) == "no value is higher (all equal)"
    assert display.highest_lowest("Nigerian", "US", 0.2) == "Nigerian · US"
    summary = study_tables.disparity_summary({"disparities": [TIED]})[0]
    assert (summary["max_value"], summary["min_value"]) == (
        "no value is higher",
        "no value is lower",
    )
    sentence = disparity_sentence(TIED, level="95%")
    assert "no value is higher" in sentence and "highest hijab" not in sentence
    shown = largest_disparities({"disparities": [TIED]})[0]
    assert shown["extremes"] == "no value is higher (all equal)"


def test_a_one_value_attribute_says_why_and_compares_with_the_neutral_baseline():
    table = study_tables.summary_table(study_tables.disparity_summary({"disparities": [ONE_VALUE]}))
    row = table["rows"][0]
    assert row["delta"] == display.DASH and row["delta_mark"] == "a"
    (note,) = table["notes"]
    assert note["text"] == (
        "fewer than two attribute values with a defined rate: hijab 35.2% against the neutral "
        "baseline's 12.0% (ratio 2.93 [1.20, 5.10])"
    )
    alone = {**ONE_VALUE, "neutral_rate": None}
    assert study_tables.delta_note(alone).endswith(
        "hijab 35.2%; the study has no neutral baseline to compare it with"
    )


def test_prose_names_judges_and_outcomes_not_internal_ids():
    report = {
        "settings": {"min_n": 30, "alpha": 0.05},
        "clusters": {},
        "study": {},
        "regression": [],
        "disparities": [
            {
                "source": "auto:sim-vlm-b@1",
                "measure": "combined",
                "attribute": "culture",
                "values": [{"value": "Nigerian", "n": 5}, {"value": "US", "n": 40}],
            }
        ],
    }
    text = " ".join(evidence(report))
    assert "judge sim-vlm-b@1 · combined outcome · culture: Nigerian" in text
    assert "auto:" not in text and "culture=" not in text


def test_table_notes_say_each_reason_once_with_a_letter_mark():
    notes = display.TableNotes()
    assert [notes.mark("x"), notes.mark(""), notes.mark("y"), notes.mark("x")] == [
        "a",
        "",
        "b",
        "a",
    ]
    assert notes.items == [{"mark": "a", "text": "x"}, {"mark": "b", "text": "y"}]


def test_the_agreement_table_shows_the_items_fleiss_kappa_stands_on():
    block = {"n_items": 99, "n_annotators": 5, "fleiss_kappa": 0.681, "fleiss_kappa_n_items": 67}
    row = study_tables._agreement_row("overall", "all", "cue", block)
    assert row["n_items"] == 99 and row["fleiss_items"] == "67 items"
    assert (
        study_tables._agreement_row("overall", "all", "cue", {"n_items": 4})["fleiss_items"] == ""
    )


def _ppi_document(estimates: dict[str, float]) -> dict:
    """One judge, one outcome, a PPI Δ per attribute; religion's error differs by value, so its
    judge-only Δ must not be reported."""
    return {
        "settings": {"confidence": 0.95},
        "ppi": {
            "judge-a@1": {
                "combined": {
                    "delta": {
                        attribute: {
                            "estimate": estimate,
                            "ci_low": None,
                            "ci_high": None,
                            "ci_reason": ZERO_WIDTH_REASON,
                            "max_value": "hijab",
                            "min_value": "kippah" if estimate else "hijab",
                        }
                        for attribute, estimate in estimates.items()
                    }
                }
            }
        },
        "judge_error": {
            "judge-a@1": {
                "combined": {"religion": {"differential": True, "p_holm": 0.01, "per_value": {}}}
            }
        },
    }


def test_the_summary_lists_the_ppi_delta_of_every_attribute_its_warning_names():
    estimates = {f"attribute{i}": 0.5 - i / 100 for i in range(6)} | {"religion": 0.04}
    headline = ppi_headline(_ppi_document(estimates), limit=5)
    named = {(row["judge"], row["outcome"], row["attribute"]) for row in headline["cautions"]}
    assert ("judge-a@1", "combined", "religion") in named and SUMMARY_CAUTIONS >= 1
    listed = {(row["judge"], row["outcome"], row["attribute"]) for row in headline["rows"]}
    assert named <= listed
    assert len(headline["rows"]) == 5  # the 4 largest, then religion in place of the fifth
    assert headline["rows"][-1]["attribute"] == "religion"


def test_ppi_table_reasons_are_marks_with_notes_under_the_table():
    (judge,) = display_ppi(_ppi_document({"religion": 0.0, "culture": 0.3}))["judges"]
    (outcome,) = judge["outcomes"]
    cells = [row["delta"] for row in outcome["deltas"]]
    assert {cell["mark"] for cell in cells} == {"a"}  # one reason, said once
    assert outcome["delta_notes"] == [{"mark": "a", "text": f"no interval: {ZERO_WIDTH_REASON}"}]
    tied = next(row for row in outcome["deltas"] if row["attribute"] == "religion")
    assert tied["extremes"] == "no value is higher (all equal)"
    assert not any(re.search("hijab · hijab", row["extremes"]) for row in outcome["deltas"])


def test_figure_reasons_are_drawn_whole_never_cut_short():
    from scoring.report import plotting
    from scoring.report.figures import forest

    reason = (
        "quasi-complete separation: attribute_value = kippah has no refusal in any of its "
        "12 items, so its coefficient runs off to minus infinity and the model is not fitted"
    )
    report = {"settings": {"confidence": 0.9}, "rates": {"human": {"refusal": {}}}}
    base = {"source": "human", "outcome": "refusal", "attribute": "religion", "method": "cluster"}
    rows = [
        {**base, "reference": "hijab", "value": None, "reason": reason},
        {
            **base,
            "reference": "hijab",
            "value": "none",
            "odds_ratio": 2.0,
            "ci_low": 1.1,
            "ci_high": 3.0,
            "reason": "",
        },
    ]
    spec = {"source": "human", "detail": "refusal", "title": "odds ratios of refusal — human"}
    with plotting.figure_rc({"svg.fonttype": "none"}):  # text stays text, as in the report
        svg = forest.odds(report, rows, spec, "svg").decode()
    drawn = " ".join(re.findall(r">([^<>]+)</text>", svg))
    assert "…" not in drawn
    for word in f"undefined: {reason}".split():
        assert word in drawn, word
    assert "90% CI" in drawn
