"""The optional qualification round (docs/annotation.md#qualification-round): the rules, the
services, the server-side gate (direct POSTs), the pages, the export and the command."""

import io

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations import selectors, services
from annotations.exports import datasets as export_datasets
from annotations.imports import importers
from annotations.models import (
    Annotation,
    AnnotationHistory,
    Assignment,
    Batch,
    Item,
    QualificationAttempt,
    QualificationReview,
)
from annotations.policies import PolicyError
from annotations.qualification import attempts, rules, status
from tests.annotations.survey.test_survey_language import english_leftovers
from tests.support.django_fixtures import client_for

GOLD = 10
ROUND = rules.Requirement(items=3, pass_mark=0.6, attempts=2)


# --- rules (no database) ---------------------------------------------------------------------


def test_requirement_problems_one_line_each():
    bad = rules.Requirement(items=0, pass_mark=1.5, attempts=0)
    problems = rules.requirement_problems(bad, gold_available=3)
    assert len(problems) == 3
    assert any("at least 1 gold item" in p for p in problems)
    assert any("pass mark" in p and "(0, 1]" in p for p in problems)
    assert any("at least 1 attempt" in p for p in problems)
    too_many = rules.requirement_problems(rules.Requirement(5, 0.8), gold_available=3)
    assert too_many == [
        "qualification: 5 gold items per attempt, but the study has 3 gold item(s) to draw from"
    ]
    assert rules.requirement_problems(rules.Requirement(3, 1.0), gold_available=3) == []
    assert rules.requirement_problems(rules.Requirement(3, 0.0), gold_available=3)


def _record(correct: bool):
    gold = {"gold_hard_refusal": False, "gold_cue": "retained"}
    return {"hard_refusal": False, "cue": "retained" if correct else "erased", **gold}


def test_attempt_result_pass_mark_is_inclusive():
    four_of_five = [_record(True)] * 4 + [_record(False)]
    result = rules.attempt_result(four_of_five, pass_mark=0.8)
    assert (result.correct, result.answered, result.passed) == (4, 5, True)
    assert result.score == pytest.approx(0.8)
    assert not rules.attempt_result(four_of_five, pass_mark=0.81).passed
    # A refusal matches a refusal whatever the cue (labels.gold_correct, shared with gold accuracy).
    refusal = {"hard_refusal": True, "cue": None, "gold_hard_refusal": True, "gold_cue": ""}
    assert rules.attempt_result([refusal], pass_mark=1.0).passed
    assert not rules.attempt_result([], pass_mark=0.5).passed


def test_attempt_score_matches_sklearn_accuracy():
    from sklearn.metrics import accuracy_score

    rng = np.random.default_rng(4)
    labels = ("refusal", "retained", "erased", "substituted")
    gold = rng.choice(labels, size=40)
    given = np.where(rng.random(40) < 0.7, gold, rng.choice(labels, size=40))

    def record(answer, truth):
        return {
            "hard_refusal": answer == "refusal",
            "cue": None if answer == "refusal" else answer,
            "gold_hard_refusal": truth == "refusal",
            "gold_cue": "" if truth == "refusal" else truth,
        }

    result = rules.attempt_result(map(record, given, gold), pass_mark=0.5)
    assert result.score == pytest.approx(accuracy_score(gold, given))


def test_attempts_allowed_and_gold_draw():
    assert rules.attempts_allowed(1, []) == 1
    assert rules.attempts_allowed(1, [2, 3]) == 3
    assert rules.attempts_allowed(4, [2]) == 4
    pool = list(range(10, 30))
    first = rules.gold_draw(pool, 5, np.random.default_rng([7, 1, 1]))
    again = rules.gold_draw(pool, 5, np.random.default_rng([7, 1, 1]))
    assert first == again and len(set(first)) == 5 and set(first) <= set(pool)
    with pytest.raises(ValueError):
        rules.gold_draw(pool[:2], 3, np.random.default_rng(0))


# --- services ---------------------------------------------------------------------------------


