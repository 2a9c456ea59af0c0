"""Imports a lead can act on: clear one-line errors naming the user's file, unknown annotators
refused unless allowed, imported batches kept off annotators' pages."""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from annotations.imports.manifest import LabelsInvalid
from annotations.models import Annotation, BackgroundJob, Batch, Item
from tests.support.celery_worker import worker_database_url
from tests.support.django_fixtures import client_for, manifest_line, write_image, write_manifest

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[3]
HEADER = "item_id,annotator,annotator_group,hard_refusal,cue\n"


def _one_line_error(exc_info, file_name: str) -> str:
    message = str(exc_info.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(f"{file_name}: "), message
    return message


# --- the command line -----------------------------------------------------------------------


def _bundle(tmp_path, name="bundle.zip", members=None) -> Path:
    write_image(tmp_path / "src" / "a.png")
    manifest = write_manifest(tmp_path / "src", [manifest_line("a", image="images/a.png")])
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as bundle:
        if members is None:
            bundle.write(manifest, "manifest.jsonl")
            bundle.write(tmp_path / "src" / "a.png", "images/a.png")
        else:
            for member, data in members.items():
                bundle.writestr(member, data)
    return path


def test_import_items_takes_a_zip_bundle_like_the_web_upload(study, tmp_path):
    call_command("import_items", str(_bundle(tmp_path)), study=study.slug, verbosity=0)
    item = Item.objects.get(study=study)
    assert item.item_id == "a" and item.image.read()[:4] == b"\x89PNG"


def test_import_items_zip_without_a_manifest_is_one_line(study, tmp_path):
    path = _bundle(tmp_path, members={"readme.txt": b"hi"})
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(path), study=study.slug, verbosity=0)
    assert "exactly one .jsonl manifest" in _one_line_error(exc_info, str(path))
    assert Item.objects.count() == 0


def test_import_items_zip_named_jsonl_is_one_line(study, tmp_path):
    path = _bundle(tmp_path).rename(tmp_path / "items.jsonl")
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(path), study=study.slug, verbosity=0)
    # A zip named .jsonl is read as a manifest: not text, said so.
    message = _one_line_error(exc_info, str(path))
    assert "zip" in message or "not UTF-8" in message


def test_import_items_latin1_manifest_names_the_line(study, tmp_path):
    write_image(tmp_path / "a.png")
    good = json.dumps(manifest_line("a", image="a.png"))
    bad = json.dumps(manifest_line("b", image="a.png", prompt="un café"), ensure_ascii=False)
    path = tmp_path / "items.jsonl"
    path.write_bytes((good + "\n" + bad + "\n").encode("latin-1"))
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(path), study=study.slug, verbosity=0)
    message = _one_line_error(exc_info, str(path))
    assert "line 2" in message and "not UTF-8" in message
    assert Item.objects.count() == 0


def test_import_items_several_problems_are_one_line_each(study, tmp_path):
    path = write_manifest(tmp_path / "m", [{"item_id": "a"}, {"item_id": "b"}])
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(path), study=study.slug, verbosity=0)
    lines = str(exc_info.value).splitlines()
    assert lines[0] == f"{path}: 2 problems, nothing was imported"
    assert lines[1].startswith(f"{path}: line 1: ") and lines[2].startswith(f"{path}: line 2: ")


def test_import_items_missing_file_is_one_line(study, tmp_path):
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(tmp_path / "nope.jsonl"), study=study.slug)
    _one_line_error(exc_info, str(tmp_path / "nope.jsonl"))


