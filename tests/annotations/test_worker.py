"""A real Celery worker process (not eager mode) runs the staff upload's import job."""

import io
import zipfile

import pytest
from django.urls import reverse

from annotations.models import BackgroundJob, Item
from tests.support.celery_worker import Workers, wait_for
from tests.support.django_fixtures import manifest_line, write_image, write_manifest

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(tmp_path):
    workers = Workers(tmp_path, queue="default")
    yield workers.start()
    workers.stop_all()


def test_staff_upload_is_imported_by_a_real_worker(worker, study, staff_client, tmp_path):
    folder = tmp_path / "bundle"
    lines = []
    for i in range(25):
        write_image(folder / f"{i}.png", colour=(i * 9, 40, 90))
        lines.append(
            manifest_line(
                f"w{i}", image=f"{i}.png", value=["Korean", "US"][i % 2], base=f"bp{i // 2}"
            )
        )
    write_manifest(folder, lines)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in folder.iterdir():
            bundle.write(path, path.name)
    buffer.name = "bundle.zip"
    buffer.seek(0)
    staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": buffer})
    job = BackgroundJob.objects.get()
    assert wait_for(
        lambda: BackgroundJob.objects.get(pk=job.pk).status in ("succeeded", "failed")
    ), (tmp_path / "worker.log").read_text()
    job.refresh_from_db()
    assert job.status == "succeeded" and job.done == job.total == 25, job.errors
    assert Item.objects.filter(study=study).count() == 25
    assert Item.objects.get(item_id="w3").image.read()[:4] == b"\x89PNG"
