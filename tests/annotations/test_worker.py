"""A real Celery worker process (not eager mode) runs the staff upload's import job."""

import io
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.urls import reverse

from acrb_web.celery import app as celery_app
from annotations.models import BackgroundJob, Item
from tests.conftest import manifest_line, write_image, write_manifest

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] or "postgres"
    return f"postgres://{user}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def worker(tmp_path):
    """Start `celery worker` on the default queue against the test database; stop it after."""
    env = dict(os.environ, DATABASE_URL=database_url(), ACRB_MEDIA_ROOT=str(settings.MEDIA_ROOT),
               CELERY_BROKER_URL=settings.CELERY_BROKER_URL, CELERY_TASK_ALWAYS_EAGER="0", PYTHONUNBUFFERED="1")
    celery = [sys.executable, "-m", "celery", "-A", "acrb_web"]
    subprocess.run([*celery, "purge", "-f", "-Q", "default"], env=env, cwd=ROOT, check=True, capture_output=True, timeout=60)
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [*celery, "worker", "-Q", "default", "-P", "solo", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "info"],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    celery_app.conf.task_always_eager = False
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
    log.close()


def wait_for(predicate, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.5)
    return False


def test_staff_upload_is_imported_by_a_real_worker(worker, study, staff_client, tmp_path):
    folder = tmp_path / "bundle"
    lines = []
    for i in range(25):
        write_image(folder / f"{i}.png", colour=(i * 9, 40, 90))
        lines.append(manifest_line(f"w{i}", image=f"{i}.png", value=["Korean", "US"][i % 2], base=f"bp{i // 2}"))
    write_manifest(folder, lines)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.iterdir():
            bundle.write(path, path.name)
    buffer.name = "bundle.zip"
    buffer.seek(0)
    staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": buffer})
    job = BackgroundJob.objects.get()
    assert wait_for(lambda: BackgroundJob.objects.get(pk=job.pk).status in ("succeeded", "failed")), (tmp_path / "worker.log").read_text()
    job.refresh_from_db()
    assert job.status == "succeeded" and job.done == job.total == 25, job.errors
    assert Item.objects.filter(study=study).count() == 25
    assert Item.objects.get(item_id="w3").image.read()[:4] == b"\x89PNG"
