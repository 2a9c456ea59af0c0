"""A real Celery worker on the "gpu" queue generates a study end to end, is killed mid-run
(SIGKILL to its process group), and the next worker finishes the study without duplicates."""

import os
import signal

import pytest

from annotations.models import Item
from generation import selectors, services, tasks
from generation.models import GenerationRequest
from tests.generation.conftest import PLANNED_ROWS, api_config
from tests.support.celery_worker import Workers, wait_for
from tests.support.image_api_server import ImageApiServer, default_reply

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def start_worker(tmp_path):
    """``start_worker()``: a `celery worker -Q gpu -P solo` against the test database."""
    workers = Workers(tmp_path, queue="gpu")
    yield workers.start
    workers.stop_all()


def slow_reply(route, request):
    reply = default_reply(route, request)
    reply.delay_s = 0.3
    return reply


def test_worker_killed_mid_run_is_resumed_by_the_next_worker(start_worker, planned_study, tmp_path):
    total = PLANNED_ROWS * 2
    with ImageApiServer(slow_reply) as server:
        config = api_config(server, max_concurrency=1)
        services.study_generator_attach(
            study=planned_study, name="api", config=config, seeds=[0, 1]
        )
        first = start_worker()
        tasks.generation_run(study=planned_study, chunk_size=2)
        counts = lambda: selectors.generation_status_counts(study=planned_study)  # noqa: E731
        running = GenerationRequest.objects.filter(status=GenerationRequest.Status.RUNNING)
        logs = lambda: "\n".join(p.read_text() for p in tmp_path.glob("worker-*.log"))  # noqa: E731
        assert wait_for(lambda: counts().finished >= 4 and running.exists()), logs()
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        interrupted = counts()
        assert 0 < interrupted.finished < total and interrupted.by_status.get("running"), (
            interrupted
        )
        start_worker()  # on start it re-queues what the dead worker had claimed
        assert wait_for(lambda: counts().open == 0), logs()
    final = counts()
    assert (final.done, final.refused, final.error) == (total // 2, total // 2, 0)
    items = Item.objects.filter(study=planned_study)
    assert items.count() == total and items.values("item_id").distinct().count() == total
    assert GenerationRequest.objects.filter(item__isnull=True).count() == 0
    assert max(GenerationRequest.objects.values_list("attempts", flat=True)) <= 2
