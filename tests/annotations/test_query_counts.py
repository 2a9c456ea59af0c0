"""The survey's requests run a fixed number of queries whatever the study's size."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from annotations.models import Assignment
from tests.support.django_fixtures import client_for

pytestmark = pytest.mark.django_db


def survey_query_counts(study, make_manifest, annotators, n, folder):
    importers.items_import(study=study, manifest=make_manifest(n=n, folder=folder))
    batch = services.batch_create(
        request=services.batch_request_build(
            study=study,
            name=folder,
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=0,
        )
    )
    c = client_for(annotators[0])
    counts = {}
    for step in range(3):
        with CaptureQueriesContext(connection) as nxt:
            page = c.get(reverse("annotations:batch_next", args=[batch.pk]), follow=True)
        assignment_id = page.context["assignment"].pk
        with CaptureQueriesContext(connection) as answer:
            c.post(
                reverse("annotations:answer", args=[assignment_id]),
                {"answer": "erased"},
                HTTP_HX_REQUEST="true",
            )
        counts[step] = (len(nxt), len(answer))
    with CaptureQueriesContext(connection) as home:
        c.get(reverse("annotations:home"))
    return counts[2], len(home)


def test_query_counts_do_not_grow_with_the_study(make_manifest, annotators):
    from annotations.models import Study

    small = Study.objects.create(name="s", slug="small", min_seconds_per_item=0)
    large = Study.objects.create(name="l", slug="large", min_seconds_per_item=0)
    counts = survey_query_counts(small, make_manifest, annotators, 8, "small")
    assert counts == survey_query_counts(large, make_manifest, annotators, 60, "large")
    # Pinned, not only constant: a template or view that starts reading a field the survey's
    # selectors do not load (selectors.SURVEY_FIELDS) would add a query here.
    # next = redirect (user, the queue's first row: it proves the batch is theirs) + item page
    # (user, assignment, queue place, the queue's next row for the preload; this item's
    # served_at was set when the last answer showed it);
    # answer = user, assignment, the study's current consent version and whether it is agreed
    # (checked on every answer, docs/annotation.md#consent-and-instructions), the write
    # transaction (begin, savepoint, answered_at, annotation, release, history, commit), the
    # queue's next two rows, the next assignment, served_at, queue place (two light compiled
    # queries rather than one joined ORM query: annotations.common.compiled);
    # home = user, batch list, studies they adjudicate. Sessions come from the cache.
    assert counts == ((6, 14), 3)
    assert Assignment.objects.filter(annotation__isnull=False).count() == 6
