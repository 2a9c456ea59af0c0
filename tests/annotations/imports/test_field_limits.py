"""Field limits are checked with the other import checks, before the database sees the values
(issue 20 item 6): one line per problem on the command line and the web, on SQLite (which
would store past max_length) and on PostgreSQL (which would raise DataError); a background job
that fails for any reason ends as failed, with its message."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotations.models import Annotation, Annotator, AutomatedJudgment, BackgroundJob, Item
from tests.support.django_fixtures import manifest_line, write_image, write_manifest

HEADER = "item_id,annotator,annotator_group,hard_refusal,cue\n"
MODEL_FIELDS = {
    "item_id": (Item, "item_id"),
    "mode": (Item, "mode"),
    "generator": (Item, "generator"),
    "prompt": (Item, "prompt"),
    "base_prompt_id": (Item, "base_prompt_id"),
    "domain": (Item, "domain"),
    "cue": (Item, "cue"),
    "provider_refusal.code": (Item, "provider_refusal_code"),
    "provider_refusal.message": (Item, "provider_refusal_message"),
    "judge": (AutomatedJudgment, "judge"),
    "version": (AutomatedJudgment, "judge_version"),
    "annotator": (get_user_model(), "username"),
    "annotator_group": (Annotator, "group"),
}


def test_the_limits_are_the_columns_limits():
    from annotations.imports.manifest import TEXT_LIMITS
    from annotations.models import AttributeValue

    fields = {
        **MODEL_FIELDS,
        "attribute": (AttributeValue, "attribute"),
        "attribute_value": (AttributeValue, "value"),
    }
    assert set(fields) == set(TEXT_LIMITS)
    for name, (model, field_name) in fields.items():
        assert TEXT_LIMITS[name] == model._meta.get_field(field_name).max_length, name


def _manifest(tmp_path, **overrides):
    write_image(tmp_path / "m" / "a.png")
    line = manifest_line("a", image="a.png")
    line.update(overrides)
    return write_manifest(tmp_path / "m", [line, manifest_line("b", image="a.png", value="US")])


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"item_id": "x" * 201}, "item_id: is 201 characters long, over the limit of 200"),
        ({"prompt": "a person\x00 cooking"}, "prompt: contains a NUL byte"),
        ({"item_id": "a\tb"}, "item_id: contains a control character"),
        ({"domain": "d" * 101}, "domain: is 101 characters long, over the limit of 100"),
        ({"provider_refusal": {"code": "c" * 201}}, "provider_refusal.code: is 201 characters"),
        ({"judgments": [{"judge": "j" * 101, "hard_refusal": True}]}, "judge: is 101 characters"),
    ],
)
def test_overlong_or_nul_manifest_values_are_one_line_each(study, tmp_path, overrides, expected):
    with pytest.raises(CommandError) as exc_info:
        call_command("import_items", str(_manifest(tmp_path, **overrides)), study=study.slug)
    message = str(exc_info.value)
    assert expected in message and "Traceback" not in message, message
    assert Item.objects.count() == 0


@pytest.mark.django_db
def test_label_file_limits_are_one_line_each(imported_study, tmp_path):
    path = tmp_path / "labels.csv"
    rows = [
        f"item-0,{'n' * 151},,true,",
        "item-1,ann0,,true,",
        f"{'i' * 201},ann0,,true,",
        f"item-2,ann0,{'g' * 101},true,",
    ]
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(CommandError) as exc_info:
        call_command(
            "import_annotations", str(path), study=imported_study.slug, create_annotators=True
        )
    message = str(exc_info.value)
    assert "line 2: annotator: is 151 characters long, over the limit of 150" in message
    assert "line 4: item_id: is 201 characters long" in message
    assert "line 5: annotator_group: is 101 characters long" in message
    assert Annotation.objects.count() == 0 and not Annotator.objects.exists()


@pytest.mark.django_db
def test_the_web_import_job_fails_with_one_line_per_problem(
    study, staff_client, tmp_path, django_capture_on_commit_callbacks
):
    upload = io.BytesIO(
        (
            json.dumps(manifest_line("x" * 201)) + "\n" + json.dumps(manifest_line("a\x00")) + "\n"
        ).encode()
    )
    upload.name = "items.jsonl"
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": upload})
    job = BackgroundJob.objects.latest("pk")
    assert job.status == "failed", (job.status, job.errors)
    assert job.errors == [
        "items.jsonl: line 1: item_id: is 201 characters long, over the limit of 200",
        "items.jsonl: line 2: item_id: contains a NUL byte",
    ]


@pytest.mark.django_db
def test_a_job_that_fails_unexpectedly_ends_failed_with_its_message(
    study, staff_client, django_capture_on_commit_callbacks, monkeypatch
):
    from annotations.imports import importers

    def broken(**kwargs):
        raise RuntimeError("value too long for type character varying(200)\nDETAIL: more")

    monkeypatch.setattr(importers, "items_import", broken)
    upload = io.BytesIO((json.dumps(manifest_line("a")) + "\n").encode())
    upload.name = "items.jsonl"
    with django_capture_on_commit_callbacks(execute=True):
        staff_client.post(reverse("staff:items_upload", args=[study.slug]), {"manifest": upload})
    job = BackgroundJob.objects.latest("pk")
    assert job.status == "failed" and job.finished_at is not None
    assert job.errors == ["RuntimeError: value too long for type character varying(200)"]
