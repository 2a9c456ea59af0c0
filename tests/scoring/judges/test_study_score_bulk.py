"""study_score's writes: a fixed number of queries per chunk whatever its size, the response
cache keyed by the hash the storage recorded, and the chunk never capping the model batch."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotations.models import AutomatedJudgment
from scoring import services
from scoring.judges import cache as cache_module
from scoring.models import JudgeResponse
from tests.scoring.conftest import add_item, noise
from tests.scoring.judges.fakes import FakeClip

pytestmark = pytest.mark.django_db

RULES = {"kind": "hard_refusal", "name": "rules", "version": "1", "clip": None}


@pytest.fixture(autouse=True)
def _fresh_judges():
    services.judge_cache_clear()
    yield
    services.judge_cache_clear()


def _study_with(study, count, *, recorded_hash=True):
    for index in range(count):
        item = add_item(study, f"i{index}", pixels=noise(index) if index % 3 else (0, 0, 0))
        if recorded_hash:
            item.image_sha256 = f"{index:064x}"
            item.save(update_fields=["image_sha256"])
    return study


def _queries(study, **kwargs):
    with CaptureQueriesContext(connection) as captured:
        services.study_score(
            study=study, judge_name="rules", judge_configs={"rules": RULES}, **kwargs
        )
    return len(captured)


def test_one_chunk_costs_the_same_queries_for_3_items_as_for_12(study):
    from annotations.services import study_create

    small = _study_with(study, 3)
    large = _study_with(study_create(name="Large", slug="large"), 12)
    assert _queries(small, chunk_size=64) == _queries(large, chunk_size=64)
    assert AutomatedJudgment.objects.filter(item__study=large).count() == 12
    assert JudgeResponse.objects.count() == 12  # the small study's 3 hashes recur in the large
    # Per chunk: cache lookup, judgments upsert, cache upsert, review flags (+ savepoint).
    per_chunk = _queries(large, chunk_size=64)  # a rerun: all cached, nothing new to cache
    assert _queries(large, chunk_size=4) - per_chunk == 2 * (per_chunk - 2)


def test_a_rerun_overwrites_judgments_and_flags_review_in_bulk(study):
    _study_with(study, 6)
    first = services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})
    again = services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})
    assert (first.cached, again.cached) == (0, 6)
    assert AutomatedJudgment.objects.filter(item__study=study).count() == 6
    blank = AutomatedJudgment.objects.get(item__item_id="i0")
    assert blank.hard_refusal is True and blank.raw_output["cached"] is True


def test_cache_keys_use_the_recorded_hash_without_reading_files(study, monkeypatch):
    _study_with(study, 4)
    services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})

    def no_rehash(source):
        raise AssertionError(f"re-read {source} to hash it")

    monkeypatch.setattr(cache_module, "image_sha256", no_rehash)
    summary = services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})
    assert summary.cached == 4


def test_items_without_a_recorded_hash_are_hashed_from_the_file(study):
    _study_with(study, 2, recorded_hash=False)
    services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})
    summary = services.study_score(study=study, judge_name="rules", judge_configs={"rules": RULES})
    assert summary.cached == 2


def test_the_chunk_does_not_cap_the_clip_batch(study, monkeypatch):
    _study_with(study, 20)
    vectors = {32: [0.1, 0.2, 0.9]}
    clip = FakeClip(vectors, {"r1": [1, 0, 0], "o1": [0, 0, 1]}, batch_size=16)
    config = {**RULES, "name": "clip", "refusal_descriptions": ["r1"],
              "ordinary_descriptions": ["o1"], "clip": {"architecture": "fake", "pretrained": "x",
                                                        "batch_size": 16}}  # fmt: skip
    monkeypatch.setattr("scoring.judges.hard_refusal.load_clip", lambda _config: clip)
    monkeypatch.setattr("scoring.judges.hard_refusal.set_torch_threads", lambda _threads: None)
    summary = services.study_score(
        study=study, judge_name="clip", judge_configs={"clip": config}, chunk_size=4
    )
    assert summary.items == 20 and summary.errors == 0
    assert clip.image_batches == [16, 4]
    assert np.all([j.score is not None for j in AutomatedJudgment.objects.filter(judge="clip")])
