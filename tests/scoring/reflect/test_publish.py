"""An edit job publishes its usable edits as the REFLECT images of the same face set: the
same templates and bytes as export → import, idempotent, incomplete templates left out, and
the published set runs like an imported one."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from generation.faces import services as face_services
from generation.models import FaceEdit, FaceSet
from scoring.reflect import selectors, services
from scoring.reflect.models import FaceImage, ReflectAnswer
from tests.scoring.reflect.conftest import run_reflect
from tests.scoring.reflect.fakes import answers_by_position, make_edit_job

pytestmark = pytest.mark.django_db


def images_of(face_set):
    return {
        (image.template.occupation, image.template.name, image.race, image.gender): image.sha256
        for image in FaceImage.objects.filter(template__face_set=face_set).select_related(
            "template"
        )
    }


def test_publishing_equals_export_then_import_and_is_idempotent(tmp_path):
    job = make_edit_job()
    result = services.face_set_publish(face_set=job)
    assert (result["templates"], result["images"], result["skipped"]) == (2, 20, [])
    published = images_of(job)
    assert len(published) == 20
    assert FaceImage.objects.filter(template__face_set=job, variant="original").count() == 20
    assert all(image.accepted and image.file for image in FaceImage.objects.all())

    face_services.face_set_export(face_set=job, out_dir=tmp_path / "out")
    call_command("import_face_set", str(tmp_path / "out"), "--set", "Imported", verbosity=0)
    assert images_of(FaceSet.objects.get(name="Imported")) == published

    pks = set(FaceImage.objects.filter(template__face_set=job).values_list("pk", flat=True))
    again = services.face_set_publish(face_set=job)
    assert (again["templates"], again["images"]) == (2, 20)
    assert set(FaceImage.objects.filter(template__face_set=job).values_list("pk", flat=True)) == pks
    # Importing the export into the job itself (by slug) finds the same templates and images.
    call_command("import_face_set", str(tmp_path / "out"), "--set", "job", verbosity=0)
    assert set(FaceImage.objects.filter(template__face_set=job).values_list("pk", flat=True)) == pks
    assert FaceSet.objects.count() == 2 and job.templates.count() == 2


def test_an_incomplete_template_waits_until_staff_accept_its_flagged_edit(staff_user):
    job = make_edit_job()
    flagged = FaceEdit.objects.filter(template__occupation="nurse").first()
    flagged.flagged, flagged.flag_reason = True, "leaks_outside_face"
    flagged.save()
    result = services.face_set_publish(face_set=job)
    assert result["templates"] == 1
    assert result["skipped"] == [("t0", f"unusable: {flagged.target_group}")]
    assert {key[0] for key in images_of(job)} == {"CEO"}
    # REFLECT sees only the published template; the other is still in QC.
    assert selectors.face_set_counts(face_set=job)["templates"] == 1
    assert selectors.source_genders(face_set=job) == {("CEO", "t0"): "female"}
    assert [t.occupation for t in selectors.template_previews(face_set=job)] == ["CEO"]

    face_services.face_edit_accept(edit=flagged, user=staff_user)
    assert services.face_set_publish(face_set=job)["templates"] == 2
    assert {key[0] for key in images_of(job)} == {"CEO", "nurse"}


def test_an_imported_set_has_nothing_to_publish_and_the_command_says_so(face_set):
    with pytest.raises(ValueError, match="was imported"):
        services.face_set_publish(face_set=face_set)
    with pytest.raises(CommandError, match="nothing was published"):
        call_command("publish_face_set", "--set", face_set.name, verbosity=0)
    with pytest.raises(CommandError, match="unknown face set"):
        call_command("publish_face_set", "--set", "no such set", verbosity=0)


def test_a_published_set_is_audited_like_an_imported_one(serve, capsys):
    job = make_edit_job()
    call_command("publish_face_set", "--set", "job")
    assert "published 2 templates (20 images)" in capsys.readouterr().out
    run_reflect(serve(answers_by_position), tasks="2afc", name="Edit job")
    answers = ReflectAnswer.objects.filter(run__face_set=job)
    assert answers.count() == 2 * 45 * 2 * 3  # templates × pairs × orders × scenarios
    assert not answers.exclude(status="valid").exists()


def test_the_publish_button_posts_from_the_qc_page(staff_client):
    make_edit_job()
    page = staff_client.get(reverse("generation:face_set_detail", args=["job"]))
    assert reverse("reflect:face_set_publish", args=["job"]).encode() in page.content
    response = staff_client.post(reverse("reflect:face_set_publish", args=["job"]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("reflect:face_set_detail", args=["job"])
    assert b"Published 2 templates (20 images)" in response.content
    assert b"2 templates in 2 occupations" in response.content
