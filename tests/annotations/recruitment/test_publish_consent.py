"""Issue 21 §2: the README's scripted flow works from commands alone: a study from a
manifest, a consent text published by a command, a batch, invite links."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotations.models import Study
from annotations.recruitment.models import InviteLink, StudyConsent

pytestmark = pytest.mark.django_db


def test_publish_consent_then_invites_from_commands_alone(make_manifest, tmp_path):
    call_command("import_items", str(make_manifest(n=6)), study="my-study", create=True)
    consent = tmp_path / "consent.txt"
    consent.write_text("I agree to label images for this study.\n", encoding="utf-8")
    out = StringIO()
    call_command("publish_consent", "--study", "my-study", "--text-file", str(consent), stdout=out)
    assert "published consent version 1 of my-study" in out.getvalue()
    call_command("publish_consent", "--study", "my-study", "--text-file", str(consent), stdout=out)
    # The same text again is no new version: annotators would be asked to agree for nothing.
    assert "already has this text: nothing published" in out.getvalue()
    consent.write_text("I agree to label images, and to a follow-up.\n", encoding="utf-8")
    call_command("publish_consent", "--study", "my-study", "--text-file", str(consent), stdout=out)
    assert "published consent version 2 of my-study" in out.getvalue()
    assert list(StudyConsent.objects.values_list("version", flat=True).order_by("version")) == [
        1,
        2,
    ]
    study = Study.objects.get(slug="my-study")
    from annotations.recruitment import enrolment

    enrolment.recruitment_batch_create(
        study=study, name="round1", policy="expertise", overlap_k=1, items_per_annotator=3, seed=1
    )
    links = StringIO()
    call_command(
        "create_invites",
        "--study",
        "my-study",
        "--batch",
        "round1",
        "--group",
        "US",
        "--count",
        "2",
        "--base-url",
        "https://acrb.example.org",
        stdout=links,
    )
    assert InviteLink.objects.count() == 2 and "/join/" in links.getvalue()


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: None, "--text-file .*: no such file"),
        (lambda p: p.write_bytes(b"\xe9t\xe9"), "not UTF-8 text"),
        (lambda p: p.write_text("   \n"), "the consent text is empty"),
    ],
)
def test_publish_consent_errors_are_one_line(study, tmp_path, setup, message):
    path = tmp_path / "c.txt"
    setup(path)
    with pytest.raises(CommandError, match=message):
        call_command("publish_consent", "--study", study.slug, "--text-file", str(path))
    assert not StudyConsent.objects.exists()
