"""The study's audit context on a staff page: the service, its history rows, the form's per-field
errors, and the links from the study page and the report where a field is missing."""

import pytest
from django.contrib.admin.models import LogEntry
from django.template.loader import render_to_string
from django.urls import reverse

from annotations.staff.audit_context import (
    TEXT_MAX_CHARS,
    AuditContextInvalid,
    study_audit_context_history,
    study_audit_context_update,
)

pytestmark = pytest.mark.django_db

VALUES = {
    "system_kind": "high_risk",
    "intended_purpose": "rank applicants for a salary band",
    "annotator_recruitment": "two bilingual students per culture, via the university",
    "annotator_pay": "EUR 15 per hour",
}


def url(study):
    return reverse("staff:study_audit_context", args=[study.slug])


def test_the_service_saves_the_changed_fields_and_writes_one_history_row(study, staff_user):
    changed = study_audit_context_update(study=study, values=VALUES, changed_by=staff_user)
    assert changed == list(VALUES)
    study.refresh_from_db()
    assert {field: getattr(study, field) for field in VALUES} == VALUES
    (entry,) = study_audit_context_history(study=study)
    assert entry.user == staff_user and entry.object_id == str(study.pk)
    assert entry.get_change_message() == (
        "Changed system kind, intended purpose, annotator recruitment and annotator pay."
    )
    # A PUT: the same values again change nothing and record nothing.
    assert study_audit_context_update(study=study, values=VALUES, changed_by=staff_user) == []
    changed = study_audit_context_update(
        study=study, values={**VALUES, "annotator_pay": "  EUR 16 per hour "}, changed_by=staff_user
    )
    assert changed == ["annotator_pay"]
    study.refresh_from_db()
    assert study.annotator_pay == "EUR 16 per hour"
    assert LogEntry.objects.count() == 2
    assert study_audit_context_history(study=study)[0].get_change_message() == (
        "Changed annotator pay."
    )


def test_bad_values_name_each_field_and_change_nothing(study, staff_user):
    bad = {
        "system_kind": "robot",
        "annotator_pay": "x" * (TEXT_MAX_CHARS + 1),
        "name": "renamed",
        "intended_purpose": "fine on its own",
    }
    with pytest.raises(AuditContextInvalid) as raised:
        study_audit_context_update(study=study, values=bad, changed_by=staff_user)
    errors = raised.value.errors
    assert set(errors) == {"system_kind", "annotator_pay", "name"}
    assert errors["system_kind"].startswith("unknown system kind 'robot'; expected one of:")
    assert errors["annotator_pay"] == f"{TEXT_MAX_CHARS + 1} characters; at most {TEXT_MAX_CHARS}"
    assert all("\n" not in message for message in errors.values())
    study.refresh_from_db()
    assert (study.name, study.system_kind, study.intended_purpose) == ("Test study", "", "")
    assert not LogEntry.objects.exists()


def test_staff_edit_the_context_on_the_page(study, staff_client, staff_user):
    page = staff_client.get(url(study))
    assert page.status_code == 200
    html = page.content.decode()
    for field in VALUES:
        assert f'name="{field}"' in html, field
    assert "No changes recorded yet." in html
    response = staff_client.post(url(study), VALUES, follow=True)
    assert response.redirect_chain == [(url(study), 302)]
    html = response.content.decode()
    assert "Audit context saved: system audited, intended purpose" in html
    assert "EUR 15 per hour" in html and "staff · Changed system kind" in html
    study.refresh_from_db()
    assert study.system_kind == "high_risk" and study.annotator_pay == "EUR 15 per hour"


def test_bad_input_shows_one_line_per_field_and_changes_nothing(study, staff_client):
    form = {**VALUES, "system_kind": "robot", "annotator_pay": "x" * (TEXT_MAX_CHARS + 1)}
    response = staff_client.post(url(study), form)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert set(errors) == {"system_kind", "annotator_pay"}
    assert errors["system_kind"] == [
        "Select a valid choice. robot is not one of the available choices."
    ]
    assert errors["annotator_pay"] == [f"{TEXT_MAX_CHARS + 1} characters; at most {TEXT_MAX_CHARS}"]
    study.refresh_from_db()
    assert (study.system_kind, study.annotator_pay, study.intended_purpose) == ("", "", "")
    assert not LogEntry.objects.exists()


def test_the_study_page_shows_the_context_links_the_form_and_says_when_it_is_incomplete(
    study, staff_client, staff_user
):
    detail = reverse("staff:study_detail", args=[study.slug])
    html = staff_client.get(detail).content.decode()
    assert f'href="{url(study)}">Edit the audit context</a>' in html
    assert '<span class="flag">(incomplete)</span>' in html
    study_audit_context_update(study=study, values=VALUES, changed_by=staff_user)
    html = staff_client.get(detail).content.decode()
    assert "(incomplete)" not in html
    assert "high-risk system under Annex III" in html and "EUR 15 per hour" in html


@pytest.mark.parametrize("standalone", [False, True])
def test_the_report_links_the_form_where_a_field_is_missing(study, standalone):
    people = {
        "recruitment": "",
        "pay": "EUR 15 per hour",
        "guidelines": {"template": "survey", "sha256": "ab" * 32, "note": "", "text": ""},
        "groups": [],
        "batches": [],
    }
    report = {"people": people, "data_statement": {}, "study": {"slug": study.slug}}
    context = {"report": report, "standalone": standalone}
    html = render_to_string("staff/partials/report_people.html", context)
    link = f'<a href="{url(study)}">record it</a>'
    assert html.count(link) == (0 if standalone else 1)  # recruitment only: pay is stated
    legal = {
        "statement": "",
        "system_kind": "",
        "system_kind_label": "not stated",
        "intended_purpose": "pay decisions",
        "route_note": "",
        "obligations": [],
    }
    html = render_to_string(
        "staff/partials/report_legal.html", {**context, "report": {**report, "legal": legal}}
    )
    assert html.count(link) == (0 if standalone else 1)  # system kind only
