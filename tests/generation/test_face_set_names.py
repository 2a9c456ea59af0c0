"""One face-set model: an edit job may be started on a set imported for REFLECT (it keeps its
name), names stay unique with a clear error, and a photo outside an occupation folder gets the
occupation it is exported under."""

import io

import pytest
from PIL import Image

from generation.faces import services as face_services
from generation.models import FaceSet

pytestmark = pytest.mark.django_db
CONFIG = {"kind": "openai-images", "model": "edit-test", "base_url": "http://127.0.0.1:9"}


def create(slug, name=""):
    return face_services.face_set_create(
        slug=slug, name=name, generator_name="editor", generator_config=CONFIG
    )


def test_an_edit_job_on_an_existing_set_keeps_its_name_and_protocol():
    existing = FaceSet.objects.create(slug="faces-a", name="Faces A", protocol={"v": 1})
    assert not existing.is_edit_job
    job = create("faces-a")
    assert job.pk == existing.pk and job.is_edit_job
    assert (job.name, job.protocol, job.generator_name) == ("Faces A", {"v": 1}, "editor")
    assert create("faces-a", name="Faces A v2").name == "Faces A v2"


def test_a_new_set_is_named_after_its_slug_and_names_are_unique():
    assert create("astro").name == "astro"
    assert FaceSet.objects.get(slug="astro").protocol["face_edit_prompt"]  # the shipped one
    with pytest.raises(ValueError, match="already named 'astro'"):
        create("other", name="astro")
    FaceSet.objects.create(slug="imported", name="solo")
    with pytest.raises(ValueError, match="already named 'solo'; give this one a name"):
        create("solo")
    assert create("solo", name="Solo edits").slug == "solo"


def test_a_photo_outside_an_occupation_folder_is_unspecified(tmp_path):
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 150, 120)).save(buffer, format="PNG")
    (tmp_path / "doctor").mkdir()
    (tmp_path / "doctor" / "d1.png").write_bytes(buffer.getvalue())
    (tmp_path / "solo.png").write_bytes(buffer.getvalue())
    job = create("astro")
    assert face_services.face_templates_import(face_set=job, sources=tmp_path) == 2
    assert sorted(job.templates.values_list("occupation", "name")) == [
        ("doctor", "d1"),
        ("unspecified", "solo"),
    ]
