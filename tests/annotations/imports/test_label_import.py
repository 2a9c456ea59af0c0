"""The label import as steps (issue 34 §2): parse, check every problem at once, write in bulk;
and what issue 36 found it let through (a header-only file, a missing column told once per
problem, staff accounts as annotators, a form sent four times at once)."""

import io

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations.imports import importers
from annotations.imports.manifest import LabelsInvalid, ManifestInvalid, parse_annotation_csv
from annotations.models import Annotation, AnnotationHistory, Annotator, Assignment, Batch
from tests.annotations.survey.test_concurrency import run_together

pytestmark = pytest.mark.django_db
HEADER = "item_id,annotator,annotator_group,hard_refusal,cue\n"


def _command(study, path, *flags):
    call_command("import_annotations", str(path), *flags, study=study.slug, stdout=io.StringIO())


def _one_line(exc_info, path) -> str:
    message = str(exc_info.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    return message


def _nothing_written():
    return not (
        Batch.objects.exists() or Assignment.objects.exists() or Annotation.objects.exists()
    )


# --- step 1: the file as a whole, one line ---------------------------------------------------


def test_a_header_only_file_is_refused_with_one_line_and_makes_no_batch(imported_study, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + "\n")
    with pytest.raises(CommandError) as exc_info:
        _command(imported_study, path)
    assert "no label rows" in _one_line(exc_info, path)
    assert _nothing_written()


def test_missing_columns_are_one_line_naming_them_before_any_row(imported_study, tmp_path):
    path = tmp_path / "labels.csv"
    rows = "".join(f"item-{i},ann0,true\n" for i in range(6))
    path.write_text("item_id,annotator,hard_refusal\n" + rows)
    with pytest.raises(CommandError) as exc_info:
        _command(imported_study, path)
    message = _one_line(exc_info, path)
    assert "line 1: (header): missing column(s) annotator_group, cue" in message
    assert _nothing_written()
    with pytest.raises(ManifestInvalid) as exc_info:
        parse_annotation_csv("item_id;annotator;annotator_group;hard_refusal;cue\nx;a;;true;\n")
    [error] = exc_info.value.errors
    assert error.field == "(header)" and "separated by commas" in error.message


def test_an_empty_file_is_one_line(imported_study, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text("")
    with pytest.raises(CommandError) as exc_info:
        _command(imported_study, path)
    assert "the file is empty" in _one_line(exc_info, path)


# --- step 2: every problem at once -----------------------------------------------------------


def test_every_problem_is_listed_at_once(imported_study, annotators, django_user_model):
    django_user_model.objects.create_superuser(username="root", password="pw-for-tests-1")
    importers.annotations_import(
        study=imported_study, csv_text=HEADER + "item-0,ann0,,false,retained\n"
    )
    text = HEADER + (
        "item-0,ann0,,true,\n"  # 2: ann0 already answered item-0
        "ghost,ann1,,true,\n"  # 3: no such item
        "item-1,ann1,,maybe,\n"  # 4: not a boolean
        "item-2,zoe,,true,\n"  # 5: unknown annotator
        "item-3,root,,true,\n"  # 6: a staff account
    )
    with pytest.raises(LabelsInvalid) as exc_info:
        importers.annotations_import(study=imported_study, csv_text=text)
    found = [(e.line, e.field) for e in exc_info.value.errors]
    assert found == [(2, "annotator"), (3, "item_id"), (4, "hard_refusal")] + [
        (5, "annotator"),
        (6, "annotator"),
    ]
    assert exc_info.value.unknown_annotators == ["zoe"]
    assert exc_info.value.staff_annotators == ["root"]
    assert Batch.objects.count() == 1 and Annotation.objects.count() == 1


# --- staff accounts are not annotators unless allowed ----------------------------------------


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="pw-for-tests-1")


def test_labels_under_a_superusers_name_are_refused_unless_allowed(
    imported_study, superuser, tmp_path
):
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + "item-0,root,,true,\nitem-1,root,,false,erased\n")
    with pytest.raises(CommandError) as exc_info:
        _command(imported_study, path)
    message = _one_line(exc_info, path)
    assert "line 2: annotator: staff account(s) named as annotators: root" in message
    assert "--allow-staff-annotators" in message
    assert not Annotator.objects.filter(user=superuser).exists() and _nothing_written()
    _command(imported_study, path, "--allow-staff-annotators")
    assert Annotation.objects.filter(assignment__annotator__user=superuser).count() == 2


