"""create_batch and the new-batch page refuse what they silently accepted (issue 36 §2): k = 0, a
blank name, a name the study already has, a pass mark without qualification items; and
``--annotators all`` takes the study's pool, not every account of the installation."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations import services
from annotations.imports import importers
from annotations.models import Annotator, Batch
from annotations.recruitment import consent, enrolment
from annotations.recruitment.rules import RecruitmentError


def create_batch(study, *args):
    out = io.StringIO()
    call_command("create_batch", "--study", study.slug, *args, stdout=out)
    return out.getvalue()


def test_k_zero_is_refused_in_one_line(imported_study, annotators):
    with pytest.raises(CommandError, match=r"argument --k: 0 is out of range: use 1 to 50$"):
        create_batch(imported_study, "--name", "b", "--annotators", "ann0,ann1", "--k", "0")
    assert not Batch.objects.exists()


@pytest.mark.parametrize("name", ["", "   "])
def test_a_blank_name_is_refused(imported_study, annotators, name):
    with pytest.raises(CommandError, match="^nothing was created: give the batch a name$"):
        create_batch(imported_study, "--name", name, "--annotators", "ann0,ann1")
    assert not Batch.objects.exists()


def test_a_name_the_study_has_is_refused_by_the_command_and_the_page(
    imported_study, annotators, staff_client
):
    create_batch(imported_study, "--name", "round 1", "--annotators", "ann0,ann1")
    with pytest.raises(CommandError, match="already has a batch named 'round 1'"):
        create_batch(imported_study, "--name", "round 1", "--annotators", "ann2,ann3")
    form = {
        "name": "round 1",
        "policy": "k_overlap",
        "overlap_k": 2,
        "annotators": [annotators[2].pk, annotators[3].pk],
    }
    response = staff_client.post(reverse("staff:batch_create", args=[imported_study.slug]), form)
    assert response.status_code == 400
    assert "already has a batch named &#x27;round 1&#x27;" in response.content.decode()
    assert Batch.objects.filter(name="round 1").count() == 1


def test_a_recruitment_batch_takes_no_name_the_study_has(imported_study, annotators):
    create_batch(imported_study, "--name", "open", "--annotators", "ann0,ann1")
    with pytest.raises(RecruitmentError, match="already has a batch named 'open'"):
        enrolment.recruitment_batch_create(
            study=imported_study,
            name="open",
            policy="k_overlap",
            overlap_k=1,
            items_per_annotator=2,
        )
    assert Batch.objects.filter(name="open").count() == 1


def test_a_pass_mark_without_items_is_an_error_on_the_page_as_in_the_command(
    imported_study, annotators, staff_client, django_capture_on_commit_callbacks
):
    """The page used to drop the round silently and make the batch; the command refused."""
    line = "qualification: at least 1 gold item per attempt (got 0)"
    with pytest.raises(CommandError, match=line.replace("(", r"\(").replace(")", r"\)")):
        create_batch(
            imported_study,
            *("--name", "q", "--annotators", "ann0,ann1"),
            *("--qualification-items", "0", "--qualification-pass-mark", "0.8"),
        )
    form = {
        "name": "q",
        "policy": "k_overlap",
        "overlap_k": 2,
        "annotators": [annotators[0].pk, annotators[1].pk],
        "qualification_items": 0,
        "qualification_pass_mark": 0.8,
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            reverse("staff:batch_create", args=[imported_study.slug]), form
        )
    assert response.status_code == 400 and line in response.content.decode()
    assert not Batch.objects.exists()


# --- who --annotators all takes ----------------------------------------------------------------


@pytest.fixture
def installation(imported_study, annotators, make_manifest, django_user_model):
    """ann0 works in the study and ann1 consented to it; ann2 works in another study, ann3 in
    none; a staff account and a simulated demo annotator are annotators too."""
    other = services.study_create(name="Other", slug="other")
    importers.items_import(study=other, manifest=make_manifest(folder="other"))
    demo = services.study_create(name="Demo", slug="demo", is_synthetic_demo=True)
    importers.items_import(study=demo, manifest=make_manifest(folder="demo"))
    staff = services.annotator_create(username="lead", group="Korean")
    django_user_model.objects.filter(pk=staff.user_id).update(is_staff=True)
    simulated = services.annotator_create(username="sim-annotator-1")
    create_batch(imported_study, "--name", "first", "--annotators", "ann0,lead", "--k", "1")
    create_batch(other, "--name", "elsewhere", "--annotators", "ann2", "--k", "1")
    create_batch(demo, "--name", "simulated", "--annotators", "sim-annotator-1", "--k", "1")
    version = consent.consent_publish(study=imported_study, consent_text="Agree?")
    consent.consent_record(annotator=annotators[1], consent=version)
    return {"staff": staff, "simulated": simulated}


def _taken(study, *flags) -> set[str]:
    create_batch(study, "--name", "next", "--k", "1", *flags)
    batch = Batch.objects.get(study=study, name="next")
    names = set(
        Annotator.objects.filter(pk__in=batch.params["annotators"]).values_list(
            "user__username", flat=True
        )
    )
    batch.delete()
    return names


def test_all_is_the_studys_pool_without_staff(imported_study, installation):
    assert _taken(imported_study, "--annotators", "all") == {"ann0", "ann1"}
    assert _taken(imported_study, "--annotators", "all", "--include-staff") == {
        "ann0",
        "ann1",
        "lead",
    }


def test_installation_is_every_account_but_staff_and_the_demos(imported_study, installation):
    every = {"ann0", "ann1", "ann2", "ann3"}
    assert _taken(imported_study, "--annotators", "installation") == every
    assert _taken(
        imported_study, "--annotators", "installation", "--include-staff", "--include-demo"
    ) == every | {"lead", "sim-annotator-1"}


def test_all_with_an_empty_pool_says_what_to_do(study, annotators):
    with pytest.raises(
        CommandError, match=r"has no annotators yet .*\(--annotators installation\)"
    ):
        create_batch(study, "--name", "b", "--annotators", "all")
