"""Annotator quality a lead can act on: pause (open items back to the pool), reassign, exclude
labels from statistics (kept in the export), the pages and who may see them
(docs/annotation.md#annotator-quality)."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotations import selectors, services
from annotations.exports import datasets as export_datasets
from annotations.models import Annotator, AnnotatorLabelExclusion, AnnotatorReview, Assignment, Item
from annotations.quality import actions as quality
from scoring.metrics import document as metrics
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_way(imported_study, annotators):
    """Six items, k = 2 over three annotators: each item has one annotator who lacks it."""
    return services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="b3",
            policy="k_overlap",
            annotators=annotators[:3],
            overlap_k=2,
            seed=3,
        )
    )


def _answer_all(annotator, batch, cue="retained"):
    for assignment in Assignment.objects.filter(annotator=annotator, batch=batch, is_active=True):
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label=cue)


def test_pause_hands_open_items_to_the_batch_s_other_annotators(three_way, annotators, staff_user):
    ann0 = annotators[0]
    open_before = Assignment.objects.filter(annotator=ann0, is_active=True).count()
    assert open_before > 0
    review = quality.annotator_pause(annotator=ann0, user=staff_user, reason="careless")
    ann0.refresh_from_db()
    assert not ann0.is_active
    assert review.moved_assignments == open_before and review.action == "pause"
    assert not Assignment.objects.filter(annotator=ann0, is_active=True).exists()
    moved = Assignment.objects.filter(reassigned_from__annotator=ann0, is_active=True)
    assert moved.count() == open_before
    assert set(moved.values_list("annotator__user__username", flat=True)) <= {"ann1", "ann2"}
    # Still two annotators per item, never the same one twice.
    for item in Item.objects.filter(study=three_way.study):
        active = item.assignments.filter(is_active=True)
        assert active.count() == 2
        assert active.values("annotator").distinct().count() == 2
    with pytest.raises(ValidationError, match="already paused"):
        quality.annotator_pause(annotator=ann0, user=staff_user)
    # A paused annotator has no work to see.
    assert client_for(ann0).get(reverse("annotations:home")).status_code in (200, 302)
    assert selectors.annotator_for_user(ann0.user) is None
    quality.annotator_resume(annotator=ann0, user=staff_user)
    assert Annotator.objects.get(pk=ann0.pk).is_active
    assert list(
        AnnotatorReview.objects.filter(annotator=ann0).values_list("action", flat=True)
    ) == [
        "resume",
        "pause",
    ]


def test_items_nobody_else_can_take_are_withdrawn(batch, annotators, staff_user):
    """k = 2 over two annotators: the other one already has every item."""
    review = quality.annotator_pause(annotator=annotators[0], user=staff_user)
    assert review.moved_assignments == 6
    assert not Assignment.objects.filter(annotator=annotators[0], is_active=True).exists()
    assert Assignment.objects.filter(annotator=annotators[1], is_active=True).count() == 6


def test_reassign_keeps_the_annotator_active(three_way, annotators, staff_user):
    review = quality.annotator_reassign(
        annotator=annotators[1], study=three_way.study, user=staff_user
    )
    assert review.moved_assignments > 0 and Annotator.objects.get(pk=annotators[1].pk).is_active
    with pytest.raises(ValidationError, match="no open items"):
        quality.annotator_reassign(annotator=annotators[1], study=three_way.study, user=staff_user)


def test_excluded_labels_stay_in_the_export_and_leave_statistics(batch, annotators, staff_user):
    study = batch.study
    _answer_all(annotators[0], batch)
    _answer_all(annotators[1], batch, cue="erased")
    with pytest.raises(ValidationError, match="reason"):
        quality.annotator_labels_exclude(
            annotator=annotators[1], study=study, reason="", user=staff_user
        )
    quality.annotator_labels_exclude(
        annotator=annotators[1], study=study, reason="spam", user=staff_user
    )
    rows = export_datasets.annotation_export(study=study).rows
    assert len(rows) == 12
    assert {r["annotator"] for r in rows if r["annotator_labels_excluded"]} == {"ann1"}
    frame, _ = metrics.study_metric_frames(study=study)
    assert set(frame["annotator"]) == {"ann0"} and len(frame) == 6
    document = metrics.metrics_document(study=study, n_resamples=0, label_models=())
    assert [a["annotator"] for a in document["labels"]["excluded_annotators"]] == ["ann1"]
    fingerprint = selectors.study_data_fingerprint(study=study)
    quality.annotator_labels_include(annotator=annotators[1], study=study, user=staff_user)
    assert selectors.study_data_fingerprint(study=study) != fingerprint
    frame, _ = metrics.study_metric_frames(study=study)
    assert len(frame) == 12


def test_quality_pages_are_staff_only(batch, annotators, staff_client):
    _answer_all(annotators[0], batch)
    study = batch.study
    listing = reverse("quality:annotators", args=[study.slug])
    detail = reverse("quality:annotator", args=[study.slug, annotators[0].pk])
    page = staff_client.get(listing)
    assert page.status_code == 200 and "ann0" in page.content.decode()
    assert staff_client.get(detail).status_code == 200
    assert (
        staff_client.get(reverse("quality:annotator", args=[study.slug, 999999])).status_code == 404
    )
    assert staff_client.get(reverse("quality:annotators", args=["no-such"])).status_code == 404
    annotator_client = client_for(annotators[0])
    assert annotator_client.get(listing).status_code == 403
    action = reverse("quality:annotator_action", args=[study.slug, annotators[1].pk, "pause"])
    assert annotator_client.post(action).status_code == 403
    assert Annotator.objects.get(pk=annotators[1].pk).is_active
    bogus = reverse("quality:annotator_action", args=[study.slug, annotators[1].pk, "explode"])
    assert staff_client.post(bogus).status_code == 404


def test_page_actions_exclude_and_grant(batch, annotators, staff_client):
    study, ann1 = batch.study, annotators[1]
    url = lambda action: reverse("quality:annotator_action", args=[study.slug, ann1.pk, action])  # noqa: E731
    staff_client.post(url("exclude"), {"reason": ""})
    assert not AnnotatorLabelExclusion.objects.exists()
    assert not AnnotatorReview.objects.exists()
    assert staff_client.post(url("exclude"), {"reason": "too fast"}).status_code == 302
    assert AnnotatorReview.objects.get().action == "exclude"
    _answer_all(ann1, batch)  # a grant waits until their own items are answered (blinding)
    assert staff_client.post(url("grant")).status_code == 302
    queue = client_for(ann1).get(reverse("adjudication:queue", args=[study.slug]))
    assert queue.status_code == 200


def test_pause_in_an_expertise_batch_prefers_the_same_group(imported_study, annotators, staff_user):
    second_korean = services.annotator_create(username="ann-k2", group="Korean")
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="ex",
            policy="expertise",
            annotators=[annotators[0], second_korean, annotators[1]],
            overlap_k=1,
            seed=2,
        )
    )
    open_rows = Assignment.objects.filter(batch=batch, annotator=annotators[0], is_active=True)
    n_open = open_rows.count()
    assert n_open > 0
    quality.annotator_pause(annotator=annotators[0], user=staff_user)
    moved = Assignment.objects.filter(batch=batch, reassigned_from__annotator=annotators[0])
    assert moved.count() == n_open
    assert set(moved.values_list("annotator__user__username", flat=True)) == {"ann-k2"}