def test_a_staff_account_with_an_annotator_profile_is_still_refused(imported_study, annotators):
    user = annotators[0].user
    user.is_staff = True
    user.save()
    with pytest.raises(LabelsInvalid, match="staff account"):
        importers.annotations_import(study=imported_study, csv_text=HEADER + "item-0,ann0,,true,\n")
    assert _nothing_written()


def _upload(client, study, text: bytes, name="team-labels.csv", **fields):
    client.cookies.pop("messages", None)  # only this upload's messages
    upload = io.BytesIO(text)
    upload.name = name
    response = client.post(
        reverse("staff:annotations_upload", args=[study.slug]), {"labels": upload, **fields}
    )
    assert response.status_code == 302
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_staff_form_refuses_staff_annotators_unless_the_box_is_ticked(
    imported_study, superuser, staff_client
):
    page = staff_client.get(reverse("staff:study_detail", args=[imported_study.slug]))
    assert 'name="allow_staff_annotators"' in page.content.decode()
    text = (HEADER + "item-0,root,,true,\n").encode()
    shown = _upload(staff_client, imported_study, text)
    assert shown[0] == "Nothing was imported from team-labels.csv."
    assert shown[1].startswith("team-labels.csv: line 2: annotator: staff account(s)")
    assert "Allow staff accounts as annotators" in shown[1]
    assert not Annotator.objects.filter(user=superuser).exists()
    shown = _upload(staff_client, imported_study, text, allow_staff_annotators="on")
    assert shown == ["Imported 1 labels from team-labels.csv."]


# --- step 3: the writes ----------------------------------------------------------------------


def test_the_writes_are_bulk_a_fixed_number_of_statements_for_any_size(
    imported_study, annotators, staff_user
):
    def statements(names) -> int:
        text = HEADER + "".join(
            f"item-{i},{name},,false,retained\n" for name in names for i in range(6)
        )
        with CaptureQueriesContext(connection) as queries:
            importers.annotations_import(study=imported_study, csv_text=text, created_by=staff_user)
        return len(queries)

    one, three = statements(["ann0"]), statements(["ann1", "ann2", "ann3"])
    assert one == three <= 15, (one, three)
    answers = Annotation.objects.select_related("assignment")
    assert answers.count() == 24
    assert {(a.source, a.revision) for a in answers} == {("import", 1)}
    assert all(a.assignment.answered_at == a.submitted_at for a in answers)
    history = AnnotationHistory.objects.all()
    assert history.count() == 24 and {h.recorded_by_id for h in history} == {staff_user.pk}
    assert set(Batch.objects.values_list("policy", flat=True)) == {Batch.Policy.IMPORTED}


def test_new_annotators_take_the_group_of_their_first_row(imported_study):
    text = HEADER + "item-0,zoe,Korean,true,\nitem-1,zoe,US,true,\n"
    importers.annotations_import(study=imported_study, csv_text=text, create_annotators=True)
    assert Annotator.objects.get(user__username="zoe").group == "Korean"
    assert not get_user_model().objects.get(username="zoe").has_usable_password()


def test_a_long_file_name_or_a_second_import_of_one_file_gets_its_own_batch_name(
    imported_study, annotators
):
    name = "x" * 250 + ".csv"
    for row in ("item-0,ann0,,true,\n", "item-1,ann0,,true,\n"):
        importers.annotations_import(study=imported_study, csv_text=HEADER + row, source_name=name)
    names = sorted(Batch.objects.values_list("name", flat=True))
    assert len(set(names)) == 2 and all(len(n) <= 200 for n in names), names
    assert names[1] == names[0] + " (2)"


