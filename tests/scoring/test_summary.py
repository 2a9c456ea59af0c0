"""The staff summary (scoring.metrics.headlines): Landis & Koch bands at their published boundaries, and
the summary's picks from hand-made metrics and report documents. Django-free."""

import pytest

from scoring.metrics import headlines as summary
from scoring.stats.agreement import agreement_band


@pytest.mark.parametrize(
    ("value", "words"),
    [
        # Landis & Koch (1977), p. 165: <0 poor, 0-.20 slight, .21-.40 fair, .41-.60 moderate,
        # .61-.80 substantial, .81-1 almost perfect.
        (-0.05, "poor"),
        (0.0, "slight"),
        (0.20, "slight"),
        (0.21, "fair"),
        (0.40, "fair"),
        (0.41, "moderate"),
        (0.60, "moderate"),
        (0.61, "substantial"),
        (0.80, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, None),
        (float("nan"), None),
    ],
)
def test_agreement_band_follows_landis_and_koch(value, words):
    assert agreement_band(value) == words


def test_stat_text_gives_the_interval_or_the_reason_it_has_none():
    with_ci = {"alpha": 0.5, "alpha_ci_low": 0.25, "alpha_ci_high": 0.75}
    assert summary.stat_text(with_ci, "alpha") == {
        "value": 0.5,
        "text": "0.500 [0.250, 0.750]",
        "reason": "",
        "ci_reason": "",
    }
    degenerate = {
        "delta": 0.188,
        "delta_ci_low": None,
        "delta_ci_high": None,
        "delta_ci_reason": "one base prompt per domain",
    }
    shown = summary.stat_text(degenerate, "delta")
    assert shown["text"] == "0.188" and shown["ci_reason"] == "one base prompt per domain"
    undefined = summary.stat_text({"kappa": None, "kappa_reason": "one label only"}, "kappa")
    assert undefined == {"value": None, "text": "—", "reason": "one label only", "ci_reason": ""}


def disparity(source, delta, *, n=100, ci=True, p_holm=0.5, flagged=False, **extra):
    return {
        "source": source,
        "measure": "refusal",
        "attribute": f"a{delta}",
        "n": n,
        "delta": delta,
        "delta_ci_low": (delta - 0.1) if ci and delta else None,
        "delta_ci_high": (delta + 0.1) if ci and delta else None,
        "max_value": "x",
        "min_value": "y",
        "delta_p_holm": p_holm,
        "flagged": flagged,
        **extra,
    }


def test_largest_disparities_are_the_human_ones_largest_first():
    report = {
        "disparities": [
            disparity("auto:judge@1", 0.9),
            disparity("human", 0.2),
            disparity("human", 0.4),
            disparity("human", None),
            *[disparity("human", 0.01 * i) for i in range(1, 8)],
        ]
    }
    rows = summary.largest_disparities(report, limit=3)
    assert [row["delta"]["value"] for row in rows] == [0.4, 0.2, 0.07]
    assert {row["source"] for row in rows} == {"human"}
    # Without human labels, the judges' largest.
    only_judges = {"disparities": [disparity("auto:j@1", 0.3), disparity("auto:k@1", 0.5)]}
    assert [r["source"] for r in summary.largest_disparities(only_judges)] == [
        "auto:k@1",
        "auto:j@1",
    ]


def test_human_rows_come_before_the_judges_in_their_own_order():
    rows = [
        {"source": "auto:a@1", "i": 0},
        {"source": "human", "i": 1},
        {"source": "auto:b@1", "i": 2},
        {"source": "human", "i": 3},
    ]
    assert [row["i"] for row in summary.human_first(rows)] == [1, 3, 0, 2]


def test_warnings_name_what_needs_action():
    metrics = {
        "agreement": {
            "inter_annotator": {
                "cue": {
                    "krippendorff_alpha": 0.7,
                    "krippendorff_alpha_ci_low": None,
                    "krippendorff_alpha_ci_reason": "fewer than 5 pairable items",
                }
            }
        }
    }
    report = {
        "settings": {"min_n": 30},
        "disparities": [
            disparity("human", 0.188, ci=False, delta_ci_reason="one base prompt per domain"),
            disparity("human", 0.1, ci=False, delta_ci_reason="one base prompt per domain"),
            disparity("human", 0.3, n=12),
        ],
    }
    validation = [
        {"judge": "good@1", "question": "cue", "scope": "overall", "n": 50, "cohen_kappa": 0.85},
        {"judge": "bad@1", "question": "cue", "scope": "overall", "n": 50, "cohen_kappa": 0.3},
        {"judge": "none@1", "question": "cue", "scope": "overall", "n": 0, "cohen_kappa": None},
        {"judge": "bad@1", "question": "cue", "scope": "attribute", "n": 5, "cohen_kappa": 0.0},
    ]
    annotators = [
        {"username": "quick", "done": 20, "too_fast": 5},
        {"username": "careful", "done": 20, "too_fast": 1},
        {"username": "new", "done": 0, "too_fast": 0},
    ]
    found = summary.warnings(
        metrics=metrics,
        report=report,
        validation_rows=validation,
        annotators=annotators,
        flags_waiting=2,
    )
    kinds = [w["kind"] for w in found]
    # none@1 has no human answer to compare with yet: no warning (issue 21)
    assert kinds == ["flags", "too_fast", "judge", "degenerate", "degenerate", "small_n"]
    texts = " | ".join(w["text"] for w in found)
    assert "2 item(s) flagged" in texts and "quick: 5 of 20 answers (25%)" in texts
    assert "bad@1" in texts and "κ = 0.300 (fair)" in texts and "none@1" not in texts
    assert "good@1" not in texts and "careful" not in texts
    assert "2 statistic(s) have no interval: one base prompt per domain" in texts
    assert "1 statistic(s) have no interval: fewer than 5 pairable items" in texts
    assert "1 disparity row(s) rest on fewer than 30 answers" in texts
    quiet = summary.warnings(
        metrics={}, report={"disparities": []}, validation_rows=[], annotators=[], flags_waiting=0
    )
    assert quiet == []
    unstated = summary.warnings(
        metrics={},
        report={"disparities": []},
        validation_rows=[],
        annotators=[],
        flags_waiting=0,
        audit_context_missing=["system kind", "annotator pay"],
    )
    assert [w["kind"] for w in unstated] == ["audit_context"]
    assert unstated[0]["text"].startswith("Audit context not stated: system kind, annotator pay.")


def test_no_judge_warning_before_any_human_answer_and_undefined_is_not_disagreement():
    """Issue 21 §1.4: the pipeline demo showed "disagrees with the humans … over 0 items"."""
    from scoring.metrics.headlines import warnings

    def texts(rows):
        found = warnings(
            metrics={},
            report={"disparities": [], "settings": {}},
            validation_rows=rows,
            annotators=[],
            flags_waiting=0,
        )
        return [w["text"] for w in found if w["kind"] == "judge"]

    row = {"scope": "overall", "judge": "demo-rules", "question": "hard_refusal"}
    assert texts([{**row, "n": 0, "cohen_kappa": None}]) == []
    assert texts([{**row, "n": 12, "cohen_kappa": None}]) == [
        "demo-rules cannot be checked against the humans on hard_refusal: κ is undefined over 12 items."
    ]
    assert "disagrees" in texts([{**row, "n": 12, "cohen_kappa": 0.1}])[0]
