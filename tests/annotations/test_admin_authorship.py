"""The admin cannot move an answer to another annotator, nor store a file past the image
checks (issue 20 items 11 and 1)."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import models

from annotations.models import Annotation, Annotator, Assignment
from annotations.services import annotation_submit


@pytest.fixture
def superuser_client(client, db):
    user = get_user_model().objects.create_superuser("root", "root@example.org", "pw-root-1")
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_the_admin_cannot_move_an_answer_to_another_annotator(batch, annotators, superuser_client):
    row = Assignment.objects.filter(batch=batch, annotator=annotators[0]).first()
    annotation_submit(assignment=row, hard_refusal=False, cue_label="erased")
    url = f"/admin/annotations/assignment/{row.pk}/change/"
    superuser_client.post(
        url,
        {
            "batch": batch.pk,
            "item": row.item_id,
            "annotator": annotators[1].pk,
            "position": row.position,
            "is_active": "",
            "reassigned_from": "",
            "served_at_0": "",
            "served_at_1": "",
            "skipped_at_0": "",
            "skipped_at_1": "",
        },
    )
    row.refresh_from_db()
    assert row.annotator_id == annotators[0].pk and row.is_active
    assert Annotation.objects.get(assignment=row).assignment.annotator_id == annotators[0].pk
    other = get_user_model().objects.create_user("someone-else")
    superuser_client.post(
        f"/admin/annotations/annotator/{annotators[0].pk}/change/",
        {"user": other.pk, "group": "Korean", "expertise": "", "is_active": "on"},
    )
    assert Annotator.objects.get(pk=annotators[0].pk).user_id == annotators[0].user_id


def test_no_admin_form_takes_a_file_or_an_answers_author():
    open_doors = []
    for model, model_admin in admin.site._registry.items():
        readonly = set(model_admin.get_readonly_fields(_request(), obj=model()))
        for field in model._meta.fields:
            if isinstance(field, models.FileField) and field.name not in readonly:
                open_doors.append(f"{model.__name__}.{field.name}")
    assert Assignment in admin.site._registry
    assert "annotator" in admin.site._registry[Assignment].get_readonly_fields(_request())
    assert open_doors == []


def _request():
    from django.test import RequestFactory

    return RequestFactory().get("/admin/")