# --- a form sent more than once ----------------------------------------------------------------


def test_the_form_sent_twice_imports_once(imported_study, annotators, staff_client):
    page = staff_client.get(reverse("staff:study_detail", args=[imported_study.slug]))
    key = page.context["label_import_form"].initial["request_key"]
    assert f'value="{key}"' in page.content.decode()
    text = (HEADER + "item-0,ann0,,true,\nitem-1,ann1,,false,erased\n").encode()
    assert _upload(staff_client, imported_study, text, request_key=key) == [
        "Imported 2 labels from team-labels.csv."
    ]
    [again] = _upload(staff_client, imported_study, text, request_key=key)
    assert again.startswith("team-labels.csv: this form already imported 2 labels"), again
    assert Batch.objects.count() == 1 and Annotation.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_four_identical_posts_at_once_import_once(imported_study, annotators, staff_user):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: the race needs PostgreSQL (DATABASE_URL)")
    text = (HEADER + "".join(f"item-{i},ann{i % 3},,true,\n" for i in range(6))).encode()
    clients = []
    for _ in range(4):
        client = Client()
        client.force_login(staff_user)
        clients.append(client)

    def post(client):
        return _upload(client, imported_study, text, request_key="k" * 43)

    results = run_together([lambda client=client: post(client) for client in clients])
    assert not [r for r in results if isinstance(r, Exception)], results
    shown = sorted(message for [message] in results)
    assert shown[0] == "Imported 6 labels from team-labels.csv.", shown
    assert all("this form already imported 6 labels" in m for m in shown[1:]), shown
    assert Batch.objects.count() == 1 and Annotation.objects.count() == 6


@pytest.mark.django_db(transaction=True)
def test_the_same_labels_imported_twice_at_once_import_once(imported_study, annotators):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: the race needs PostgreSQL (DATABASE_URL)")
    text = HEADER + "".join(f"item-{i},ann{i % 3},,true,\n" for i in range(6))
    results = run_together(
        [
            lambda: importers.annotations_import(study=imported_study, csv_text=text)
            for _ in range(4)
        ]
    )
    assert results.count(6) == 1, results
    refused = [r for r in results if r != 6]
    assert all(isinstance(r, LabelsInvalid) and "already has an answer" in str(r) for r in refused)
    assert Batch.objects.count() == 1 and Annotation.objects.count() == 6


@pytest.mark.django_db(transaction=True)
def test_two_files_creating_one_new_annotator_at_once_both_import(imported_study):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite serialises writers: the race needs PostgreSQL (DATABASE_URL)")
    files = [HEADER + f"item-{i},zoe,US,true,\nitem-{i},ann-{i},US,true,\n" for i in range(4)]
    results = run_together(
        [
            lambda text=text: importers.annotations_import(
                study=imported_study, csv_text=text, create_annotators=True
            )
            for text in files
        ]
    )
    assert results == [2, 2, 2, 2], results
    assert Annotation.objects.filter(assignment__annotator__user__username="zoe").count() == 4


def test_a_form_that_commits_between_the_first_look_and_the_check_is_reported_as_repeated(
    imported_study, annotators, staff_client, monkeypatch
):
    """The race CI met on PostgreSQL, made deterministic: the same form's first submit commits
    after this submit's repeat check and before its label check."""
    text = HEADER + "".join(f"item-{i},ann{i % 3},,true,\n" for i in range(6))
    real_check = importers.labels_check

    def check_after_the_other_submit_commits(**kwargs):
        monkeypatch.setattr(importers, "labels_check", real_check)
        importers.annotations_import(study=imported_study, csv_text=text, request_key="k" * 43)
        return real_check(**kwargs)

    monkeypatch.setattr(importers, "labels_check", check_after_the_other_submit_commits)
    [shown] = _upload(staff_client, imported_study, text.encode(), request_key="k" * 43)
    assert "this form already imported 6 labels" in shown, shown
    assert Batch.objects.count() == 1 and Annotation.objects.count() == 6
