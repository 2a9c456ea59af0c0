"""Two real Celery workers on the "api" queue share a study; one is SIGKILLed mid-chunk and is
not restarted. Redis gives its unacknowledged task to the survivor after the visibility
timeout, and the study ends with every image made exactly once.

Needs a broker that keeps unacknowledged messages (CELERY_BROKER_URL=redis://..., as CI runs
it); the worker app shortens the visibility timeout to 3 s (tests/scoring/worker_app.py).
"""

import os
import signal

import pytest
from django.conf import settings as django_settings

from annotations.models import BackgroundJob, Item
from generation import selectors, services, tasks
from generation.models import GenerationRequest
from tests.generation.conftest import PLANNED_ROWS, api_config
from tests.support.celery_worker import Workers, wait_for
from tests.support.image_api_server import ImageApiServer, default_reply

pytestmark = [
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        django_settings.CELERY_BROKER_URL.startswith("filesystem"),
        reason="the filesystem transport never redelivers a killed worker's task; "
        "run with CELERY_BROKER_URL=redis://...",
    ),
]


def slow_reply(route, request):
    reply = default_reply(route, request)
    reply.delay_s = 0.4
    return reply


def test_a_killed_worker_is_replaced_by_the_survivor_without_a_restart(
    planned_study, tmp_path, settings
):
    settings.ACRB_API_QUEUE = "api"
    workers = Workers(tmp_path, queue="api", app="tests.scoring.worker_app")
    total = PLANNED_ROWS * 2
    try:
        with ImageApiServer(slow_reply) as server:
            services.study_generator_attach(
                study=planned_study,
                name="api",
                seeds=[0, 1],
                config=api_config(server, max_concurrency=8),
            )
            started = {workers.start(ACRB_API_QUEUE="api").pid for _ in range(2)}
            job = tasks.generation_run(study=planned_study, chunk_size=2)
            assert job.params["queues"] == ["api"]
            running = GenerationRequest.objects.filter(status=GenerationRequest.Status.RUNNING)

            def holder_pid() -> int | None:
                for holder in running.values_list("claimed_by", flat=True):
                    pid = int(holder.split(":")[1])
                    if pid in started:
                        return pid
                return None

            counts = lambda: selectors.generation_status_counts(study=planned_study)  # noqa: E731
            assert wait_for(lambda: counts().finished >= 2 and holder_pid()), workers.logs()
            victim = holder_pid()
            os.killpg(victim, signal.SIGKILL)  # mid-chunk: its claims and its task are orphaned
            assert wait_for(lambda: counts().open == 0, timeout=90), workers.logs()
    finally:
        workers.stop_all()
    final = counts()
    assert (final.done, final.refused, final.error) == (total // 2, total // 2, 0)
    items = Item.objects.filter(study=planned_study)
    assert items.count() == total == items.values("item_id").distinct().count()
    assert BackgroundJob.objects.get(pk=job.pk).status == "succeeded"
