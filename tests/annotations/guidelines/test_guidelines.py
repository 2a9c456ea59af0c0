"""Guidelines with example images per answer: staff attach items, annotators of the study see
them, images only through the permission-checked image view."""

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import services
from annotations.guidelines import examples
from annotations.imports import importers
from annotations.models import Item, LabelExample, Study
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def _item(study, item_id):
    return Item.objects.get(study=study, item_id=item_id)


def test_set_is_idempotent_and_last_write_wins(imported_study, staff_user):
    first = examples.label_example_set(
        study=imported_study,
        item_id="item-1",
        label="erased",
        explanation="No cue.",
        user=staff_user,
    )
    again = examples.label_example_set(
        study=imported_study, item_id=" item-1 ", label="substituted", explanation=" Scarf. "
    )
    assert first.pk == again.pk
    row = LabelExample.objects.get()
    assert (row.label, row.explanation, row.created_by) == ("substituted", "Scarf.", staff_user)
    assert examples.label_example_remove(study=imported_study, example_id=row.pk) is True
    assert examples.label_example_remove(study=imported_study, example_id=row.pk) is False


@pytest.mark.parametrize(
    "item_id, label, explanation, message",
    [
        ("item-1", "maybe", "x", "not one of"),
        ("item-1", "erased", "   ", "explanation"),
        ("item-1", "erased", "x" * 501, "at most 500"),
        ("no-such", "erased", "x", "no item"),
        ("gold-0", "refusal", "x", "gold item"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    imported_study, item_id, label, explanation, message
):
    gold = _item(imported_study, "item-0")
    Item.objects.filter(pk=gold.pk).update(item_id="gold-0", is_gold=True, gold_hard_refusal=True)
    with pytest.raises(ValidationError, match=message):
        examples.label_example_set(
            study=imported_study, item_id=item_id, label=label, explanation=explanation
        )
    assert not LabelExample.objects.exists()


def test_item_of_another_study_is_refused(imported_study, make_manifest):
    other = services.study_create(name="Other", slug="other", overlap_k=1)
    importers.items_import(study=other, manifest=make_manifest(n=2, folder="other"))
    with pytest.raises(ValidationError, match="no item"):
        examples.label_example_set(
            study=other, item_id="item-4", label="erased", explanation="x"
        )  # item-4 exists only in imported_study
    assert not LabelExample.objects.exists()


def test_examples_by_answer_in_one_query(imported_study):
    for item_id, label in [("item-1", "erased"), ("item-2", "erased"), ("item-3", "refusal")]:
        examples.label_example_set(
            study=imported_study, item_id=item_id, label=label, explanation=f"why {item_id}"
        )
    with CaptureQueriesContext(connection) as queries:
        groups = examples.label_examples_by_answer(study=imported_study)
        shown = {g.answer: [(e.item.item_id, e.explanation) for e in g.examples] for g in groups}
        assert [e.n_assigned for g in groups for e in g.examples] == [0, 0, 0]
    assert len(queries) == 1
    assert [g.answer for g in groups] == ["refusal", "retained", "erased", "substituted"]
    assert shown == {
        "refusal": [("item-3", "why item-3")],
        "retained": [],
        "erased": [("item-1", "why item-1"), ("item-2", "why item-2")],
        "substituted": [],
    }


def test_annotator_sees_examples_and_their_images(batch, annotators, make_manifest):
    study = batch.study
    example = examples.label_example_set(
        study=study, item_id="item-2", label="substituted", explanation="A scarf, not a hijab."
    )
    outsider_study = Study.objects.create(name="Elsewhere", slug="elsewhere")
    c = client_for(annotators[0])
    page = c.get(reverse("guidelines:study", args=[study.slug]))
    assert page.status_code == 200
    body = page.content.decode()
    image_url = reverse("annotations:item_image", args=[example.item_id])
    assert image_url in body and "A scarf, not a hijab." in body
    assert c.get(image_url).status_code == 200
    assert c.get(reverse("guidelines:study", args=[outsider_study.slug])).status_code == 404

    # An annotator of no batch of this study sees neither the page nor the example's image.
    stranger = client_for(annotators[2])
    assert stranger.get(reverse("guidelines:study", args=[study.slug])).status_code == 404
    assert stranger.get(image_url).status_code == 404


def test_example_image_reaches_annotators_not_assigned_to_it(
    imported_study, annotators, make_manifest
):
    """The image view lets an annotator of the study see an example item outside their queue,
    and nothing else outside it."""
    batch = services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="b",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=1,
            seed=3,
        )
    )
    a = annotators[0]
    not_theirs = Item.objects.filter(study=imported_study).exclude(assignments__annotator=a)
    example_item, plain_item = not_theirs[0], not_theirs[1]
    c = client_for(a)
    url = reverse("annotations:item_image", args=[example_item.pk])
    assert c.get(url).status_code == 404
    examples.label_example_set(
        study=imported_study, item_id=example_item.item_id, label="erased", explanation="x"
    )
    assert c.get(url).status_code == 200
    assert c.get(reverse("annotations:item_image", args=[plain_item.pk])).status_code == 404
    # Staff are told that the other annotator, who labels this item, sees its answer.
    (erased,) = [g for g in examples.label_examples_by_answer(study=batch.study) if g.examples]
    assert erased.examples[0].n_assigned == 1


def test_staff_page_adds_and_removes(staff_client, imported_study):
    page_url = reverse("guidelines:staff_page", args=[imported_study.slug])
    assert staff_client.get(page_url).status_code == 200
    add = reverse("guidelines:staff_example_set", args=[imported_study.slug])
    response = staff_client.post(
        add, {"label": "erased", "item_id": "item-1", "explanation": "No wheelchair."}
    )
    assert response.status_code == 302
    example = LabelExample.objects.get()
    assert "No wheelchair." in staff_client.get(page_url).content.decode()
    bad = staff_client.post(add, {"label": "erased", "item_id": "nope", "explanation": "x"})
    assert bad.status_code == 400 and "has no item" in bad.content.decode()
    assert LabelExample.objects.count() == 1
    remove = reverse("guidelines:staff_example_remove", args=[example.pk])
    assert staff_client.post(remove).status_code == 302
    assert not LabelExample.objects.exists()
    assert staff_client.post(remove).status_code == 404
    detail = staff_client.get(reverse("staff:study_detail", args=[imported_study.slug]))
    assert page_url in detail.content.decode()


def test_the_study_guidelines_page_speaks_the_annotators_language(batch, annotators):
    """An annotator page like the survey: shown in the language the annotator chose."""
    c = client_for(annotators[0])
    c.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    body = c.get(reverse("guidelines:study", args=[batch.study.slug])).content.decode()
    assert "Exemples de réponses" in body and "Label examples" not in body
