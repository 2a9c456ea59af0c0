"""Staff pages: every page is staff-only; plans, generation start, progress and face QC."""

import pytest
from django.urls import reverse

from annotations.models import BackgroundJob
from generation import services
from generation.models import FaceEdit, FaceSet, FaceTemplate, PlannedPrompt
from tests.generation.conftest import PLANNED_ROWS, api_config
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def face_edit(study):
    face_set = FaceSet.objects.create(
        slug="faces",
        name="Faces",
        generator_name="x",
        generator_config={},
        instruction_template="t {TARGET_GROUP}",
    )
    template = FaceTemplate.objects.create(
        face_set=face_set, occupation="doctor", name="t1", image="x.png", image_sha256="0" * 64
    )
    return FaceEdit.objects.create(
        template=template,
        race="Black",
        gender="male",
        instruction="i",
        status="done",
        flagged=True,
        flag_reason="low_ratio",
    )


def pages(slug, face_edit):
    face_slug = face_edit.template.face_set.slug
    return [
        ("get", reverse("generation:overview")),
        ("get", reverse("generation:plan_new")),
        ("post", reverse("generation:plan_new")),
        ("get", reverse("generation:study_plan", args=[slug])),
        ("get", reverse("generation:study_generation", args=[slug])),
        ("get", reverse("generation:generation_progress", args=[slug])),
        ("post", reverse("generation:generator_attach", args=[slug])),
        ("post", reverse("generation:generation_start", args=[slug])),
        ("get", reverse("generation:request_list", args=[slug])),
        ("get", reverse("generation:face_set_list")),
        ("get", reverse("generation:face_set_detail", args=[face_slug])),
        ("post", reverse("generation:face_edit_accept", args=[face_slug, face_edit.pk])),
        ("get", reverse("generation:face_image", args=[face_slug, "edit", face_edit.pk])),
    ]


def test_every_page_redirects_anonymous_and_forbids_annotators(
    client, study, annotators, face_edit
):
    annotator = client_for(annotators[0])
    for method, url in pages(study.slug, face_edit):
        assert getattr(client, method)(url).status_code == 302, url
        assert getattr(annotator, method)(url).status_code == 403, url


def test_staff_can_see_every_read_page(staff_client, planned_study, face_edit):
    for method, url in pages(planned_study.slug, face_edit):
        if method == "get" and "images" not in url:
            assert staff_client.get(url).status_code == 200, url


def test_plan_page_builds_a_study_from_an_uploaded_prompt_file(staff_client, base_prompts_file):
    with base_prompts_file.open("rb") as upload:
        response = staff_client.post(
            reverse("generation:plan_new"),
            {
                "slug": "uploaded",
                "name": "Uploaded",
                "base_prompts": "upload",
                "base_prompts_file": upload,
                "attributes": ["gender"],
                "sample_seed": 0,
                "missing_slot": "skip",
            },
        )
    assert response.status_code == 302
    assert (
        PlannedPrompt.objects.filter(study__slug="uploaded", status="planned").count()
        == PLANNED_ROWS
    )
    page = staff_client.get(reverse("generation:study_plan", args=["uploaded"]) + "?status=skipped")
    assert b"no_person_slot" in page.content and b"A bowl of fruit" in page.content


def test_invalid_plan_form_stores_nothing(staff_client):
    response = staff_client.post(
        reverse("generation:plan_new"),
        {"slug": "x", "base_prompts": "upload", "sample_seed": 0, "missing_slot": "skip"},
    )
    assert response.status_code == 400 and not PlannedPrompt.objects.exists()


def test_start_button_queues_a_job_and_progress_is_polled(
    staff_client, planned_study, api_server, settings, django_capture_on_commit_callbacks
):
    settings.ACRB_GENERATORS = {"api": api_config(api_server)}
    url = reverse("generation:generator_attach", args=[planned_study.slug])
    assert staff_client.post(url, {"name": "api", "seeds": "0"}).status_code == 302
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("generation:generation_start", args=[planned_study.slug])
        )
    assert response.status_code == 302
    job = BackgroundJob.objects.get(kind=services.JOB_KIND)
    assert job.status == "succeeded" and job.done == PLANNED_ROWS  # eager Celery in tests
    partial = staff_client.get(
        reverse("generation:generation_progress", args=[planned_study.slug]), HTTP_HX_REQUEST="true"
    )
    assert b'id="progress"' in partial.content and b"<html" not in partial.content
    assert b"4 images, 4 refused" in partial.content
    requests_page = staff_client.get(
        reverse("generation:request_list", args=[planned_study.slug]) + "?status=refused"
    )
    assert b"content_policy_violation" in requests_page.content


def test_progress_polls_every_second_while_requests_are_open(staff_client, api_study):
    services.generation_requests_create(study=api_study)
    page = staff_client.get(reverse("generation:study_generation", args=[api_study.slug]))
    assert b'hx-trigger="every 1s"' in page.content


def test_accept_button_sets_acceptance_and_answers_with_the_row(staff_client, face_edit):
    url = reverse("generation:face_edit_accept", args=["faces", face_edit.pk])
    for _ in range(2):  # a repeated click keeps it accepted
        response = staff_client.post(url, {"accepted": "1"}, HTTP_HX_REQUEST="true")
        assert (
            response.status_code == 200
            and b"Withdraw" in response.content
            and b"<html" not in response.content
        )
    face_edit.refresh_from_db()
    assert face_edit.accepted_by_staff and face_edit.usable
    staff_client.post(url, {"accepted": "0"})
    face_edit.refresh_from_db()
    assert not face_edit.accepted_by_staff
