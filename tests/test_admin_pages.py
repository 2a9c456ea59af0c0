"""Every table registered in the admin lists and opens its add page (or refuses it) for a
superuser: no admin page answers 500 (the read-only tables of evidence refuse adding)."""

import pytest
from django.contrib import admin
from django.urls import reverse

from annotations.qualification.models import QualificationAttempt, QualificationReview

pytestmark = pytest.mark.django_db


def test_every_admin_changelist_renders(admin_client):
    for model in admin.site._registry:
        meta = model._meta
        response = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        assert response.status_code == 200, f"{meta.label}: {response.status_code}"
        response = admin_client.get(reverse(f"admin:{meta.app_label}_{meta.model_name}_add"))
        assert response.status_code in (200, 403), f"{meta.label} add: {response.status_code}"


def test_the_qualification_tables_are_read_only_evidence(admin_client):
    for model in (QualificationAttempt, QualificationReview):
        assert model in admin.site._registry
        url = reverse(f"admin:annotations_{model._meta.model_name}_add")
        assert admin_client.get(url).status_code == 403
