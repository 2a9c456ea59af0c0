"""Recruitment rules as plain functions: link states, panel parameters, enrolment choice."""

from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from annotations.policies import PolicyItem
from annotations.recruitment.rules import (
    PanelParams,
    RecruitmentError,
    check_param_names,
    enrolment_items,
    invite_state,
    new_secret,
    parse_panel_entry,
    secret_digest,
)

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def test_secrets_are_random_and_only_their_digest_is_kept():
    a, b = new_secret(), new_secret()
    assert a != b and len(a) >= 43
    assert secret_digest(a) == secret_digest(a) != secret_digest(b)
    assert len(secret_digest(a)) == 64 and a not in secret_digest(a)


@pytest.mark.parametrize(
    ("used", "revoked", "expires", "usable", "word"),
    [
        (None, None, NOW + timedelta(days=1), True, ""),
        (NOW, None, NOW + timedelta(days=1), False, "already used"),
        (None, NOW, NOW + timedelta(days=1), False, "revoked"),
        (NOW, NOW, NOW - timedelta(days=1), False, "revoked"),
        (None, None, NOW, False, "expired on 2026-11-23 12:00 UTC"),
    ],
)
def test_invite_state_says_why_in_one_line(used, revoked, expires, usable, word):
    state = invite_state(expires_at=expires, used_at=used, revoked_at=revoked, now=NOW)
    assert state.usable is usable
    assert word in state.reason and "\n" not in state.reason


def test_panel_entry_reads_prolific_names_by_default():
    entry = parse_panel_entry(
        {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "s1", "SESSION_ID": "x-2"},
        PanelParams(),
    )
    assert (entry.participant_id, entry.study_id, entry.session_id) == (
        "5f1a2b3c4d5e6f7a8b9c0d1e",
        "s1",
        "x-2",
    )


def test_panel_entry_with_configured_names_and_optional_study_and_session():
    params = PanelParams(participant="workerId", study="hitId", session="assignmentId")
    entry = parse_panel_entry({"workerId": "W1", "PROLIFIC_PID": "ignored"}, params)
    assert (entry.participant_id, entry.study_id, entry.session_id) == ("W1", "", "")


@pytest.mark.parametrize(
    ("query", "expected", "message"),
    [
        ({}, "", "PROLIFIC_PID parameter is missing"),
        ({"PROLIFIC_PID": "  "}, "", "PROLIFIC_PID parameter is missing"),
        ({"PROLIFIC_PID": "a b"}, "", "PROLIFIC_PID parameter is not a valid id"),
        ({"PROLIFIC_PID": "x" * 65}, "", "not a valid id"),
        ({"PROLIFIC_PID": "p1", "SESSION_ID": "<script>"}, "", "SESSION_ID parameter"),
        ({"PROLIFIC_PID": "p1", "STUDY_ID": "other"}, "mine", "belongs to another panel study"),
        ({"PROLIFIC_PID": "p1"}, "mine", "belongs to another panel study"),
    ],
)
def test_panel_entry_refusals_are_one_line(query, expected, message):
    with pytest.raises(RecruitmentError, match=message) as error:
        parse_panel_entry(query, PanelParams(expected_study_id=expected))
    assert "\n" not in str(error.value)


def test_param_names_are_checked():
    check_param_names(PanelParams())
    with pytest.raises(RecruitmentError, match="distinct"):
        check_param_names(PanelParams(participant="id", study="id", session="s"))
    with pytest.raises(RecruitmentError, match="must be 1-50"):
        check_param_names(PanelParams(participant="a&b"))


ITEMS = [PolicyItem(f"kr{i}", "Korean") for i in range(4)]
ITEMS += [PolicyItem(f"ng{i}", "Nigerian") for i in range(4)]
ITEMS += [PolicyItem(f"wc{i}", "wheelchair user") for i in range(4)]


def test_expertise_gives_own_group_first_and_never_another_groups_items():
    chosen = enrolment_items(
        ITEMS,
        {},
        policy="expertise",
        group="Nigerian",
        overlap_k=1,
        rng=np.random.default_rng(0),
        reserved_groups={"Korean", "Nigerian"},
    )
    assert set(chosen[:4]) == {f"ng{i}" for i in range(4)}
    assert set(chosen[4:]) == {f"wc{i}" for i in range(4)}


def test_expertise_without_reserved_groups_still_orders_own_group_first():
    chosen = enrolment_items(
        ITEMS,
        {},
        policy="expertise",
        group="Korean",
        overlap_k=1,
        rng=np.random.default_rng(0),
        quota=6,
    )
    assert set(chosen[:4]) == {f"kr{i}" for i in range(4)} and len(chosen) == 6


def test_k_overlap_recruits_one_by_one_cover_items_evenly():
    """Ten recruits of 6 items each over 12 items with k=5: every item ends with exactly 5."""
    coverage: Counter = Counter()
    for annotator in range(10):
        chosen = enrolment_items(
            ITEMS,
            coverage,
            policy="k_overlap",
            group="",
            overlap_k=5,
            rng=np.random.default_rng([7, annotator]),
            quota=6,
        )
        assert len(set(chosen)) == 6
        coverage.update(chosen)
    assert set(coverage.values()) == {5}


def test_items_under_k_come_first_then_saturated_ones_and_review_flags_win_ties():
    items = [PolicyItem("a"), PolicyItem("b", priority=1), PolicyItem("c"), PolicyItem("d")]
    chosen = enrolment_items(
        items,
        {"a": 2, "b": 0, "c": 0, "d": 1},
        policy="k_overlap",
        group="",
        overlap_k=2,
        rng=np.random.default_rng(1),
    )
    assert chosen == ["b", "c", "d", "a"]


def test_already_assigned_items_are_skipped_and_results_are_reproducible():
    kwargs = dict(policy="k_overlap", group="", overlap_k=1, quota=5, already_assigned={"kr0"})
    first = enrolment_items(ITEMS, {}, rng=np.random.default_rng(3), **kwargs)
    again = enrolment_items(ITEMS, {}, rng=np.random.default_rng(3), **kwargs)
    assert first == again and "kr0" not in first


@pytest.mark.parametrize("policy", ["manual", "imported"])
def test_batches_without_a_policy_for_newcomers_refuse_recruits(policy):
    with pytest.raises(RecruitmentError, match="takes no recruits"):
        enrolment_items(
            ITEMS, {}, policy=policy, group="", overlap_k=1, rng=np.random.default_rng(0)
        )


def test_quota_must_be_positive():
    with pytest.raises(RecruitmentError, match="at least 1"):
        enrolment_items(
            ITEMS,
            {},
            policy="k_overlap",
            group="",
            overlap_k=1,
            rng=np.random.default_rng(0),
            quota=0,
        )
