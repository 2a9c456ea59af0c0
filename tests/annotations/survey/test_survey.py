"""The annotator survey: permissions, answers, edits with history, double submits, blinding."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from annotations import selectors, services
from annotations.imports import importers
from annotations.models import Annotation, AnnotationHistory, Assignment
from annotations.survey.views import survey_context
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _first(batch, annotator):
    return Assignment.objects.filter(batch=batch, annotator=annotator).order_by("position").first()


def test_login_required_everywhere(batch, annotators):
    assignment = _first(batch, annotators[0])
    anonymous = Client()
    for url in [
        reverse("annotations:home"),
        reverse("annotations:guidelines"),
        reverse("annotations:batch_next", args=[batch.pk]),
        reverse("annotations:assignment", args=[assignment.pk]),
        reverse("annotations:item_image", args=[assignment.item_id]),
    ]:
        response = anonymous.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    assert (
        anonymous.post(
            reverse("annotations:answer", args=[assignment.pk]), {"answer": "retained"}
        ).status_code
        == 302
    )
    assert Annotation.objects.count() == 0


def test_annotator_sees_own_batches_and_is_sent_to_the_next_item(batch, annotators):
    c = client_for(annotators[0])
    home = c.get(reverse("annotations:home"))
    assert b"b1" in home.content
    response = c.get(reverse("annotations:batch_next", args=[batch.pk]))
    assert response["Location"] == reverse(
        "annotations:assignment", args=[_first(batch, annotators[0]).pk]
    )


def test_other_annotators_assignment_image_and_batch_are_404(batch, annotators):
    mine = _first(batch, annotators[0])
    outsider = client_for(annotators[2])  # not in the batch
    assert outsider.get(reverse("annotations:assignment", args=[mine.pk])).status_code == 404
    assert (
        outsider.post(
            reverse("annotations:answer", args=[mine.pk]), {"answer": "erased"}
        ).status_code
        == 404
    )
    assert outsider.post(reverse("annotations:skip", args=[mine.pk])).status_code == 404
    assert outsider.get(reverse("annotations:item_image", args=[mine.item_id])).status_code == 404
    assert outsider.get(reverse("annotations:batch_next", args=[batch.pk])).status_code == 404
    assert Annotation.objects.count() == 0


def test_image_is_served_to_assigned_annotator_and_staff(batch, annotators, staff_client):
    mine = _first(batch, annotators[0])
    response = client_for(annotators[0]).get(reverse("annotations:item_image", args=[mine.item_id]))
    assert response.status_code == 200 and b"".join(response.streaming_content)[:4] == b"\x89PNG"
    assert (
        staff_client.get(reverse("annotations:item_image", args=[mine.item_id])).status_code == 200
    )
    assert (
        staff_client.get(reverse("annotations:item_source_image", args=[mine.item_id])).status_code
        == 404
    )


def test_submit_creates_one_annotation_with_history_then_moves_on(batch, annotators):
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    c.get(reverse("annotations:assignment", args=[assignment.pk]))
    response = c.post(
        reverse("annotations:answer", args=[assignment.pk]),
        {"answer": "erased", "note": " blurry "},
    )
    assert response.status_code == 302
    annotation = Annotation.objects.get(assignment=assignment)
    assert (
        annotation.hard_refusal,
        annotation.cue_label,
        annotation.note,
        annotation.revision,
    ) == (False, "erased", "blurry", 1)
    assert annotation.served_at is not None and annotation.seconds_to_answer >= 0
    assert response["Location"] != reverse("annotations:assignment", args=[assignment.pk])
    assert AnnotationHistory.objects.filter(annotation=annotation).count() == 1


def test_double_submission_yields_one_annotation(batch, annotators):
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    url = reverse("annotations:answer", args=[assignment.pk])
    for _ in range(3):
        c.post(url, {"answer": "refusal"})
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.revision == 1 and annotation.hard_refusal and annotation.cue_label == ""
    assert AnnotationHistory.objects.count() == 1


def test_editing_keeps_every_version(batch, annotators):
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    url = reverse("annotations:answer", args=[assignment.pk])
    c.post(url, {"answer": "retained"})
    c.post(url, {"answer": "substituted"})
    c.post(url, {"answer": "refusal"})
    annotation = Annotation.objects.get(assignment=assignment)
    assert annotation.revision == 3 and annotation.hard_refusal
    history = list(
        AnnotationHistory.objects.filter(annotation=annotation).values_list(
            "revision", "hard_refusal", "cue_label"
        )
    )
    assert history == [(1, False, "retained"), (2, False, "substituted"), (3, True, "")]


@pytest.mark.parametrize(
    "data", [{}, {"answer": "maybe"}, {"answer": "retained", "note": "x" * 6000}]
)
def test_invalid_answer_changes_nothing(batch, annotators, data):
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    response = c.post(reverse("annotations:answer", args=[assignment.pk]), data)
    assert response.status_code == 400
    assert Annotation.objects.count() == 0


def test_reassigned_assignment_no_longer_takes_answers(batch, annotators):
    assignment = _first(batch, annotators[0])
    services.assignments_reassign(
        batch=batch, from_annotator=annotators[0], to_annotators=[annotators[2], annotators[3]]
    )
    response = client_for(annotators[0]).post(
        reverse("annotations:answer", args=[assignment.pk]), {"answer": "retained"}
    )
    assert response.status_code == 404
    assert Annotation.objects.count() == 0


def test_csrf_is_enforced_on_answers(batch, annotators):
    c = Client(enforce_csrf_checks=True)
    c.force_login(annotators[0].user)
    assignment = _first(batch, annotators[0])
    assert (
        c.post(
            reverse("annotations:answer", args=[assignment.pk]), {"answer": "retained"}
        ).status_code
        == 403
    )
    page = c.get(reverse("annotations:assignment", args=[assignment.pk]))
    token = page.cookies["csrftoken"].value
    ok = c.post(
        reverse("annotations:answer", args=[assignment.pk]),
        {"answer": "retained"},
        HTTP_X_CSRFTOKEN=token,
    )
    assert ok.status_code == 302 and Annotation.objects.count() == 1


def test_htmx_submit_returns_the_next_item_fragment(batch, annotators):
    c = client_for(annotators[0])
    first = _first(batch, annotators[0])
    response = c.post(
        reverse("annotations:answer", args=[first.pk]),
        {"answer": "retained"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="survey"') and "<html" not in body
    upcoming = selectors.assignment_next(annotator=annotators[0], batch_id=batch.pk)
    assert response["HX-Push-Url"] == reverse("annotations:assignment", args=[upcoming.pk])


def test_last_answer_redirects_to_the_batch_end(batch, annotators):
    c = client_for(annotators[0])
    rows = list(Assignment.objects.filter(batch=batch, annotator=annotators[0]))
    for row in rows[:-1]:
        c.post(reverse("annotations:answer", args=[row.pk]), {"answer": "retained"})
    response = c.post(
        reverse("annotations:answer", args=[rows[-1].pk]),
        {"answer": "retained"},
        HTTP_HX_REQUEST="true",
    )
    assert response["HX-Redirect"] == reverse("annotations:batch_next", args=[batch.pk])
    done = c.get(reverse("annotations:batch_next", args=[batch.pk]))
    assert b"are answered" in done.content


def test_skipped_items_come_back_last(batch, annotators):
    c = client_for(annotators[0])
    rows = list(
        Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by("position")
    )
    c.post(reverse("annotations:skip", args=[rows[0].pk]))
    assert selectors.assignment_next(annotator=annotators[0], batch_id=batch.pk).pk == rows[1].pk
    for row in rows[1:]:
        c.post(reverse("annotations:answer", args=[row.pk]), {"answer": "erased"})
    assert selectors.assignment_next(annotator=annotators[0], batch_id=batch.pk).pk == rows[0].pk


def test_fast_answers_are_flagged(batch, annotators):
    batch.study.min_seconds_per_item = 60
    batch.study.save()
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    c.get(reverse("annotations:assignment", args=[assignment.pk]))
    c.post(reverse("annotations:answer", args=[assignment.pk]), {"answer": "retained"})
    assert Annotation.objects.get().too_fast


def test_annotator_never_sees_judgments_or_gold_answers(batch, annotators):
    assignment = _first(batch, annotators[0])
    services.item_set_gold(item=assignment.item, hard_refusal=False, cue="substituted")
    services.annotation_submit(
        assignment=Assignment.objects.get(item=assignment.item, annotator=annotators[1]),
        hard_refusal=True,
        cue_label=None,
    )
    page = (
        client_for(annotators[0])
        .get(reverse("annotations:assignment", args=[assignment.pk]))
        .content.decode()
    )
    assert "vlm-a" not in page and "judge" not in page.lower()
    assert "gold" not in page.lower() and "ann1" not in page
    assert 'value="substituted" data-key="4" checked' not in page


def test_answered_at_is_set_with_every_first_answer(batch, annotators, imported_study):
    """The queue index relies on answered_at; it must match the existence of an answer."""
    c = client_for(annotators[0])
    rows = list(
        Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by("position")
    )
    c.post(reverse("annotations:answer", args=[rows[0].pk]), {"answer": "erased"})
    c.post(reverse("annotations:answer", args=[rows[0].pk]), {"answer": "retained"})
    importers.annotations_import(
        study=imported_study,
        csv_text="item_id,annotator,annotator_group,hard_refusal,cue\nitem-0,zed,,true,\n",
        create_annotators=True,
    )
    for row in Assignment.objects.select_related("annotation"):
        assert (row.answered_at is not None) == hasattr(row, "annotation"), row.pk


def test_item_page_preloads_the_image_of_the_item_after_it(batch, annotators):
    c = client_for(annotators[0])
    first, second = Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by(
        "position"
    )[:2]
    page = c.get(reverse("annotations:assignment", args=[first.pk])).content.decode()
    preload = f'<link rel="preload" as="image" href="{reverse("annotations:item_image", args=[second.item_id])}">'
    assert preload in page
    fragment = c.post(
        reverse("annotations:answer", args=[first.pk]),
        {"answer": "retained"},
        HTTP_HX_REQUEST="true",
    )
    third = Assignment.objects.filter(batch=batch, annotator=annotators[0]).order_by("position")[2]
    assert reverse("annotations:item_image", args=[third.item_id]) in fragment.content.decode()


def test_a_rejected_answer_shows_the_same_item_again_with_the_error(batch, annotators):
    """The answer POST loads only what taking an answer needs; its error page loads the rest."""
    c = client_for(annotators[0])
    assignment = _first(batch, annotators[0])
    total = Assignment.objects.filter(batch=batch, annotator=annotators[0]).count()
    url = reverse("annotations:answer", args=[assignment.pk])
    page = c.post(url, {"answer": "no-such-label"})
    fragment = c.post(url, {"answer": "no-such-label"}, HTTP_HX_REQUEST="true")
    assert (page.status_code, fragment.status_code) == (400, 200)
    for response in (page, fragment):
        body = response.content.decode()
        assert escape(assignment.item.prompt) in body
        assert f"0 / {total}" in body
        assert "Choose an answer (keys 1–4)." in body
    assert Annotation.objects.count() == 0


def test_the_survey_context_only_reads_and_the_page_records_the_first_serving(batch, annotators):
    assignment = _first(batch, annotators[0])
    with CaptureQueriesContext(connection) as queries:
        survey_context(annotators[0], assignment)
    writes = [q["sql"] for q in queries if not q["sql"].lstrip().upper().startswith("SELECT")]
    assert writes == []
    assignment.refresh_from_db()
    assert assignment.served_at is None
    client_for(annotators[0]).get(reverse("annotations:assignment", args=[assignment.pk]))
    assignment.refresh_from_db()
    assert assignment.served_at is not None


def test_the_tab_title_names_the_items_place_counted_from_one(batch, annotators):
    """Issue 36 §3: the first item's tab read "Item 0/45" (the answers done, not its place)."""
    rows = list(Assignment.objects.filter(batch=batch, annotator=annotators[0]))
    total = len(rows)
    client = client_for(annotators[0])
    first = client.get(reverse("annotations:assignment", args=[rows[0].pk])).content.decode()
    assert f"<title>Item 1/{total}</title>" in first
    response = client.post(
        reverse("annotations:answer", args=[rows[0].pk]),
        {"answer": "retained"},
        HTTP_HX_REQUEST="true",
    )
    assert f'data-title="Item 2/{total}"' in response.content.decode()
    back = client.get(reverse("annotations:assignment", args=[rows[0].pk])).content.decode()
    assert f"<title>Item 1/{total}</title>" in back  # its place, answered or not
    last = client.get(reverse("annotations:assignment", args=[rows[-1].pk])).content.decode()
    assert f"<title>Item {total}/{total}</title>" in last
