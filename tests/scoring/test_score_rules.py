"""A study scored inline by the rules-only hard-refusal judge (no torch)."""

from __future__ import annotations

import pytest

from annotations.models import AutomatedJudgment, Item
from scoring import services
from tests.scoring.conftest import RULES_JUDGE, add_item

pytestmark = pytest.mark.django_db


def judgments(study, judge="rules"):
    rows = AutomatedJudgment.objects.filter(item__study=study, judge=judge)
    return {row.item.item_id: row for row in rows.select_related("item")}


def test_rules_judge_scores_every_item(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    summary = services.study_score(study=mixed_study, judge_name="rules")
    assert summary.items == 6 and summary.errors == 0
    rows = judgments(mixed_study)
    assert set(rows) == {"photo-0", "photo-1", "photo-2", "photo-3", "blank", "refused"}
    assert (
        rows["blank"].hard_refusal is True
        and rows["blank"].raw_output["evidence"]["reason"] == "blank_image"
    )
    assert rows["refused"].hard_refusal is True
    assert rows["refused"].raw_output["evidence"]["reason"] == "provider_signal"
    assert all(rows[f"photo-{i}"].hard_refusal is False for i in range(4))
    assert all(
        row.score is None and row.judge_version == "1" and row.error == "" for row in rows.values()
    )


def test_scoring_twice_keeps_one_judgment_per_version(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    services.study_score(study=mixed_study, judge_name="rules")
    services.study_score(study=mixed_study, judge_name="rules")
    assert AutomatedJudgment.objects.filter(item__study=mixed_study).count() == 6
    judges(rules={**RULES_JUDGE, "version": "2"})
    services.study_score(study=mixed_study, judge_name="rules")
    versions = AutomatedJudgment.objects.filter(item__study=mixed_study).values_list(
        "judge_version", flat=True
    )
    assert sorted(versions) == ["1"] * 6 + ["2"] * 6


def test_corrupt_image_is_recorded_as_an_error_and_the_rest_are_judged(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    add_item(mixed_study, "corrupt", raw_bytes=b"\x89PNG\r\n\x1a\n this is not really a png")
    summary = services.study_score(study=mixed_study, judge_name="rules")
    assert summary.items == 7 and summary.errors == 1
    rows = judgments(mixed_study)
    assert "corrupt" in rows["corrupt"].error and rows["corrupt"].hard_refusal is None
    assert sum(1 for row in rows.values() if row.error == "") == 6
    assert Item.objects.get(item_id="corrupt").needs_review is True


def test_item_ids_limit_scoring_and_progress_is_reported(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    first_two = list(
        Item.objects.filter(study=mixed_study).order_by("pk").values_list("pk", flat=True)[:2]
    )
    calls = []
    services.study_score(
        study=mixed_study,
        judge_name="rules",
        item_ids=first_two,
        progress=lambda done, total: calls.append((done, total)),
        chunk_size=1,
    )
    assert calls == [(1, 2), (2, 2)]
    assert AutomatedJudgment.objects.filter(item__study=mixed_study).count() == 2


def test_unknown_judge_is_a_clear_error(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    from scoring.selectors import JudgeNotConfigured

    with pytest.raises(JudgeNotConfigured, match="configured: rules"):
        services.study_score(study=mixed_study, judge_name="nope")


def test_a_judge_is_loaded_once_per_process_per_config_and_device():
    first = services.judge_load(config=RULES_JUDGE)
    assert services.judge_load(config=dict(RULES_JUDGE)) is first
    assert services.judge_load(config=RULES_JUDGE, device="cpu") is not first
    assert services.judge_load(config={**RULES_JUDGE, "version": "2"}) is not first


def test_database_cache_store_round_trips_and_overwrites():
    from scoring.models import JudgeResponse

    store = services.DatabaseCacheStore()
    assert store.get("k") is None
    store.set("k", {"judge_name": "rules", "judge_version": "1", "label": "refusal"})
    store.set("k", {"judge_name": "rules", "judge_version": "1", "label": "not_refusal"})
    assert store.get("k")["label"] == "not_refusal"
    row = JudgeResponse.objects.get()
    assert (row.key, row.judge, row.judge_version) == ("k", "rules", "1")
