"""Staff pages: scoring through the (eager) Celery task, progress, calibration, ROC, review."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations.models import AutomatedJudgment, BackgroundJob, Item
from scoring import tasks
from scoring.models import RefusalThreshold, ScoringBatch
from tests.scoring.conftest import RULES_JUDGE
from tests.scoring.test_calibration import JUDGE as CLIP_JUDGE
from tests.scoring.test_calibration import labelled_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def scoring_job(mixed_study, judges):

    judges(rules=RULES_JUDGE)
    return tasks.scoring_job_enqueue(study=mixed_study, judge_name="rules", batch_size=4)


def pages(study, job):
    slug = study.slug
    return [
        ("get", reverse("scoring:study_judges", args=[slug])),
        ("post", reverse("scoring:judge_score", args=[slug])),
        ("post", reverse("scoring:threshold_calibrate", args=[slug])),
        ("get", reverse("scoring:review_items", args=[slug])),
        ("get", reverse("scoring:roc_figure", args=[slug, "rules", "svg"])),
        ("get", reverse("scoring:job_progress", args=[job.pk])),
    ]


def test_every_page_needs_a_staff_account(client, django_user_model, mixed_study, scoring_job):
    for method, url in pages(mixed_study, scoring_job):
        response = getattr(client, method)(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    user = django_user_model.objects.create_user(username="annotator", password="pw-for-tests-1")
    client.force_login(user)
    for method, url in pages(mixed_study, scoring_job):
        assert getattr(client, method)(url).status_code == 403, url


def test_score_button_queues_batches_that_the_task_scores(
    staff_client, mixed_study, judges, django_capture_on_commit_callbacks
):
    judges(rules=RULES_JUDGE)
    page = staff_client.get(reverse("scoring:study_judges", args=[mixed_study.slug]))
    assert (
        page.status_code == 200
        and b'hx-post="' in page.content
        and b">Score</button>" in page.content
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("scoring:judge_score", args=[mixed_study.slug]),
            {"judge": "rules", "batch_size": 4},
            HTTP_HX_REQUEST="true",
        )
    assert response.status_code == 200
    job = BackgroundJob.objects.get(kind="score_study")
    # The fragment was rendered before the batches ran (after commit), so it polls.
    assert b'hx-trigger="every 1s"' in response.content and b"<html" not in response.content
    assert list(ScoringBatch.objects.filter(job=job).values_list("status", "done_items")) == [
        ("done", 4),
        ("done", 2),
    ]
    assert (job.status, job.done, job.total) == ("succeeded", 6, 6), job.errors
    assert AutomatedJudgment.objects.filter(item__study=mixed_study, judge="rules").count() == 6
    progress = staff_client.get(
        reverse("scoring:job_progress", args=[job.pk]), HTTP_HX_REQUEST="true"
    )
    assert b"6 / 6 items" in progress.content and b"<html" not in progress.content
    page = staff_client.get(reverse("scoring:study_judges", args=[mixed_study.slug]))
    assert b"rules@1" in page.content


def test_running_job_polls_every_second(staff_client, scoring_job):
    response = staff_client.get(reverse("scoring:job_progress", args=[scoring_job.pk]))
    assert scoring_job.status == "queued"
    assert b'hx-trigger="every 1s"' in response.content and b"<html" in response.content


def test_unknown_judge_is_a_400_and_queues_nothing(staff_client, mixed_study, judges):
    judges(rules=RULES_JUDGE)
    response = staff_client.post(
        reverse("scoring:judge_score", args=[mixed_study.slug]), {"judge": "nope", "batch_size": 4}
    )
    assert response.status_code == 400 and not BackgroundJob.objects.exists()


def test_calibration_page_shows_tau_and_serves_the_roc_figure(staff_client, study, judges):
    judges(**{"clip-refusal": CLIP_JUDGE})
    labelled_study(study)
    response = staff_client.post(
        reverse("scoring:threshold_calibrate", args=[study.slug]),
        {"judge": "clip-refusal", "criterion": "youden"},
        follow=True,
    )
    assert response.status_code == 200 and RefusalThreshold.objects.count() == 3
    assert "τ = " in response.content.decode() and b"roc/clip-refusal.svg" in response.content
    svg = staff_client.get(reverse("scoring:roc_figure", args=[study.slug, "clip-refusal", "svg"]))
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    png = staff_client.get(
        reverse("scoring:roc_figure", args=[study.slug, "clip-refusal", "png"]) + "?download=1"
    )
    assert png.content[:4] == b"\x89PNG" and "attachment" in png["Content-Disposition"]
    csv = staff_client.get(
        reverse("scoring:roc_figure", args=[study.slug, "clip-refusal", "csv"])
    ).content.decode()
    lines = csv.strip().splitlines()
    assert lines[0] == "generator,fpr,tpr,threshold"
    assert len(lines) - 1 == sum(len(row.roc_points) for row in RefusalThreshold.objects.all())
    missing = staff_client.get(reverse("scoring:roc_figure", args=[study.slug, "other", "svg"]))
    assert missing.status_code == 404


def test_review_list_shows_flagged_items(staff_client, mixed_study):
    Item.objects.filter(item_id="blank").update(needs_review=True)
    response = staff_client.get(reverse("scoring:review_items", args=[mixed_study.slug]))
    assert (
        response.status_code == 200
        and b"blank" in response.content
        and b"photo-0" not in response.content
    )


def test_selectors_run_a_fixed_number_of_queries(mixed_study, django_assert_num_queries):
    from scoring import selectors

    for item in Item.objects.filter(study=mixed_study):
        AutomatedJudgment.objects.create(item=item, judge="x", hard_refusal=False)
    with django_assert_num_queries(1):
        selectors.judgment_counts(study=mixed_study)
    with django_assert_num_queries(2):
        selectors.review_items(study=mixed_study)
    with django_assert_num_queries(1):
        selectors.items_for_scoring(study=mixed_study)


def test_queued_batches_are_never_smaller_than_the_models_batch(mixed_study, judges):
    """--batch-size 2 with a CLIP batch of 4: tasks of 4 items, so CLIP sees batches of 4."""

    clip_judge = CLIP_JUDGE | {"clip": CLIP_JUDGE["clip"] | {"batch_size": 4}}
    judges(clip=clip_judge)
    job = tasks.scoring_job_enqueue(study=mixed_study, judge_name="clip", batch_size=2)
    assert job.params["batch_size"] == 4
    assert [len(b.item_ids) for b in ScoringBatch.objects.filter(job=job)] == [4, 2]
