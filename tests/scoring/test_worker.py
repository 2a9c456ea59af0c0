"""A real Celery worker on the "gpu" queue (not eager mode): a study scored end to end, a
corrupt image recorded as an error, and a worker killed mid-batch whose task is redelivered.

The kill test needs a broker that keeps unacknowledged messages: the default filesystem
transport deletes a message when a worker takes it, so a killed worker's task is lost there
(docs/judges.md, "Workers"). It runs with CELERY_BROKER_URL=redis://... (as CI does).
"""

from __future__ import annotations

import os
import signal

import pytest
import yaml
from django.conf import settings

from annotations.models import AutomatedJudgment, BackgroundJob, Item
from scoring import tasks
from scoring.models import ScoringBatch
from tests.scoring.conftest import RULES_JUDGE, add_item, noise
from tests.support.celery_worker import Workers, wait_for
from tests.support.openai_server import OpenAIServer, Reply, completion

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def start_worker(tmp_path, settings):
    """``start_worker(judges)``: a `celery worker -Q gpu -P solo` with those judges configured,
    against the test database; every worker started is stopped after the test."""
    workers = Workers(tmp_path, queue="gpu", app="tests.scoring.worker_app")

    def start(judges: dict):
        settings.ACRB_JUDGES = judges
        backends = tmp_path / "backends.yaml"
        backends.write_text(yaml.safe_dump({"judges": judges}))
        return workers.start(ACRB_BACKENDS_FILE=str(backends))

    start.workers = workers
    yield start
    workers.stop_all()


def worker_logs(tmp_path) -> str:
    return "\n".join(path.read_text() for path in sorted(tmp_path.glob("worker-*.log")))


def job_finished(job_id) -> bool:
    return BackgroundJob.objects.get(pk=job_id).status in ("succeeded", "failed")


def test_worker_scores_a_study_and_records_a_corrupt_image(start_worker, study, tmp_path):
    for index in range(5):
        add_item(study, f"photo-{index}", pixels=noise(index))
    add_item(study, "blank", pixels=(0, 0, 0))
    add_item(study, "corrupt", raw_bytes=b"\x89PNG\r\n\x1a\nnot an image at all")
    start_worker({"rules": RULES_JUDGE})
    job = tasks.scoring_job_enqueue(study=study, judge_name="rules", batch_size=3)
    assert wait_for(lambda: job_finished(job.pk), timeout=120), worker_logs(tmp_path)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("succeeded", 7, 7), (
        job.errors,
        worker_logs(tmp_path),
    )
    assert job.message == "Scored 7 items; 1 recorded an error."
    rows = {
        r.item.item_id: r
        for r in AutomatedJudgment.objects.filter(item__study=study).select_related("item")
    }
    assert len(rows) == 7 and rows["blank"].hard_refusal is True
    assert "corrupt" in rows["corrupt"].error and rows["corrupt"].hard_refusal is None
    assert all(
        rows[f"photo-{i}"].error == "" and rows[f"photo-{i}"].hard_refusal is False
        for i in range(5)
    )
    assert list(ScoringBatch.objects.filter(job=job).values_list("attempts", flat=True)) == [
        1,
        1,
        1,
    ]


@pytest.mark.skipif(
    settings.CELERY_BROKER_URL.startswith("filesystem"),
    reason="the filesystem transport deletes a message when a worker takes it: a killed worker's "
    "task is never redelivered; run with CELERY_BROKER_URL=redis://... (docs/judges.md)",
)
def test_killed_worker_task_is_redelivered_and_nothing_is_duplicated(start_worker, study, tmp_path):
    for index in range(8):
        add_item(study, f"photo-{index}", pixels=noise(index), value=["Korean", "US"][index % 2])
    slow = OpenAIServer(
        lambda request: Reply(body=completion("retained\nconfidence: 0.9"), delay_s=0.7)
    )
    with slow:
        backend = {
            "type": "openai",
            "endpoint": slow.base_url,
            "model": "m",
            "max_retries": 0,
            "concurrency": 1,
            "timeout_s": 10,
            "supports_logprobs": False,
        }
        judges = {
            "slow-vlm": {"kind": "cue_vlm", "name": "slow-vlm", "version": "1", "backend": backend}
        }
        first = start_worker(judges)
        job = tasks.scoring_job_enqueue(
            study=study, judge_name="slow-vlm", batch_size=8, chunk_size=2
        )
        stored = AutomatedJudgment.objects.filter(item__study=study, judge="slow-vlm")
        assert wait_for(lambda: stored.count() >= 2, timeout=120), worker_logs(tmp_path)
        os.killpg(first.pid, signal.SIGKILL)  # mid-batch: the task was taken but never acknowledged
        first.wait(timeout=20)
        assert stored.count() < 8 and not job_finished(job.pk)
        requests_before_restart = len(slow.requests)
        start_worker(judges)
        assert wait_for(lambda: job_finished(job.pk), timeout=180), worker_logs(tmp_path)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("succeeded", 8, 8), (
        job.errors,
        worker_logs(tmp_path),
    )
    assert ScoringBatch.objects.get(job=job).attempts == 2  # redelivered
    assert stored.count() == 8 and stored.values("item").distinct().count() == 8
    assert all(row.cue_label == "retained" for row in stored)
    # The chunks stored before the kill came from the response cache the second time.
    assert len(slow.requests) - requests_before_restart <= 8 - 2
    assert Item.objects.filter(study=study, needs_review=True).count() == 0
