"""A real headless Chromium labels three items with the keyboard only, edits one, and the
database holds exactly those answers with the edit's history."""

import pytest

from annotations import services
from annotations.imports import importers
from annotations.models import Annotation, AnnotationHistory, Assignment

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def current_assignment(page) -> int:
    return int(page.locator("#survey").get_attribute("data-assignment"))


def answer_with_keys(page, key: str) -> None:
    before = current_assignment(page)
    page.keyboard.press(key)
    page.keyboard.press("Enter")
    # A selector wait, not wait_for_function: the page's CSP forbids the eval that needs.
    page.locator(f'#survey:not([data-assignment="{before}"])').wait_for()


def test_annotator_labels_three_items_by_keyboard_and_edits_one(
    live_server, browser_page, study, make_manifest
):
    importers.items_import(study=study, manifest=make_manifest(n=4))
    annotator = services.annotator_create(
        username="kbd", password="keyboard-only-1", group="Korean"
    )
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="browser batch",
            policy="k_overlap",
            annotators=[annotator],
            overlap_k=1,
            seed=3,
        )
    )
    queue = list(
        Assignment.objects.filter(batch=batch).order_by("position").values_list("pk", flat=True)
    )
    page = browser_page

    page.goto(f"{live_server.url}/accounts/login/")
    page.keyboard.type("kbd")
    page.keyboard.press("Tab")
    page.keyboard.type("keyboard-only-1")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/batches/{batch.pk}/next/")
    assert current_assignment(page) == queue[0]

    answer_with_keys(page, "2")  # retained
    answer_with_keys(page, "3")  # erased
    answer_with_keys(page, "1")  # refusal
    assert current_assignment(page) == queue[3]
    assert page.locator("#progress").get_attribute("value") == "3"

    page.keyboard.press("ArrowLeft")  # back to the third item
    page.locator(f'#survey[data-assignment="{queue[2]}"]').wait_for()
    assert page.locator('input[value="refusal"]').is_checked()
    answer_with_keys(page, "4")  # edit: substituted

    answers = {a.assignment_id: a for a in Annotation.objects.all()}
    assert set(answers) == set(queue[:3])
    assert (answers[queue[0]].hard_refusal, answers[queue[0]].cue_label) == (False, "retained")
    assert (answers[queue[1]].hard_refusal, answers[queue[1]].cue_label) == (False, "erased")
    edited = answers[queue[2]]
    assert (edited.hard_refusal, edited.cue_label, edited.revision) == (False, "substituted", 2)
    history = list(
        AnnotationHistory.objects.filter(annotation=edited).values_list(
            "revision", "hard_refusal", "cue_label"
        )
    )
    assert history == [(1, True, ""), (2, False, "substituted")]
    assert all(a.served_at is not None for a in answers.values())
