"""Harmful controls on the annotation side: intent in manifests and exports, batches that
leave them out unless staff opt in, the content warning and declining without penalty."""

import pytest
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from annotations import selectors, services
from annotations.exports import datasets as export_datasets
from annotations.imports import importers
from annotations.imports.manifest import ManifestInvalid
from annotations.models import Annotation, Assignment, Item
from annotations.staff import audit_context as study_settings
from tests.support.django_fixtures import client_for, manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db


@pytest.fixture
def controls_study(study, tmp_path):
    root = tmp_path / "controls"
    lines = []
    for i in range(6):
        write_image(root / f"{i}.png")
        intent = {"intent": "harmful"} if i >= 3 else {}
        lines.append(manifest_line(f"item-{i}", image=f"{i}.png", base=f"bp{i % 3}", **intent))
    importers.items_import(study=study, manifest=write_manifest(root, lines))
    return study


def test_manifest_intent_is_read_and_benign_by_default(controls_study):
    intents = dict(Item.objects.filter(study=controls_study).values_list("item_id", "intent"))
    assert intents == {f"item-{i}": "harmful" if i >= 3 else "benign" for i in range(6)}


def test_an_unknown_intent_names_the_line_and_field(study, tmp_path):
    root = tmp_path / "bad"
    write_image(root / "0.png")
    manifest = write_manifest(root, [manifest_line("x", image="0.png", intent="evil")])
    with pytest.raises(ManifestInvalid) as raised:
        importers.items_import(study=study, manifest=manifest)
    error = raised.value.errors[0]
    assert (error.line, error.field) == (1, "intent") and "'evil'" in error.message
    assert not Item.objects.filter(study=study).exists()


def test_batches_leave_harmful_controls_out_unless_staff_opt_in(controls_study, annotators):
    batch = services.batch_create(
        request=services.batch_request_build(
            study=controls_study,
            name="b",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
        )
    )
    assert set(Assignment.objects.filter(batch=batch).values_list("item__intent", flat=True)) == {
        "benign"
    }
    staff = annotators[3].user
    assert study_settings.study_harmful_controls_set(
        study=controls_study, show=True, changed_by=staff
    )
    # a PUT: the same value again changes nothing and writes no second history row
    assert not study_settings.study_harmful_controls_set(
        study=controls_study, show=True, changed_by=staff
    )
    assert LogEntry.objects.count() == 1
    controls_study.refresh_from_db()
    batch = services.batch_create(
        request=services.batch_request_build(
            study=controls_study,
            name="b2",
            policy="k_overlap",
            annotators=annotators[2:3],
            overlap_k=1,
            seed=1,
        )
    )
    intents = list(Assignment.objects.filter(batch=batch).values_list("item__intent", flat=True))
    assert intents.count("harmful") == 3


def test_staff_set_the_opt_in_on_the_batch_page(staff_client, controls_study):
    url = reverse("staff:batch_create", args=[controls_study.slug])
    page = staff_client.get(url)
    assert b"3 harmful-control items" in page.content and b"leave them out" in page.content
    setting = reverse("staff:study_harmful_controls", args=[controls_study.slug])
    assert staff_client.post(setting, {"show": "1"}).status_code == 302
    controls_study.refresh_from_db()
    assert controls_study.harmful_to_annotators
    staff_client.post(setting, {"show": "yes"})
    controls_study.refresh_from_db()
    assert controls_study.harmful_to_annotators  # a bad value changes nothing
    assert staff_client.get(setting).status_code == 405


def opted_in_batch(study, annotators):
    study.harmful_to_annotators = True
    study.save()
    return services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="b",
            policy="k_overlap",
            annotators=annotators[:1],
            overlap_k=1,
            seed=1,
        )
    )


def test_harmful_items_show_a_content_warning_and_can_be_declined(controls_study, annotators):
    batch = opted_in_batch(controls_study, annotators)
    harmful = Assignment.objects.filter(batch=batch, item__intent="harmful").first()
    benign = Assignment.objects.filter(batch=batch, item__intent="benign").first()
    client = client_for(annotators[0])
    page = client.get(reverse("annotations:assignment", args=[harmful.pk])).content.decode()
    assert "Content warning" in page and "Decline this item (no penalty)" in page
    assert 'id="reveal"' in page
    assert (
        "Content warning"
        not in client.get(reverse("annotations:assignment", args=[benign.pk])).content.decode()
    )
    before = selectors.batch_progress_for_annotator(annotator=annotators[0], batch_id=batch.pk)
    response = client.post(reverse("annotations:decline", args=[harmful.pk]))
    assert response.status_code == 302
    harmful.refresh_from_db()
    assert not harmful.is_active
    after = selectors.batch_progress_for_annotator(annotator=annotators[0], batch_id=batch.pk)
    assert after.total == before.total - 1 and after.done == before.done
    # only harmful controls can be declined
    assert client.post(reverse("annotations:decline", args=[benign.pk])).status_code == 404
    benign.refresh_from_db()
    assert benign.is_active


def test_exports_carry_the_intent(controls_study, annotators):
    batch = opted_in_batch(controls_study, annotators)
    for assignment in Assignment.objects.filter(batch=batch):
        if assignment.item.intent == "harmful":
            services.assignment_reveal(assignment=assignment)
        services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    rows = export_datasets.annotation_export(study=controls_study).rows
    assert {row["intent"] for row in rows} == {"benign", "harmful"}
    assert "intent" in export_datasets.annotation_export(study=controls_study).columns
    judgments = selectors.judgment_rows(study=controls_study)
    assert all("intent" in row for row in judgments)


