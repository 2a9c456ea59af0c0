"""Issue 36 §4: slow study documents are made in the background. The study page's fragments and
the report serve the figures for today's data, else the last ones with their age while a job
computes the new ones (queued once), else a placeholder that polls; PDFs are made by a job while
a page waits for them. The broker is the tests' real filesystem broker with no worker listening:
the test runs the queued task itself, as a worker would."""

import pytest
from django.core.cache import cache
from django.urls import reverse
from kombu.exceptions import OperationalError

from acrb_web.celery import app as celery_app
from annotations import services
from annotations.models import Assignment
from scoring.report import tasks

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def queued(monkeypatch):
    """No eager Celery: messages go to the filesystem broker, and nobody takes them. Records the
    tasks queued, so a test can run them as the worker would."""
    celery_app.conf.task_always_eager = False  # the autouse fixture puts it back after the test
    sent = []
    for task in (tasks.page_documents_task, tasks.report_pdf_task):
        original = task.apply_async

        def record(args=None, kwargs=None, _original=original, _task=task, **options):
            sent.append((_task, tuple(args or ())))
            return _original(args, kwargs, **options)

        monkeypatch.setattr(task, "apply_async", record)
    cache.clear()
    return sent


def _answer(batch, count):
    open_ones = Assignment.objects.filter(batch=batch, annotation__isnull=True).order_by("pk")
    for assignment in open_ones[:count]:
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="erased")


def test_first_load_queues_the_documents_once_and_polls_until_they_are_there(
    staff_client, batch, queued
):
    _answer(batch, 6)
    url = reverse("metrics:study_summary", args=[batch.study.slug])
    first = staff_client.get(url, **HTMX)
    assert first.status_code == 200
    html = first.content.decode()
    assert 'hx-trigger="every 3s"' in html and "Computing the summary for the first time" in html
    assert staff_client.get(url, **HTMX).status_code == 200  # asked again: not queued again
    page = staff_client.get(url)  # without JavaScript: a page that refreshes itself
    assert page.status_code == 202 and 'http-equiv="refresh"' in page.content.decode()
    assert [task for task, _ in queued] == [tasks.page_documents_task]

    task, args = queued[0]
    task(*args)  # the worker's turn
    done = staff_client.get(url, **HTMX).content.decode()
    assert "Agreement between annotators" in done
    assert "every 3s" not in done and "before the newest answers" not in done


def test_new_answers_serve_the_last_figures_with_their_age_while_new_ones_are_computed(
    staff_client, batch, queued
):
    _answer(batch, 6)
    tasks.page_documents_compute(study=batch.study)
    _answer(batch, 2)  # the data changed since
    for name, target in (
        ("metrics:study_summary", "summary"),
        ("metrics:study_statistics", "statistics"),
        ("report:study_disparities", "disparities"),
        ("report:study_safety", "safety"),
    ):
        html = staff_client.get(reverse(name, args=[batch.study.slug]), **HTMX).content.decode()
        assert "before the newest answers" in html, name
        assert f'hx-target="#{target}"' in html, name
    report = staff_client.get(reverse("report:study_report", args=[batch.study.slug]))
    assert report.status_code == 200 and "reload this page in a minute" in report.content.decode()
    assert len(queued) == 1  # five requests, one computation queued
    task, args = queued[0]
    task(*args)
    html = staff_client.get(
        reverse("metrics:study_summary", args=[batch.study.slug]), **HTMX
    ).content.decode()
    assert "before the newest answers" not in html


def test_a_claim_no_worker_took_is_done_by_the_next_request(
    staff_client, batch, queued, monkeypatch
):
    _answer(batch, 6)
    url = reverse("report:study_disparities", args=[batch.study.slug])
    assert "Computing the Δ tests" in staff_client.get(url, **HTMX).content.decode()
    monkeypatch.setattr(tasks, "INLINE_AFTER_S", -1)  # the claim is now older than that
    html = staff_client.get(url, **HTMX).content.decode()
    assert "<h2>Disparities</h2>" in html and "Computing" not in html


def test_without_a_broker_the_request_computes_the_documents_itself(
    staff_client, batch, queued, monkeypatch
):
    _answer(batch, 6)

    def no_broker(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.page_documents_task, "apply_async", no_broker)
    url = reverse("metrics:study_summary", args=[batch.study.slug])
    html = staff_client.get(url, **HTMX).content.decode()
    assert "Agreement between annotators" in html


def test_the_pdf_is_made_by_a_job_while_a_page_waits_for_it(
    staff_client, batch, queued, monkeypatch, tmp_path
):
    _answer(batch, 6)
    url = reverse("report:study_report_pdf", args=[batch.study.slug])
    wait = staff_client.get(url)
    assert wait.status_code == 202
    html = wait.content.decode()
    assert "PDF is being made" in html and 'http-equiv="refresh"' in html
    assert 'hx-trigger="every 2s"' in html
    poll = staff_client.get(url, **HTMX)
    assert poll.status_code == 200 and "started" in poll.content.decode()
    assert [task for task, _ in queued] == [tasks.report_pdf_task]

    # The worker meets a machine without Chromium: the page says so, once, in one line.
    monkeypatch.setenv("ACRB_CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setattr("shutil.which", lambda name: None)
    task, args = queued[0]
    task(*args)
    failed = staff_client.get(url, **HTMX).content.decode()
    assert "could not be made" in failed and "every 2s" not in failed
    assert staff_client.get(url).status_code == 503


@pytest.mark.browser
def test_the_pdf_job_makes_the_file_and_the_poll_sends_the_browser_to_it(
    staff_client, batch, queued
):
    _answer(batch, 6)
    url = reverse("report:study_report_pdf", args=[batch.study.slug])
    staff_client.get(url)
    task, args = queued[0]
    task(*args)
    poll = staff_client.get(url, **HTMX)
    assert poll.status_code == 204 and poll["HX-Redirect"] == url
    pdf = staff_client.get(url)
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def test_answers_arriving_while_a_computation_is_queued_queue_no_backlog(
    staff_client, batch, queued
):
    _answer(batch, 4)
    url = reverse("metrics:study_summary", args=[batch.study.slug])
    staff_client.get(url, **HTMX)
    for _ in range(3):  # annotators keep answering while the page polls
        _answer(batch, 1)
        staff_client.get(url, **HTMX)
    assert len(queued) == 1  # one computation in flight per study, not one per state
    task, args = queued.pop()
    task(*args)  # the worker computes today's data and releases the study's claim
    _answer(batch, 1)
    html = staff_client.get(url, **HTMX).content.decode()
    assert "before the newest answers" in html  # the last figures, with their age
    assert len(queued) == 1  # and the newest state is queued again
