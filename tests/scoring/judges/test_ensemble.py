import pytest

from scoring.judges.ensemble import EnsembleJudge, Vote, ensemble_decision
from scoring.judges.records import INVALID_LABEL, ItemInput
from tests.scoring.judges.fakes import FixedJudge


def test_weighted_vote_hand_worked():
    # erased: 0.9 + 0.4 = 1.3; retained: 0.8 → erased wins with 1.3 / 2.1 = 0.619
    votes = [Vote("a", "erased", 0.9), Vote("b", "retained", 0.8), Vote("c", "erased", 0.4)]
    decision = ensemble_decision(votes, min_confidence=0.5)
    assert decision.label == "erased"
    assert decision.confidence == pytest.approx(1.3 / 2.1)
    assert decision.needs_review  # disagreement, even above the confidence bar
    assert any("disagree" in r for r in decision.reasons)


def test_unanimous_vote_passes_and_low_weights_still_unanimous():
    decision = ensemble_decision([Vote("a", "retained", 0.3), Vote("b", "retained", 0.2)])
    assert (decision.label, decision.confidence, decision.needs_review) == ("retained", 1.0, False)


def test_confidence_bar_and_minimum_votes():
    votes = [Vote("a", "erased", 0.55), Vote("b", "retained", 0.45)]
    decision = ensemble_decision(votes, min_confidence=0.6)
    assert decision.confidence == pytest.approx(0.55)
    assert any("below 0.6" in r for r in decision.reasons)
    lonely = ensemble_decision([Vote("a", "erased", 0.9)], min_valid_votes=2)
    assert lonely.needs_review and lonely.label == "erased"
    empty = ensemble_decision([])
    assert empty.label is None and empty.needs_review


def test_ties_break_alphabetically_and_are_reviewed():
    decision = ensemble_decision([Vote("a", "retained", 0.5), Vote("b", "erased", 0.5)])
    assert decision.label == "erased" and decision.needs_review


def test_ensemble_judge_keeps_member_outputs():
    a = FixedJudge("a", {"1": ("erased", 0.9), "2": ("retained", None), "3": (None, None, "boom")})
    b = FixedJudge(
        "b", {"1": ("erased", 0.6), "2": (INVALID_LABEL, None), "3": (None, None, "bang")}
    )
    ensemble = EnsembleJudge([a, b], name="ens", min_confidence=0.6, default_confidence=0.5)
    one, two, three = ensemble.judge_items([ItemInput(item_id=i, cue="hat") for i in "123"])
    assert (one.label, one.confidence, one.needs_review) == ("erased", 1.0, False)
    assert [m.judge_name for m in one.member_outputs] == ["a", "b"]
    assert one.evidence["totals"] == {"erased": pytest.approx(1.5)}
    # One valid vote with no stated confidence counts at default weight; still unanimous.
    assert (two.label, two.confidence) == ("retained", 1.0)
    assert three.label is None and three.error == "every member judge failed" and three.needs_review


def test_all_invalid_is_invalid_not_an_error():
    a = FixedJudge("a", {"1": (INVALID_LABEL, None)})
    out = EnsembleJudge([a], name="e").judge_items([ItemInput(item_id="1")])[0]
    assert out.label == INVALID_LABEL and out.error is None and out.needs_review


def test_member_names_must_be_unique():
    with pytest.raises(ValueError, match="unique"):
        EnsembleJudge([FixedJudge("a", {}), FixedJudge("a", {})])
    with pytest.raises(ValueError, match="at least one"):
        EnsembleJudge([])