@pytest.fixture
def gold_study(study, make_manifest):
    importers.items_import(study=study, manifest=make_manifest(n=20))
    for item in Item.objects.filter(study=study).order_by("pk")[:GOLD]:
        services.item_set_gold(item=item, hard_refusal=False, cue="retained")
    return study


def _batch(study, annotators, requirement=ROUND, **options):
    return services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="qualified",
            policy="k_overlap",
            annotators=annotators,
            seed=11,
            qualification_items=requirement.items,
            qualification_pass_mark=requirement.pass_mark,
            qualification_attempts=requirement.attempts,
            **({"overlap_k": 2} | options),
        )
    )


@pytest.fixture
def qual_batch(gold_study, annotators):
    return _batch(gold_study, annotators[:2])


def _answer_attempt(attempt, *, correct: int):
    """Answer the attempt's items: the first ``correct`` as the gold label, the rest wrong."""
    rows = Assignment.objects.filter(qualification_attempt=attempt).order_by("position")
    for index, assignment in enumerate(rows):
        assignment = selectors.assignment_for_annotator(
            annotator=assignment.annotator, assignment_id=assignment.pk, for_answer=True
        )
        services.annotation_submit(
            assignment=assignment,
            hard_refusal=False,
            cue_label="retained" if index < correct else "erased",
        )
    attempt.refresh_from_db()
    return attempt


def test_off_by_default(batch):
    assert batch.qualification_items == 0
    assert status.requirement_of(batch) is None
    assert not QualificationAttempt.objects.exists()


def test_batch_stores_the_requirement_and_creates_no_attempt(qual_batch, annotators):
    assert (qual_batch.qualification_items, qual_batch.qualification_pass_mark) == (3, 0.6)
    assert qual_batch.qualification_attempts_allowed == 2
    # Attempts start when the annotator starts them; nothing is queued ahead.
    assert not Assignment.objects.filter(qualification_attempt__isnull=False).exists()
    assert selectors.assignment_next(annotator=annotators[0], batch_id=qual_batch.pk) is None


def test_batch_refuses_too_few_gold_items(gold_study, annotators):
    with pytest.raises(PolicyError) as error:
        _batch(gold_study, annotators[:2], rules.Requirement(GOLD + 1, 1.5))
    lines = str(error.value).splitlines()
    assert len(lines) == 2 and "gold item" in lines[0] and "pass mark" in lines[1]
    assert not Batch.objects.exists()


def test_batch_refuses_when_the_batch_gold_leaves_too_few_unseen(gold_study, annotators):
    with pytest.raises(PolicyError, match="not yet assigned"):
        _batch(gold_study, annotators[:2], rules.Requirement(4, 0.5), gold_per_annotator=7)
    assert not Batch.objects.exists()


def test_pass_opens_the_batch(qual_batch, annotators):
    annotator = annotators[0]
    attempt = attempts.attempt_start(batch=qual_batch, annotator=annotator)
    gold_rows = Assignment.objects.filter(qualification_attempt=attempt)
    assert gold_rows.count() == 3 and all(a.item.is_gold for a in gold_rows)
    assert attempts.attempt_start(batch=qual_batch, annotator=annotator) == attempt  # idempotent
    served = selectors.assignment_next(annotator=annotator, batch_id=qual_batch.pk)
    assert served.qualification_attempt_id == attempt.pk
    attempt = _answer_attempt(attempt, correct=2)  # 2/3 >= 0.6
    assert attempt.passed and (attempt.correct, attempt.answered) == (2, 3)
    assert attempt.finished_at is not None
    served = selectors.assignment_next(annotator=annotator, batch_id=qual_batch.pk)
    assert served is not None and served.qualification_attempt_id is None
    state = status.annotator_state(batch=qual_batch, annotator=annotator)
    assert state.qualified and state.status == "passed"


def test_batch_progress_and_arrows_leave_the_round_out(qual_batch, annotators):
    annotator = annotators[0]
    own = Assignment.objects.filter(
        batch=qual_batch, annotator=annotator, qualification_attempt__isnull=True
    )
    n_batch_items = own.count()
    _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=3)
    progress = selectors.batch_progress_for_annotator(annotator=annotator, batch_id=qual_batch.pk)
    assert (progress.done, progress.total) == (0, n_batch_items)
    [(_, home_progress)] = [
        row for row in selectors.annotator_batch_list(annotator=annotator) if row[0] == qual_batch
    ]
    assert (home_progress.done, home_progress.total) == (0, n_batch_items)
    last = own.order_by("-position").first()
    place = selectors.assignment_queue_place(assignment=last)
    assert place.next_id is None and place.progress.total == n_batch_items


