"""Scope and blinding (issue 20 item 9): a label exclusion holds in the study it was made on
only, and records that study; an adjudication grant never shows an annotator other answers or
judge outputs of items still in their own queue."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from annotations import services
from annotations.adjudication import disputes as adjudication
from annotations.imports import importers
from annotations.models import AnnotatorReview, Assignment
from annotations.quality import actions as quality
from scoring.metrics import document as metrics
from tests.support.django_fixtures import client_for


def _answer_all(annotator, batch, cue="retained"):
    for row in Assignment.objects.filter(annotator=annotator, batch=batch, is_active=True):
        services.annotation_submit(assignment=row, hard_refusal=False, cue_label=cue)


@pytest.fixture
def second_study(annotators, make_manifest):
    study = services.study_create(name="Second", slug="second", min_seconds_per_item=0.0)
    importers.items_import(study=study, manifest=make_manifest(folder="second"))
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name="b2",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=3,
        )
    )
    return batch


@pytest.mark.django_db
def test_an_exclusion_on_one_study_leaves_the_other_alone(batch, second_study, annotators):
    for b in (batch, second_study):
        _answer_all(annotators[0], b)
        _answer_all(annotators[1], b, cue="erased")
    quality.annotator_labels_exclude(
        annotator=annotators[1], study=batch.study, reason="spam", user=None
    )
    excluded, _ = metrics.study_metric_frames(study=batch.study)
    untouched, _ = metrics.study_metric_frames(study=second_study.study)
    assert set(excluded["annotator"]) == {"ann0"}
    assert set(untouched["annotator"]) == {"ann0", "ann1"}
    review = AnnotatorReview.objects.get(action="exclude")
    assert review.study == batch.study


@pytest.mark.django_db
def test_a_grant_is_refused_while_the_annotator_has_open_items(batch, annotators):
    with pytest.raises(ValidationError, match="open item"):
        adjudication.adjudicator_grant(study=batch.study, annotator=annotators[0], user=None)
    _answer_all(annotators[0], batch)
    adjudication.adjudicator_grant(study=batch.study, annotator=annotators[0], user=None)


@pytest.mark.django_db
def test_items_back_in_an_adjudicators_queue_stay_hidden(batch, annotators, imported_study):
    _answer_all(annotators[0], batch, cue="erased")
    _answer_all(annotators[1], batch, cue="retained")  # every item disputed
    judge = services.annotator_create(username="judge-ann", password="pw-for-tests-1")
    adjudication.adjudicator_grant(study=batch.study, annotator=judge, user=None)
    client = client_for(judge)
    queue_url = reverse("adjudication:queue", args=[batch.study.slug])
    item = Assignment.objects.filter(batch=batch).first().item
    item_url = reverse("adjudication:item", args=[batch.study.slug, item.pk])
    assert item.item_id in client.get(queue_url).content.decode()
    assert client.get(item_url).status_code == 200
    # A later batch puts the item in the adjudicator's own queue: blinded again.
    services.batch_create(
        request=services.batch_request_build(
            study=batch.study,
            name="later",
            policy="k_overlap",
            annotators=[judge],
            overlap_k=1,
            seed=4,
        )
    )
    assert item.item_id not in client.get(queue_url).content.decode()
    assert client.get(item_url).status_code == 404
