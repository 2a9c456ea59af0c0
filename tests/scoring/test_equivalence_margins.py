"""δ per study and outcome (issue 31 §2): set with who and when, kept with its history, flagged
when set after human labels existed, and every Δ of the export and report.json read against
it with the same verdict words."""

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotations import selectors as annotation_selectors
from annotations.models import EquivalenceMargin
from scoring import selectors, services
from scoring.report.equivalence_table import equivalence_display
from scoring.report.schema import validation_errors
from scoring.stats.equivalence import DEFAULT_DELTA_MARGIN, VERDICTS, verdict_of
from tests.scoring.test_metrics import export, labelled_study  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


def test_a_margin_set_before_labels_is_not_flagged_and_a_later_change_is(
    study, staff_user, annotators
):
    margins = selectors.equivalence_margins(study=study)
    assert margins["erasure"] == {
        "delta_margin": DEFAULT_DELTA_MARGIN,
        "default": True,
        "set_by": None,
        "set_at": None,
        "set_after_data": False,
        "history": [],
    }
    first = services.equivalence_margin_set(
        study=study, outcome="erasure", delta_margin=0.04, user=staff_user
    )
    assert not first.labels_existed
    again = services.equivalence_margin_set(study=study, outcome="erasure", delta_margin=0.04)
    assert again is None and EquivalenceMargin.objects.count() == 1  # the same δ: no new row
    margin = selectors.equivalence_margins(study=study)["erasure"]
    assert (margin["delta_margin"], margin["set_by"], margin["set_after_data"]) == (
        0.04,
        staff_user.username,
        False,
    )
    assert selectors.equivalence_margins(study=study)["refusal"]["default"]


def test_a_margin_set_after_labels_is_kept_in_the_history_and_flagged(
    labelled_study,  # noqa: F811
    staff_user,
    tmp_path,
):
    services.equivalence_margin_set(study=labelled_study, outcome="erasure", delta_margin=0.05)
    services.equivalence_margin_set(
        study=labelled_study, outcome="erasure", delta_margin=0.2, user=staff_user
    )
    margin = selectors.equivalence_margins(study=labelled_study)["erasure"]
    assert [h["delta_margin"] for h in margin["history"]] == [0.05, 0.2]
    assert margin["delta_margin"] == 0.2 and margin["set_after_data"]
    assert all(h["labels_existed"] for h in margin["history"])


@pytest.mark.parametrize("outcome, delta", [("nope", 0.1), ("erasure", 0), ("erasure", 1.0)])
def test_an_unknown_outcome_or_a_margin_outside_0_1_is_refused(study, outcome, delta):
    with pytest.raises(ValidationError):
        services.equivalence_margin_set(study=study, outcome=outcome, delta_margin=delta)
    assert not EquivalenceMargin.objects.exists()


def test_a_new_margin_changes_the_data_fingerprint(study):
    """The cached documents are keyed by it: a new δ must not serve the old verdicts."""
    before = annotation_selectors.study_data_fingerprint(study=study)
    services.equivalence_margin_set(study=study, outcome="refusal", delta_margin=0.1)
    assert annotation_selectors.study_data_fingerprint(study=study) != before


def test_the_export_reads_every_delta_against_its_outcomes_margin(
    labelled_study,  # noqa: F811
    tmp_path,
):
    services.equivalence_margin_set(study=labelled_study, outcome="erasure", delta_margin=0.3)
    document = export(labelled_study, tmp_path)
    assert validation_errors(document) == []
    assert document["equivalence_margins"]["erasure"]["delta_margin"] == 0.3
    seen = 0
    for source, outcomes in document["rates"].items():
        for outcome, attributes in outcomes.items():
            for attribute, block in attributes.items():
                entry = document["equivalence"][source][outcome][attribute]
                margin = 0.3 if outcome == "erasure" else DEFAULT_DELTA_MARGIN
                assert entry["delta_margin"] == margin
                low, high = block.get("delta_ci_low"), block.get("delta_ci_high")
                if low is None or high is None:
                    assert entry["verdict"] is None and entry["reason"]
                    continue
                # The plain reading of the simultaneous interval, by hand.
                plain = (
                    "equivalent within δ"
                    if high < margin
                    else ("disparity shown" if low > 0 else "inconclusive")
                )
                assert entry["verdict"] == plain == verdict_of(low, high, margin)
                assert entry["max_abs_bound"] == high
                seen += 1
    # This small study's intervals are mostly undefined (too few base prompts); the hand check
    # of defined ones on a larger study is tests/scoring/stats/test_equivalence.py.
    assert set(document["equivalence"]) == set(document["rates"]) | {
        f"ppi:{judge}" for judge in document["ppi"]
    }
    assert {e["verdict"] for s in document["equivalence"].values() for o in s.values()
            for e in o.values()} <= {*VERDICTS, None}  # fmt: skip


def test_the_command_sets_and_lists_margins_in_one_line_each(study, annotators):
    call_command("set_equivalence_margin", study=study.slug, outcome="substitution", delta=0.07)
    assert selectors.equivalence_margins(study=study)["substitution"]["delta_margin"] == 0.07
    with pytest.raises(CommandError, match="strictly between 0 and 1"):
        call_command("set_equivalence_margin", study=study.slug, outcome="erasure", delta=1.0)
    with pytest.raises(CommandError, match="--delta needs --outcome"):
        call_command("set_equivalence_margin", study=study.slug, delta=0.1)


def test_the_report_shows_the_verdicts_and_flags_a_late_margin(
    labelled_study,  # noqa: F811
    tmp_path,
):
    services.equivalence_margin_set(study=labelled_study, outcome="erasure", delta_margin=0.3)
    out = tmp_path / "report"
    call_command("audit_report", study=labelled_study.slug, out=out, n_resamples=200)
    report = json.loads((out / "report.json").read_text())
    assert validation_errors(report) == []
    assert report["equivalence_margins"]["erasure"]["set_after_data"]
    display = equivalence_display(report)
    assert display["set_after_data"] and "erasure (0.3)" in display["set_after_data"][0]
    assert sum(c["n"] for c in display["counts"]) == len(display["rows"]) > 0
    html = (out / "report.html").read_text()
    assert "Equivalence within δ: what can be claimed" in html
    assert "was set after human labels existed" in html
    call_command("verify_report", str(out))  # the folder's numbers recompute from its data


def test_the_summarys_largest_disparities_say_what_each_delta_lets_one_claim():
    from scoring.metrics.headlines import claim_counts, largest_disparities

    report = {
        "disparities": [
            {"source": "human", "measure": "refusal", "attribute": "culture", "delta": 0.2},
            {"source": "human", "measure": "erasure", "attribute": "gender", "delta": 0.1},
        ],
        "equivalence": {
            "human": {"refusal": {"culture": {"verdict": "disparity shown"}}},
        },
    }
    rows = largest_disparities(report)
    assert [row["claim"] for row in rows] == ["disparity shown", "no verdict"]
    assert claim_counts(rows) == [
        {"verdict": "disparity shown", "n": 1},
        {"verdict": "no verdict", "n": 1},
    ]