def test_fail_keeps_the_batch_locked_and_a_retry_uses_fresh_gold(qual_batch, annotators):
    annotator = annotators[0]
    first = _answer_attempt(
        attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=1
    )
    assert first.passed is False
    assert selectors.assignment_next(annotator=annotator, batch_id=qual_batch.pk) is None
    state = status.annotator_state(batch=qual_batch, annotator=annotator)
    assert state.status == "failed" and state.attempts_left == 1 and state.can_start
    second = attempts.attempt_start(batch=qual_batch, annotator=annotator)
    assert second.number == 2
    first_items = set(first.assignments.values_list("item_id", flat=True))
    second_items = set(second.assignments.values_list("item_id", flat=True))
    assert not first_items & second_items
    _answer_attempt(second, correct=0)
    with pytest.raises(ValidationError, match="No attempts are left"):
        attempts.attempt_start(batch=qual_batch, annotator=annotator)
    assert status.annotator_state(batch=qual_batch, annotator=annotator).status == (
        "failed, no attempts left"
    )


def test_answers_are_final_once_the_round_ends_and_history_is_kept(qual_batch, annotators):
    annotator = annotators[0]
    attempt = attempts.attempt_start(batch=qual_batch, annotator=annotator)
    first = Assignment.objects.filter(qualification_attempt=attempt).order_by("position")[0]
    services.annotation_submit(assignment=first, hard_refusal=False, cue_label="erased")
    services.annotation_submit(assignment=first, hard_refusal=False, cue_label="retained")
    stored = Annotation.objects.get(assignment=first)
    assert stored.revision == 2
    assert AnnotationHistory.objects.filter(annotation=stored).count() == 2
    _answer_attempt(attempt, correct=3)
    first.refresh_from_db()
    with pytest.raises(ValidationError, match="no longer be changed"):
        services.annotation_submit(assignment=first, hard_refusal=True, cue_label=None)
    assert Annotation.objects.get(assignment=first).cue_label == "retained"


def test_service_refuses_a_batch_item_before_qualifying(qual_batch, annotators):
    annotator = annotators[0]
    item = Assignment.objects.filter(
        batch=qual_batch, annotator=annotator, qualification_attempt__isnull=True
    ).first()
    with pytest.raises(ValidationError, match="qualification round first"):
        services.annotation_submit(assignment=item, hard_refusal=True, cue_label=None)
    with pytest.raises(ValidationError, match="qualification round first"):
        services.assignment_skip(assignment=item)
    assert not Annotation.objects.filter(assignment=item).exists()


def test_staff_grant_and_override_are_recorded(qual_batch, annotators, staff_user):
    annotator = annotators[0]
    for _ in range(2):
        _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=0)
    review = attempts.attempt_grant(
        batch=qual_batch, annotator=annotator, attempts_allowed=3, user=staff_user, reason="typo"
    )
    assert review.acted_by == staff_user and review.acted_at is not None
    # The same total again (a repeated POST) adds nothing.
    assert (
        attempts.attempt_grant(
            batch=qual_batch, annotator=annotator, attempts_allowed=3, user=staff_user
        )
        is None
    )
    third = attempts.attempt_start(batch=qual_batch, annotator=annotator)
    assert third.number == 3
    override = attempts.qualification_override(
        batch=qual_batch, annotator=annotator, user=staff_user, reason="trained in person"
    )
    assert override.action == QualificationReview.Action.OVERRIDE
    assert override.acted_by == staff_user
    # The running attempt's open gold items leave the queue; the batch's items open.
    assert not third.assignments.filter(is_active=True, answered_at__isnull=True).exists()
    served = selectors.assignment_next(annotator=annotator, batch_id=qual_batch.pk)
    assert served is not None and served.qualification_attempt_id is None
    assert status.annotator_state(batch=qual_batch, annotator=annotator).status == (
        "qualified by staff"
    )
    assert (
        attempts.qualification_override(batch=qual_batch, annotator=annotator, user=staff_user)
        is None
    )


