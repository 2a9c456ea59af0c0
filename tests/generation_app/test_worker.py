"""A real Celery worker on the "gpu" queue generates a study end to end, is killed mid-run
(SIGKILL to its process group), and the next worker finishes the study without duplicates."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from acrb_web.celery import app as celery_app
from annotations.models import Item
from generation import selectors, services
from generation.models import GenerationRequest
from tests.generation_app.conftest import PLANNED_ROWS, api_config
from tests.support.image_api_server import ImageApiServer, default_reply

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] or "postgres"
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def start_worker(tmp_path):
    """Start `celery worker -Q gpu -P solo` against the test database; stop all after."""
    env = dict(os.environ, DATABASE_URL=database_url(), ACRB_MEDIA_ROOT=str(settings.MEDIA_ROOT),
               CELERY_BROKER_URL=settings.CELERY_BROKER_URL, CELERY_TASK_ALWAYS_EAGER="0", PYTHONUNBUFFERED="1")  # fmt: skip
    celery = [sys.executable, "-m", "celery", "-A", "acrb_web"]
    subprocess.run(
        [*celery, "purge", "-f", "-Q", "gpu"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )
    celery_app.conf.task_always_eager = False
    started = []

    def start():
        log = (tmp_path / f"worker{len(started)}.log").open("w")
        process = subprocess.Popen(
            [*celery, "worker", "-Q", "gpu", "-P", "solo", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-l", "info"],
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        started.append((process, log))
        return process

    yield start
    for process, log in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        log.close()


def wait_for(predicate, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


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
        services.generation_run(study=planned_study, chunk_size=2)
        counts = lambda: selectors.generation_status_counts(study=planned_study)  # noqa: E731
        running = GenerationRequest.objects.filter(status=GenerationRequest.Status.RUNNING)
        logs = lambda: "\n".join(p.read_text() for p in tmp_path.glob("worker*.log"))  # noqa: E731
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