def test_import_annotations_latin1_csv_is_one_line(imported_study, annotators, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes((HEADER + "item-0,ann0,Köln,false,retained\n").encode("latin-1"))
    with pytest.raises(CommandError) as exc_info:
        call_command("import_annotations", str(path), study=imported_study.slug)
    message = _one_line_error(exc_info, str(path))
    assert "line 2" in message and "UTF-8" in message
    assert Annotation.objects.count() == 0


def test_import_annotations_utf8_with_bom_is_read(imported_study, annotators, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_bytes((HEADER + "item-0,ann0,Köln,false,retained\n").encode("utf-8-sig"))
    call_command("import_annotations", str(path), study=imported_study.slug, stdout=io.StringIO())
    assert Annotation.objects.get().cue_label == "retained"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("command", ["import_annotations", "import_items"])
def test_a_real_process_exits_1_with_one_line_and_no_traceback(command, tmp_path):
    study = services.study_create(name="S", slug="s")
    path = tmp_path / ("labels.csv" if command == "import_annotations" else "items.jsonl")
    path.write_bytes((HEADER + "item-0,zoë,,false,retained\n").encode("latin-1"))
    result = subprocess.run(
        [sys.executable, "manage.py", command, str(path), "--study", study.slug],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": worker_database_url()},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"CommandError: {path}: "), result.stderr


# --- unknown annotators ---------------------------------------------------------------------


def test_unknown_annotators_are_refused_with_their_names(imported_study, annotators):
    csv_text = HEADER + "item-0,zoe,,true,\nitem-1,ann0,,false,erased\nitem-2,yan,,true,\n"
    with pytest.raises(LabelsInvalid) as exc_info:
        importers.annotations_import(study=imported_study, csv_text=csv_text)
    assert exc_info.value.unknown_annotators == ["yan", "zoe"]
    assert "yan, zoe" in str(exc_info.value)
    assert not get_user_model().objects.filter(username__in=["yan", "zoe"]).exists()
    assert Annotation.objects.count() == 0 and Batch.objects.count() == 0


def test_cli_refuses_unknown_annotators_unless_asked_to_create_them(imported_study, tmp_path):
    path = tmp_path / "labels.csv"
    path.write_text(HEADER + "item-0,zoe,,true,\n", encoding="utf-8")
    with pytest.raises(CommandError) as exc_info:
        call_command("import_annotations", str(path), study=imported_study.slug)
    message = _one_line_error(exc_info, str(path))
    assert "zoe" in message and "--create-annotators" in message
    assert not get_user_model().objects.filter(username="zoe").exists()
    call_command(
        "import_annotations",
        str(path),
        "--create-annotators",
        study=imported_study.slug,
        stdout=io.StringIO(),
    )
    assert Annotation.objects.get().assignment.annotator.user.username == "zoe"


def _upload_labels(client, study, text: bytes, name="team-labels.csv", **extra):
    client.cookies.pop("messages", None)  # only this upload's messages
    upload = io.BytesIO(text)
    upload.name = name
    response = client.post(
        reverse("staff:annotations_upload", args=[study.slug]), {"labels": upload, **extra}
    )
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_web_refuses_unknown_annotators_unless_the_box_is_ticked(imported_study, staff_client):
    text = (HEADER + "item-0,zoe,,true,\n").encode()
    shown = _upload_labels(staff_client, imported_study, text)
    assert shown[0] == "Nothing was imported from team-labels.csv."
    assert any(m.startswith("team-labels.csv: line 2: annotator: ") and "zoe" in m for m in shown)
    assert not get_user_model().objects.filter(username="zoe").exists()
    shown = _upload_labels(staff_client, imported_study, text, create_annotators="on")
    assert shown == ["Imported 1 labels from team-labels.csv."]
    assert get_user_model().objects.filter(username="zoe").exists()


def test_web_label_errors_name_the_file_one_per_message(imported_study, annotators, staff_client):
    text = (HEADER + "ghost,ann0,,true,\nitem-1,ann0,,maybe,\n").encode()
    shown = _upload_labels(staff_client, imported_study, text)
    assert shown[0] == "Nothing was imported from team-labels.csv."
    # every problem at once (issue 21): the unknown item and the bad value
    assert shown[1:] == [
        "team-labels.csv: line 2: item_id: 'ghost' is not in study test-study",
        "team-labels.csv: line 3: hard_refusal: " + shown[2].split(": ", 3)[3],
    ]
    shown = _upload_labels(staff_client, imported_study, "é".encode("latin-1"), name="x.csv")
    assert shown[1].startswith("x.csv: line 1: (file): not UTF-8 text")


def test_web_item_upload_errors_name_the_users_file(
    study, staff_client, tmp_path, django_capture_on_commit_callbacks
):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("manifest.jsonl", json.dumps({"item_id": "a"}) + "\n{}\n")
    buffer.name = "my-items.zip"
    buffer.seek(0)
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": buffer})
    job = BackgroundJob.objects.latest("pk")
    assert job.status == "failed" and len(job.errors) == 2
    assert all(e.startswith("my-items.zip: line ") for e in job.errors), job.errors
    not_zip = io.BytesIO(b"PK\x03\x04 broken")
    not_zip.name = "broken.zip"
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": not_zip})
    job = BackgroundJob.objects.latest("pk")
    assert job.errors and job.errors[0].startswith("broken.zip: "), job.errors
    assert "upload.zip" not in " ".join(job.errors)
    page = staff_client.get(reverse("staff:job_detail", args=[job.pk])).content.decode()
    assert "<li>broken.zip: " in page


# --- imported batches -----------------------------------------------------------------------


def test_imported_labels_never_reach_the_annotators_pages(batch, annotators):
    importers.annotations_import(
        study=batch.study, csv_text=HEADER + "item-0,ann2,,true,\nitem-5,ann2,,true,\n"
    )
    imported = Batch.objects.get(policy=Batch.Policy.IMPORTED)
    services.batch_add_annotators(batch=batch, annotators=[annotators[2]])
    client = client_for(annotators[2])
    page = client.get(reverse("annotations:home")).content.decode()
    assert imported.name not in page and batch.name in page
    assert client.get(reverse("annotations:batch_next", args=[imported.pk])).status_code == 404
    assert client.get(reverse("annotations:batch_next", args=[batch.pk])).status_code == 302