def test_an_attempt_whose_last_item_was_excluded_is_scored(qual_batch, annotators, staff_user):
    annotator = annotators[0]
    attempt = attempts.attempt_start(batch=qual_batch, annotator=annotator)
    rows = list(attempt.assignments.order_by("position"))
    for assignment in rows[:2]:
        services.annotation_submit(assignment=assignment, hard_refusal=False, cue_label="retained")
    services.item_exclude(item=rows[2].item, reason="broken", user=staff_user)
    client = client_for(annotator)
    response = client.get(reverse("annotations:batch_next", args=[qual_batch.pk]))
    assert response["Location"] == reverse("qualification:page", args=[qual_batch.pk])
    attempt.refresh_from_db()
    assert attempt.passed and (attempt.correct, attempt.answered) == (2, 2)


def test_reassigning_leaves_a_running_attempt_alone(gold_study, annotators):
    leaving, staying = annotators[0], annotators[1]
    batch = _batch(gold_study, [leaving], overlap_k=1)
    attempt = attempts.attempt_start(batch=batch, annotator=leaving)
    moved = services.assignments_reassign(
        batch=batch, from_annotator=leaving, to_annotators=[staying]
    )
    assert moved == 10  # the batch's own items, not the attempt's
    assert attempt.assignments.filter(is_active=True).count() == 3
    assert not Assignment.objects.filter(
        annotator=staying, item__in=attempt.assignments.values("item_id")
    ).exists()


def test_qualification_answers_leave_statistics_and_gold_accuracy(gold_study, annotators):
    annotator = annotators[0]
    batch = _batch(gold_study, annotators[:2], gold_per_annotator=1)
    attempt = _answer_attempt(attempts.attempt_start(batch=batch, annotator=annotator), correct=3)
    regular_gold = Assignment.objects.get(
        batch=batch, annotator=annotator, item__is_gold=True, qualification_attempt__isnull=True
    )
    services.annotation_submit(assignment=regular_gold, hard_refusal=True, cue_label=None)
    # Statistics (and the report's gold records) see only the batch's gold answer.
    counted = selectors.annotation_rows(study=gold_study, include_gold=True)
    assert [r["qualification_attempt"] for r in counted] == [None]
    assert selectors.annotation_rows(study=gold_study) == []
    assert selectors.gold_accuracy(study=gold_study) == [
        {"annotator": annotator.user.username, "n": 1, "correct": 0, "accuracy": 0.0}
    ]
    # The export keeps every answer, the qualification ones flagged with their attempt.
    exported = export_datasets.annotation_export(study=gold_study).rows
    flagged = [r for r in exported if r["qualification_attempt"] is not None]
    assert len(flagged) == 3 and {r["qualification_attempt"] for r in flagged} == {attempt.number}
    assert all(r["is_gold"] for r in flagged)


# --- the gate over HTTP (direct requests) ----------------------------------------------------


def _batch_item(batch, annotator):
    return Assignment.objects.filter(
        batch=batch, annotator=annotator, qualification_attempt__isnull=True
    ).first()


def test_direct_post_to_a_batch_item_is_refused(qual_batch, annotators):
    annotator = annotators[0]
    client = client_for(annotator)
    item = _batch_item(qual_batch, annotator)
    answer = reverse("annotations:answer", args=[item.pk])
    response = client.post(answer, {"answer": "refusal"})
    assert response.status_code == 302
    assert response["Location"] == reverse("annotations:batch_next", args=[qual_batch.pk])
    response = client.post(answer, {"answer": "refusal"}, HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == reverse("annotations:batch_next", args=[qual_batch.pk])
    assert client.post(reverse("annotations:skip", args=[item.pk])).status_code == 302
    assert not Annotation.objects.filter(assignment=item).exists()
    item.refresh_from_db()
    assert item.skipped_at is None
    image = reverse("annotations:item_image", args=[item.item_id])
    assert client.get(image).status_code == 404
    # Nor is it shown: the page sends the annotator back to the round.
    response = client.get(reverse("annotations:assignment", args=[item.pk]))
    assert response.status_code == 302 and "batch_next" not in response["Location"]


def test_direct_post_is_taken_once_qualified(qual_batch, annotators):
    annotator = annotators[0]
    _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=3)
    item = _batch_item(qual_batch, annotator)
    client = client_for(annotator)
    response = client.post(reverse("annotations:answer", args=[item.pk]), {"answer": "refusal"})
    assert response.status_code == 302
    assert Annotation.objects.filter(assignment=item).exists()
    assert client.get(reverse("annotations:item_image", args=[item.item_id])).status_code == 200