def test_the_api_carries_the_intent(controls_study, annotators, staff_client):
    batch = opted_in_batch(controls_study, annotators)
    for assignment in Assignment.objects.filter(batch=batch):
        if assignment.item.intent == "harmful":
            services.assignment_reveal(assignment=assignment)
        services.annotation_submit(assignment=assignment, hard_refusal=True, cue_label=None)
    items = staff_client.get(reverse("api:study_items", args=[controls_study.slug])).json()
    rows = items["results"] if isinstance(items, dict) else items
    assert {row["intent"] for row in rows} == {"benign", "harmful"}
    answers = staff_client.get(reverse("api:study_annotations", args=[controls_study.slug])).json()
    rows = answers["results"] if isinstance(answers, dict) else answers
    assert {row["intent"] for row in rows} == {"benign", "harmful"}


def test_the_content_warning_speaks_the_annotators_language(controls_study, annotators):
    batch = opted_in_batch(controls_study, annotators)
    harmful = Assignment.objects.filter(batch=batch, item__intent="harmful").first()
    client = client_for(annotators[0])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    page = client.get(reverse("annotations:assignment", args=[harmful.pk])).content.decode()
    assert "Avertissement" in page and "Refuser cet élément (sans pénalité)" in page
    assert "Content warning" not in page


# --- the reveal rule (issue 36 §3): no answer to a harmful control before its image was opened


def harmful_assignment(controls_study, annotators):
    batch = opted_in_batch(controls_study, annotators)
    return Assignment.objects.filter(batch=batch, item__intent="harmful").order_by("position")[0]


@pytest.mark.parametrize("htmx", [False, True], ids=["no-js", "htmx"])
def test_a_harmful_control_takes_no_answer_before_its_image_is_opened(
    htmx, controls_study, annotators
):
    harmful = harmful_assignment(controls_study, annotators)
    client = client_for(annotators[0])
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    page = client.get(reverse("annotations:assignment", args=[harmful.pk])).content.decode()
    # Neither the image nor the prompt is on the page, and the answers are disabled.
    assert 'id="item-image"' not in page and harmful.item.prompt not in page
    assert 'id="reveal"' in page and "<fieldset disabled>" in page
    for answer in ("retained", "refusal"):
        response = client.post(
            reverse("annotations:answer", args=[harmful.pk]), {"answer": answer}, **headers
        )
        assert response.status_code == (200 if htmx else 400)
        assert "Open the image first" in response.content.decode()
    assert not Annotation.objects.exists()
    harmful.refresh_from_db()
    assert harmful.answered_at is None and harmful.revealed_at is None
    # ...nor is its image served before then (no peeking at the URL, no preloading it).
    image = reverse("annotations:item_image", args=[harmful.item_id])
    assert client.get(image).status_code == 404

    response = client.post(reverse("annotations:reveal", args=[harmful.pk]), **headers)
    if htmx:
        assert response.status_code == 200 and 'id="item-image"' in response.content.decode()
    else:
        assert response.status_code == 302
        assert response["Location"] == reverse("annotations:assignment", args=[harmful.pk])
    harmful.refresh_from_db()
    first_reveal = harmful.revealed_at
    assert first_reveal is not None
    client.post(reverse("annotations:reveal", args=[harmful.pk]))  # a PUT: the first time stays
    harmful.refresh_from_db()
    assert harmful.revealed_at == first_reveal
    page = client.get(reverse("annotations:assignment", args=[harmful.pk])).content.decode()
    assert 'id="item-image"' in page and harmful.item.prompt in page and 'id="reveal"' not in page
    assert client.get(image).status_code == 200
    response = client.post(
        reverse("annotations:answer", args=[harmful.pk]), {"answer": "erased"}, **headers
    )
    assert response.status_code == (200 if htmx else 302)
    annotation = Annotation.objects.get(assignment=harmful)
    assert annotation.cue_label == "erased"


def test_the_service_refuses_an_unrevealed_harmful_answer_and_declining_needs_no_reveal(
    controls_study, annotators
):
    from django.core.exceptions import ValidationError

    harmful = harmful_assignment(controls_study, annotators)
    with pytest.raises(ValidationError, match="Open the image first"):
        services.annotation_submit(assignment=harmful, hard_refusal=True, cue_label=None)
    benign = Assignment.objects.filter(batch=harmful.batch, item__intent="benign").first()
    services.annotation_submit(assignment=benign, hard_refusal=True, cue_label=None)  # no rule
    with pytest.raises(ValidationError):
        services.assignment_reveal(assignment=benign)  # only harmful controls are revealed
    client = client_for(annotators[0])
    assert client.post(reverse("annotations:reveal", args=[benign.pk])).status_code == 404
    assert client.post(reverse("annotations:decline", args=[harmful.pk])).status_code == 302
    harmful.refresh_from_db()
    assert not harmful.is_active and harmful.revealed_at is None


def test_the_item_before_a_harmful_control_does_not_preload_its_image(controls_study, annotators):
    batch = opted_in_batch(controls_study, annotators)
    client = client_for(annotators[0])
    rows = list(Assignment.objects.filter(batch=batch).order_by("position"))
    for before, after in zip(rows, rows[1:], strict=False):
        if after.item.intent != "harmful":
            continue
        page = client.get(reverse("annotations:assignment", args=[before.pk])).content.decode()
        assert reverse("annotations:item_image", args=[after.item_id]) not in page
