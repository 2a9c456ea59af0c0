"""FOCUS face sets through the service: a real photo (scikit-image's astronaut), edits from
the loopback image API that change the face only or leak outside it, QC, staff acceptance,
and the REFLECT export layout."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from generation import selectors
from generation.faces import detect_face_box
from generation.faces import services as face_services
from generation.models import FaceEdit
from tests.support.image_api_server import ImageApiServer, Reply

pytestmark = pytest.mark.django_db(transaction=True)
skimage_data = pytest.importorskip("skimage.data")
pytest.importorskip("cv2")

LEAKY_GROUP = "Middle Eastern male"


def png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def editor(astronaut):
    box = detect_face_box(astronaut)

    def rule(route, request):
        edited = astronaut.astype(np.int16)
        if f"looks like a {LEAKY_GROUP}" in request.get("prompt", ""):
            edited[box.y + box.height + 20 :, :] += 60  # below the face: leaks
        else:
            edited[box.y : box.y + box.height, box.x : box.x + box.width] += 40
        data = base64.b64encode(png(np.clip(edited, 0, 255).astype(np.uint8))).decode()
        return Reply(body={"data": [{"b64_json": data}]})

    return rule


@pytest.fixture
def sources(tmp_path):
    astronaut = skimage_data.astronaut()
    folder = tmp_path / "sources" / "doctor"
    folder.mkdir(parents=True)
    (folder / "doctor_01.png").write_bytes(png(astronaut))
    return tmp_path / "sources", astronaut


def test_face_qc_flags_the_leaking_edit_and_export_needs_staff_acceptance(
    sources, tmp_path, staff_user
):
    folder, astronaut = sources
    with ImageApiServer(editor(astronaut)) as server:
        config = {
            "kind": "openai-images",
            "model": "edit-test",
            "base_url": server.base_url,
            "max_retries": 0,
        }
        face_set = face_services.face_set_create(
            slug="astro", generator_name="editor", generator_config=config
        )
        assert face_services.face_templates_import(face_set=face_set, sources=folder) == 1
        assert (
            face_services.face_templates_import(face_set=face_set, sources=folder) == 0
        )  # unchanged
        assert face_services.face_set_edit(face_set=face_set) == 10
        assert {route for route, _ in server.requests} == {"edits"}
        assert face_services.face_set_edit(face_set=face_set) == 0  # nothing left to do
    template = face_set.templates.get()
    assert template.occupation == "doctor" and template.name == "doctor_01" and template.face_box
    edits = {edit.target_group: edit for edit in FaceEdit.objects.all()}
    assert len(edits) == 10 and all(edit.status == "done" for edit in edits.values())
    leaky = edits[LEAKY_GROUP]
    assert leaky.flagged and leaky.flag_reason == "leaks_outside_face" and leaky.outside_diff > 0.05
    clean = edits["Asian female"]
    assert (
        not clean.flagged
        and clean.inside_diff == pytest.approx(40 / 255, abs=0.02)
        and clean.outside_diff == 0
    )
    assert "Asian female" in clean.instruction and "{TARGET_GROUP}" not in clean.instruction
    (row,) = selectors.face_qc_rows(face_set=face_set)
    assert row.summary.edits == 10 and row.summary.flagged == 1

    report = face_services.face_set_export(face_set=face_set, out_dir=tmp_path / "out")
    assert report.templates == 0 and "Middle Eastern male" in report.skipped[0][1]
    face_services.face_edit_accept(edit=leaky, user=staff_user)
    face_services.face_edit_accept(edit=leaky, user=staff_user)  # a repeat changes nothing
    report = face_services.face_set_export(face_set=face_set, out_dir=tmp_path / "out")
    assert (report.templates, report.images) == (1, 10)
    written = sorted(path.name for path in (tmp_path / "out" / "doctor" / "doctor_01").iterdir())
    assert (
        "Middle-Eastern_male.png" in written
        and "White_female.png" in written
        and len(written) == 10
    )


def test_refusals_and_errors_are_recorded_and_retried(sources):
    folder, astronaut = sources

    def refuse_all(route, request):
        return Reply(400, {"error": {"code": "moderation_blocked", "message": "blocked"}})

    with ImageApiServer(refuse_all) as server:
        config = {
            "kind": "openai-images",
            "model": "edit-test",
            "base_url": server.base_url,
            "max_retries": 0,
        }
        face_set = face_services.face_set_create(
            slug="refused", generator_name="editor", generator_config=config
        )
        face_services.face_templates_import(face_set=face_set, sources=folder)
        face_services.face_set_edit(face_set=face_set)
    assert set(FaceEdit.objects.values_list("status", flat=True)) == {"refused"}
    assert not any(edit.usable for edit in FaceEdit.objects.all())
