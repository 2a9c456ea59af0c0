"""Cue judges over the loopback chat-completions server: storage, cache, ensemble, review."""

from __future__ import annotations

import pytest

from annotations import services as annotation_services
from annotations.models import Assignment, AutomatedJudgment, Item
from scoring import services
from tests.scoring.conftest import add_item, noise
from tests.support.openai_server import OpenAIServer, completion, request_text

pytestmark = pytest.mark.django_db


def cue_judge(name: str, server: OpenAIServer, model: str = "m") -> dict:
    backend = {
        "type": "openai",
        "endpoint": server.base_url,
        "model": model,
        "max_retries": 0,
        "timeout_s": 10,
        "supports_logprobs": False,
    }
    return {
        "kind": "cue_vlm",
        "name": name,
        "version": "1",
        "backend": backend,
        "score_options": False,
    }


def by_cue(request):
    """Korean: retained; Nigerian: erased; US: an answer that does not parse."""
    text = request_text(request)
    if "Korean" in text:
        return completion("retained\nconfidence: 0.9")
    if "Nigerian" in text:
        return completion("erased\nconfidence: 0.8")
    return completion("I think it is probably retained")


@pytest.fixture
def cue_study(study):
    for index, value in enumerate(["Korean", "Nigerian", "US", "Korean"]):
        add_item(study, f"photo-{index}", pixels=noise(index), value=value)
    return study


@pytest.fixture
def server():
    with OpenAIServer(by_cue) as running:
        yield running


def rows(study, judge):
    return {
        row.item.item_id: row
        for row in AutomatedJudgment.objects.filter(item__study=study, judge=judge).select_related(
            "item"
        )
    }


def test_cue_judge_stores_labels_confidence_and_invalid_answers(cue_study, server, judges):
    judges(vlm=cue_judge("vlm", server))
    summary = services.study_score(study=cue_study, judge_name="vlm")
    assert (summary.items, summary.errors, summary.invalid) == (4, 0, 1)
    stored = rows(cue_study, "vlm")
    assert (
        stored["photo-0"].hard_refusal,
        stored["photo-0"].cue_label,
        stored["photo-0"].confidence,
    ) == (None, "retained", 0.9)
    assert (stored["photo-1"].cue_label, stored["photo-1"].confidence) == ("erased", 0.8)
    invalid = stored["photo-2"]
    assert invalid.hard_refusal is None and invalid.cue_label == "" and invalid.error == ""
    assert (
        invalid.raw_output["label"] == "invalid"
        and invalid.raw_output["evidence"]["parse_problems"]
    )


def test_rerun_is_served_from_the_cache_without_backend_calls(cue_study, server, judges):
    judges(vlm=cue_judge("vlm", server))
    services.study_score(study=cue_study, judge_name="vlm")
    assert len(server.requests) == 4
    services.judge_cache_clear()  # a fresh worker process: only the database cache is left
    summary = services.study_score(study=cue_study, judge_name="vlm")
    assert len(server.requests) == 4 and summary.cached == 4
    assert AutomatedJudgment.objects.filter(item__study=cue_study).count() == 4
    add_item(cue_study, "photo-new", pixels=noise(99), value="Korean")
    services.study_score(study=cue_study, judge_name="vlm")
    assert len(server.requests) == 5  # only what changed is scored


def test_changing_the_judge_version_stores_a_new_set(cue_study, server, judges):
    config = cue_judge("vlm", server)
    judges(vlm=config)
    services.study_score(study=cue_study, judge_name="vlm")
    judges(vlm={**config, "version": "2"})
    services.study_score(study=cue_study, judge_name="vlm")
    assert len(server.requests) == 8  # the version is part of the cache key
    counts = AutomatedJudgment.objects.filter(item__study=cue_study).values_list(
        "judge_version", flat=True
    )
    assert sorted(counts) == ["1"] * 4 + ["2"] * 4


def test_ensemble_members_and_ensemble_are_stored_separately_and_disagreement_goes_first(
    cue_study, judges, annotators
):
    def model_b(request):
        return (
            completion("erased\nconfidence: 0.9")
            if "Nigerian" in request_text(request)
            else by_cue(request)
        )

    with (
        OpenAIServer(lambda r: completion("retained\nconfidence: 0.9")) as a,
        OpenAIServer(model_b) as b,
    ):
        judges(
            ens={
                "kind": "ensemble",
                "name": "ens",
                "version": "3",
                "min_confidence": 0.6,
                "members": [cue_judge("vlm-a", a), cue_judge("vlm-b", b)],
            }
        )
        services.study_score(study=cue_study, judge_name="ens")
    keys = AutomatedJudgment.objects.filter(item__study=cue_study).values_list(
        "judge", "judge_version"
    )
    assert sorted(set(keys)) == [("ens", "3"), ("vlm-a", "1"), ("vlm-b", "1")]
    assert len(keys) == 12
    ensemble = rows(cue_study, "ens")
    assert ensemble["photo-0"].cue_label == "retained" and ensemble["photo-0"].raw_output[
        "members"
    ] == ["vlm-a@1", "vlm-b@1"]
    assert rows(cue_study, "vlm-b")["photo-1"].cue_label == "erased"
    assert ensemble["photo-1"].raw_output["needs_review"] is True
    flagged = set(
        Item.objects.filter(study=cue_study, needs_review=True).values_list("item_id", flat=True)
    )
    assert flagged == {"photo-1"}

    batch = annotation_services.batch_create(
        request=annotation_services.batch_request_build(
            study=cue_study,
            name="after judges",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=3,
        )
    )
    for annotator in annotators[:2]:
        queue = Assignment.objects.filter(batch=batch, annotator=annotator).order_by("position")
        assert queue.first().item.item_id == "photo-1"