# --- the pages ----------------------------------------------------------------------------------


def test_survey_flow_intro_items_and_result(qual_batch, annotators):
    annotator = annotators[0]
    client = client_for(annotator)
    page = reverse("qualification:page", args=[qual_batch.pk])
    response = client.get(reverse("annotations:batch_next", args=[qual_batch.pk]))
    assert response.status_code == 302 and response["Location"] == page
    intro = client.get(page).content.decode()
    assert "Qualification round" in intro and "3 items" in intro and "60%" in intro
    assert "2 attempts" in intro
    response = client.post(reverse("qualification:start", args=[qual_batch.pk]))
    assert response["Location"] == reverse("annotations:batch_next", args=[qual_batch.pk])
    item_url = client.get(response["Location"])["Location"]
    item_page = client.get(item_url).content.decode()
    assert 'id="qualification-banner"' in item_page and "attempt 1" in item_page
    assert "0 / 3" in item_page  # the round's progress, not the batch's
    attempt = QualificationAttempt.objects.get(annotator=annotator)
    rows = list(attempt.assignments.order_by("position"))
    for assignment in rows:
        client.get(reverse("annotations:assignment", args=[assignment.pk]))
        response = client.post(
            reverse("annotations:answer", args=[assignment.pk]), {"answer": "erased"}
        )
    assert response.status_code == 302 and response["Location"] == page
    result = client.get(page).content.decode()
    assert 'id="qualification-failed"' in result and "0 of 3" in result
    assert "1 attempt left" in result
    # Failed: the batch's items stay locked; the page offers the retry.
    response = client.get(reverse("annotations:batch_next", args=[qual_batch.pk]))
    assert response["Location"] == page


def test_pass_page_and_survey_in_french(qual_batch, annotators):
    annotator = annotators[0]
    _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=3)
    services.annotator_language_set(annotator=annotator, language="fr")
    client = client_for(annotator)
    client.cookies["django_language"] = "fr"
    page = client.get(reverse("qualification:page", args=[qual_batch.pk])).content.decode()
    assert 'id="qualification-passed"' in page
    assert "Vous avez réussi" in page
    other = annotators[1]
    other_client = client_for(other)
    other_client.cookies["django_language"] = "fr"
    intro = other_client.get(reverse("qualification:page", args=[qual_batch.pk]))
    assert "Tour de qualification" in intro.content.decode()
    # No English sentence of the catalogue is left on the French pages, the item page included.
    attempt = attempts.attempt_start(batch=qual_batch, annotator=other)
    item = attempt.assignments.order_by("position").first()
    item_page = other_client.get(reverse("annotations:assignment", args=[item.pk]))
    assert "Tour de qualification" in item_page.content.decode()
    for response in (page.encode(), intro.content, item_page.content):
        assert english_leftovers(response, "fr") == []


def test_existing_batch_serves_as_before(batch, annotators):
    client = client_for(annotators[0])
    response = client.get(reverse("annotations:batch_next", args=[batch.pk]))
    assert response.status_code == 302 and "/assignments/" in response["Location"]
    assert client.get(reverse("qualification:page", args=[batch.pk])).status_code == 404


def test_staff_batch_and_people_pages_show_the_state(qual_batch, annotators, staff_client):
    annotator = annotators[0]
    _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=1)
    page = staff_client.get(reverse("staff:batch_detail", args=[qual_batch.pk])).content.decode()
    assert 'id="qualification-status"' in page
    assert "failed" in page and "1/3" in page and "1/2 attempts" in page
    assert "not started" in page  # the second annotator
    people = staff_client.get(reverse("staff:people")).content.decode()
    assert "failed" in people and "1/3" in people


