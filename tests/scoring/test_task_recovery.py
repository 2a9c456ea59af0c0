"""A scoring batch cut off by a database error is retried (not marked failed), and judges are
routed by what they run: models on "gpu", HTTP APIs and rules on ACRB_API_QUEUE."""

import pytest
from django.db import OperationalError

from annotations.models import AutomatedJudgment
from scoring import services, tasks
from scoring.models import ScoringBatch
from scoring.tasks import score_items_task
from tests.scoring.conftest import RULES_JUDGE, add_item, noise

pytestmark = pytest.mark.django_db


def test_a_batch_interrupted_by_a_database_error_is_retried_not_failed(
    study, judges, monkeypatch, django_capture_on_commit_callbacks
):
    for index in range(5):
        add_item(study, f"photo-{index}", pixels=noise(index))
    judges(rules=RULES_JUDGE)
    store = services.judgments_store
    calls = {"n": 0}

    def fails_once(**kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("terminating connection due to administrator command")
        return store(**kwargs)

    monkeypatch.setattr(services, "judgments_store", fails_once)
    with django_capture_on_commit_callbacks() as queued:
        job = tasks.scoring_job_enqueue(study=study, judge_name="rules", batch_size=5, chunk_size=2)
    assert len(queued) == 1
    batch = ScoringBatch.objects.get(job=job)
    # Run the task here as a worker would (apply runs the retry at once, without its countdown).
    score_items_task.apply(args=(job.pk, study.pk, "rules", batch.item_ids), throw=False)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("succeeded", 5, 5), job.errors
    batch.refresh_from_db()
    assert (batch.status, batch.attempts) == ("done", 2)
    stored = AutomatedJudgment.objects.filter(item__study=study, judge="rules")
    assert stored.count() == 5 == stored.values("item").distinct().count()


@pytest.mark.parametrize(
    ("config", "queue"),
    [
        (RULES_JUDGE, "api"),
        ({**RULES_JUDGE, "clip": {"architecture": "ViT-B-32"}}, "gpu"),
        ({"kind": "cue_vlm", "backend": {"type": "openai"}}, "api"),
        ({"kind": "cue_vlm", "backend": {"type": "transformers"}}, "gpu"),
        ({"kind": "cue_clip", "clip": {}}, "gpu"),
        (
            {"kind": "ensemble", "members": [RULES_JUDGE, {"kind": "cue_vlm", "backend": {}}]},
            "gpu",
        ),
    ],
)
def test_judges_are_routed_by_what_they_run(config, queue, settings):
    settings.ACRB_API_QUEUE = "api"
    assert services.scoring_queue(config) == queue
