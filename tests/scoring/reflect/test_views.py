"""Staff pages: permissions, the run button (Celery eager), the report and its downloads."""

import json

import pytest
from django.urls import reverse

from annotations.models import BackgroundJob
from scoring.reflect.models import FaceImage, ReflectAnswer
from tests.scoring.reflect.fakes import prefers_rank

pytestmark = pytest.mark.django_db


def page_urls(face_set):
    slug = face_set.slug
    image = FaceImage.objects.first()
    return [
        ("get", reverse("reflect:face_set_list")),
        ("get", reverse("reflect:face_set_detail", args=[slug])),
        ("post", reverse("reflect:run_start", args=[slug])),
        ("post", reverse("reflect:report_refresh", args=[slug])),
        ("get", reverse("reflect:report_json", args=[slug])),
        ("get", reverse("reflect:report_document", args=[slug, "html"])),
        ("get", reverse("reflect:report_csv", args=[slug, "win_rates"])),
        ("get", reverse("reflect:report_figure", args=[slug, "jsd__m", "svg"])),
        ("get", reverse("reflect:run_answers", args=[slug, 1])),
        ("get", reverse("reflect:face_image", args=[image.pk])),
    ]


def test_every_page_is_403_for_non_staff_and_redirects_anonymous(
    face_set, client, django_user_model
):
    urls = page_urls(face_set)
    for method, url in urls:
        response = getattr(client, method)(url)
        assert response.status_code == 302 and "login" in response["Location"], url
    user = django_user_model.objects.create_user(username="annotator", password="pw-for-tests-1")
    client.force_login(user)
    for method, url in urls:
        assert getattr(client, method)(url).status_code == 403, url
    assert not BackgroundJob.objects.exists()


def test_staff_runs_a_configured_model_and_reads_the_report(
    face_set, staff_client, serve, settings, django_capture_on_commit_callbacks
):
    server = serve(prefers_rank(list(range(10))))
    settings.ACRB_VLM_MODELS = {
        "loop-vlm": {
            "type": "openai",
            "endpoint": server.base_url,
            "model": "served",
            "concurrency": 8,
        }
    }
    slug = face_set.slug
    page = staff_client.get(reverse("reflect:face_set_detail", args=[slug]))
    assert (
        page.status_code == 200
        and b"loop-vlm" in page.content
        and b"No report computed" in page.content
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("reflect:run_start", args=[slug]),
            {"model": "loop-vlm", "tasks": ["2afc", "mcq"]},
            follow=True,
        )
    assert response.status_code == 200
    jobs = BackgroundJob.objects.filter(kind__startswith="reflect")
    assert sorted(jobs.values_list("kind", flat=True)) == ["reflect 2afc", "reflect mcq"]
    assert set(jobs.values_list("status", flat=True)) == {"succeeded"}
    assert ReflectAnswer.objects.count() == 540 + 40 == len(server.requests)
    assert jobs.get(kind="reflect 2afc").done == 540

    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("reflect:report_refresh", args=[slug]))
    page = staff_client.get(reverse("reflect:face_set_detail", args=[slug]))
    assert (
        b"Answers changed" not in page.content and b"win_matrix__loop-vlm__income" in page.content
    )
    report = staff_client.get(reverse("reflect:report_json", args=[slug])).json()
    assert report["models"]["loop-vlm"]["2afc"]["income"]["win_rate"]["race"]["White"] == 1.0
    csv = staff_client.get(reverse("reflect:report_csv", args=[slug, "win_rates"]))
    assert csv["Content-Type"] == "text/csv" and b"loop-vlm,income,race,White,1.0" in csv.content
    svg = staff_client.get(
        reverse("reflect:report_figure", args=[slug, "win_matrix__loop-vlm__income", "svg"])
    )
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    png = staff_client.get(reverse("reflect:report_figure", args=[slug, "jsd__loop-vlm", "png"]))
    assert png.content[:4] == b"\x89PNG"
    # The audit report document, as reflect_report writes it: summary first, figures inline.
    html = staff_client.get(reverse("reflect:report_document", args=[slug, "html"]))
    assert b"attachment" in html["Content-Disposition"].encode()
    assert b"Executive summary" in html.content and b"<svg" in html.content
    assert b"Legal mapping" in html.content
    assert (
        staff_client.get(reverse("reflect:report_document", args=[slug, "docx"])).status_code == 404
    )
    run_id = face_set.runs.get().pk
    dump = staff_client.get(reverse("reflect:run_answers", args=[slug, run_id]))
    assert len(dump.content.splitlines()) == 580
    assert json.loads(dump.content.splitlines()[0])["model"] == "loop-vlm"
    image = staff_client.get(reverse("reflect:face_image", args=[FaceImage.objects.first().pk]))
    assert image.status_code == 200


def test_unknown_model_or_no_tasks_is_a_message_not_a_job(face_set, staff_client):
    response = staff_client.post(
        reverse("reflect:run_start", args=[face_set.slug]),
        {"model": "nope", "tasks": ["2afc"]},
        follow=True,
    )
    assert b"unknown VLM model" in response.content
    assert not BackgroundJob.objects.exists()


def test_downloads_404_before_any_report(face_set, staff_client):
    assert staff_client.get(reverse("reflect:report_json", args=[face_set.slug])).status_code == 404
    assert (
        staff_client.get(reverse("reflect:report_csv", args=[face_set.slug, "nope"])).status_code
        == 404
    )