def test_staff_actions_over_http(qual_batch, annotators, staff_client, staff_user):
    annotator = annotators[0]
    for _ in range(2):
        _answer_attempt(attempts.attempt_start(batch=qual_batch, annotator=annotator), correct=0)
    grant = reverse("qualification:staff_grant", args=[qual_batch.pk, annotator.pk])
    staff_client.post(grant, {"attempts_allowed": "3", "reason": "unclear item"})
    staff_client.post(grant, {"attempts_allowed": "3"})  # a retried POST
    assert QualificationReview.objects.filter(action="grant_attempt").count() == 1
    response = staff_client.post(grant, {"attempts_allowed": "x"})
    assert response.status_code == 302
    override = reverse("qualification:staff_override", args=[qual_batch.pk, annotator.pk])
    staff_client.post(override, {"reason": "trained in person"})
    review = QualificationReview.objects.get(action="override")
    assert review.acted_by == staff_user and review.reason == "trained in person"
    page = staff_client.get(reverse("staff:batch_detail", args=[qual_batch.pk])).content.decode()
    assert "qualified by staff" in page and "trained in person" in page
    # Annotators cannot reach the staff actions.
    annotator_client = client_for(annotators[1])
    assert annotator_client.post(override).status_code == 403


def test_staff_form_validates_the_round(
    gold_study, annotators, staff_client, django_capture_on_commit_callbacks
):
    url = reverse("staff:batch_create", args=[gold_study.slug])
    data = {
        "name": "b",
        "policy": "k_overlap",
        "overlap_k": 1,
        "annotators": [annotators[0].pk],
        "gold_per_annotator": 0,
        "qualification_items": GOLD + 5,
        "qualification_pass_mark": 0,
        "qualification_attempts": 1,
    }
    response = staff_client.post(url, data)
    assert response.status_code == 400
    text = response.content.decode()
    assert "to draw from" in text and "pass mark" in text
    assert not Batch.objects.exists()
    data |= {"qualification_items": 2, "qualification_pass_mark": 0.5}
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(url, data)
    assert response.status_code == 302
    batch = Batch.objects.get()
    assert (batch.qualification_items, batch.qualification_pass_mark) == (2, 0.5)


# --- the command ----------------------------------------------------------------------------


def test_create_batch_command_with_a_qualification(gold_study, annotators):
    out = io.StringIO()
    args = ["--study", gold_study.slug, "--name", "q", "--annotators", "ann0,ann1", "--k", "2"]
    call_command(
        "create_batch",
        *args,
        "--qualification-items",
        "3",
        "--qualification-pass-mark",
        "0.8",
        "--qualification-attempts",
        "2",
        stdout=out,
    )
    batch = Batch.objects.get()
    assert (batch.qualification_items, batch.qualification_pass_mark) == (3, 0.8)
    assert batch.qualification_attempts_allowed == 2


def test_create_batch_command_refuses_a_bad_round(gold_study, annotators):
    args = ["--study", gold_study.slug, "--name", "q", "--annotators", "ann0,ann1"]
    # A pass mark outside (0, 1] is refused by the parser, in one line naming the flag.
    with pytest.raises(CommandError, match=r"^Error: argument --qualification-pass-mark: 2 "):
        call_command(
            "create_batch", *args, "--qualification-items", "99", "--qualification-pass-mark", "2"
        )
    # A round larger than the gold pool is the request check's: nothing is created.
    with pytest.raises(CommandError) as error:
        call_command(
            "create_batch", *args, "--qualification-items", "99", "--qualification-pass-mark", "0.8"
        )
    assert str(error.value) == (
        "nothing was created: qualification: 99 gold items per attempt, but the study has 10 gold"
        " item(s) to draw from"
    )
    with pytest.raises(CommandError, match="give a pass mark"):
        call_command("create_batch", *args, "--qualification-items", "2")
    assert not Batch.objects.exists()
