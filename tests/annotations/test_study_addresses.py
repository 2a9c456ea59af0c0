"""Issue 36 §1: one rule for a study's address (slug) on every path that makes a study; a bad
address already stored is reported (system check, staff pages) and never turns a page into a
500; ``rename_study`` is the way out."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotations import services
from annotations.checks import study_addresses_check
from annotations.common.study_address import (
    StudyAddressInvalid,
    study_address_checked,
    study_address_problem,
    study_address_suggested,
)
from annotations.models import Study
from annotations.staff.study_forms import StudyNewForm
from generation.forms import PlanForm

BAD = ["a b", "study (2)", "x/y", "", "new", "é", "abc\n", "x" * 101]


@pytest.mark.parametrize("value", BAD)
def test_the_rule_refuses_what_no_page_could_be_reached_at(value):
    assert study_address_problem(value)
    with pytest.raises(StudyAddressInvalid) as caught:
        study_address_checked(value)
    assert "\n" not in str(caught.value).replace("\\n", "")  # one line


@pytest.mark.parametrize("value", [["a", "b"], {"x": 1}, 7, None])
def test_the_rule_refuses_what_is_not_text(value):
    assert "is text, not" in study_address_problem(value)


@pytest.mark.parametrize("value", ["my-study", "Study_2026", "a", "x" * 100])
def test_the_rule_accepts_slugs(value):
    assert study_address_checked(value) == value
    assert study_address_problem(study_address_suggested(f"{value} (copy)")) is None


@pytest.mark.django_db
@pytest.mark.parametrize("value", ["a b (x)", ["a", "b"]])
def test_study_create_refuses_a_bad_address(value):
    with pytest.raises(StudyAddressInvalid):
        services.study_create(name="x", slug=value)
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_import_items_create_refuses_a_bad_address_and_makes_nothing(make_manifest):
    with pytest.raises(CommandError, match=r"--study: study address 'a b \(x\)' may hold only"):
        call_command("import_items", str(make_manifest(n=2)), study="a b (x)", create=True)
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_plan_study_create_refuses_a_bad_address_and_makes_nothing():
    with pytest.raises(CommandError, match="--study: study address 'my study' may hold only"):
        call_command("plan_study", "--study", "my study", "--create", "--sample-size", "1")
    assert not Study.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("slug", "message"),
    [("'audit [1]'", "may hold only"), ("[a, b]", "is text, not list")],
)
def test_run_audit_refuses_a_bad_address_from_its_yaml(tmp_path, slug, message):
    config = tmp_path / "study.yaml"
    config.write_text(f"study: {{slug: {slug}, name: x, sample_size: 1}}\n", encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        call_command("run_audit", "--config", str(config))
    assert not Study.objects.exists()


@pytest.mark.django_db
def test_the_forms_use_the_same_rule():
    new_study = StudyNewForm(data={"name": "x", "slug": "new", "mode": "t2i"})
    assert "taken by a page" in str(new_study.errors["slug"])
    plan = PlanForm(data={"slug": "new", "base_prompts": "acrb", "sample_seed": 0})
    assert "taken by a page" in str(plan.errors["slug"])
    spaced = PlanForm(data={"slug": "a b", "base_prompts": "acrb", "sample_seed": 0})
    assert "slug" in spaced.errors


# --- an address stored before the rule (or past the app) ------------------------------------


@pytest.fixture
def bad_study(db):
    """Written straight to the table, as an older version or a script could have."""
    return Study.objects.create(name="Bracketed", slug="my study (v2)")


@pytest.mark.parametrize("page", ["staff:study_list", "staff:people", "generation:overview"])
def test_staff_pages_list_a_bad_address_apart_instead_of_a_500(
    staff_client, imported_study, bad_study, page
):
    response = staff_client.get(reverse(page))
    assert response.status_code == 200
    text = response.content.decode()
    assert "python manage.py rename_study &#x27;my study (v2)&#x27; my-study-v2" in text
    assert imported_study.name in text  # the good study is still listed and linked


def test_staff_home_does_not_fail_on_an_address_changed_behind_the_apps_back(
    staff_client, imported_study
):
    Study.objects.filter(pk=imported_study.pk).update(slug="[a, b]")
    assert staff_client.get(reverse("staff:study_list")).status_code == 200


def test_the_system_check_names_every_bad_address_and_how_to_rename_it(bad_study, study):
    warnings = study_addresses_check(databases=["default"])
    assert [w.id for w in warnings] == ["annotations.W001"]
    assert "'my study (v2)'" in warnings[0].msg
    assert (
        warnings[0].hint == "rename it: python manage.py rename_study 'my study (v2)' my-study-v2"
    )
    out = StringIO()
    call_command("check", "--database", "default", stdout=out, stderr=out)
    assert "annotations.W001" in out.getvalue()


def test_rename_study_gives_a_bad_address_a_good_one(bad_study, study):
    with pytest.raises(CommandError, match="nothing changed: study address 'x y' may hold only"):
        call_command("rename_study", "my study (v2)", "x y")
    with pytest.raises(CommandError, match="taken by another study"):
        call_command("rename_study", "my study (v2)", study.slug)
    call_command("rename_study", "my study (v2)", "my-study-v2", stdout=StringIO())
    bad_study.refresh_from_db()
    assert bad_study.slug == "my-study-v2"
    assert study_addresses_check(databases=["default"]) == []
