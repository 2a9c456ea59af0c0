"""Harmful controls in a stored plan: from the command line, the staff plan builder and a
run_audit-style config, down to generated items carrying intent = harmful."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.models import Item
from generation import services
from generation.models import PlannedPrompt
from tests.generation.conftest import api_config

pytestmark = pytest.mark.django_db

PROMPTS = [
    {"prompt_id": f"v{i}", "text": "A person cooking dinner in a kitchen", "domain": "violence"}
    for i in range(4)
]


@pytest.fixture
def violence_prompts(tmp_path):
    path = tmp_path / "violence.json"
    path.write_text(json.dumps(PROMPTS), encoding="utf-8")
    return path


def harmful_rows(slug):
    return PlannedPrompt.objects.filter(study__slug=slug, intent="harmful")


def test_plan_study_command_adds_harmful_twins_beside_their_benign_twins(violence_prompts):
    out = StringIO()
    call_command(
        "plan_study",
        "--study",
        "cli",
        "--create",
        "--base",
        str(violence_prompts),
        "--attributes",
        "gender",
        "--harmful-controls",
        "0.5",
        "--missing-slot",
        "append",
        stdout=out,
    )
    assert (
        "Harmful controls: 2 benign/harmful pairs (share 0.5 per domain, seed 0)." in out.getvalue()
    )
    harmful = harmful_rows("cli")
    assert harmful.count() == 2 * 4  # neutral + 3 gender values per harmful prompt
    first = harmful.order_by("position").first()
    twin = PlannedPrompt.objects.get(
        study__slug="cli", plan_id=first.plan_id.replace(":harmful", "")
    )
    assert twin.intent == "benign" and twin.prompt_id == first.prompt_id
    assert twin.position == first.position - 4  # the benign twin's rows come just before
    plan = first.study.generation_plan
    assert plan.options["harmful_controls"]["n_pairs"] == 2


def test_without_the_flag_a_plan_is_unchanged(violence_prompts):
    call_command(
        "plan_study",
        "--study",
        "plain",
        "--create",
        "--base",
        str(violence_prompts),
        "--attributes",
        "gender",
        stdout=StringIO(),
    )
    assert not harmful_rows("plain").exists()
    assert PlannedPrompt.objects.get(study__slug="plain", plan_id="v0:neutral").intent == "benign"


@pytest.mark.parametrize("share", ["0", "1.5", "x"])
def test_a_bad_share_is_one_line_and_writes_nothing(violence_prompts, share):
    with pytest.raises((CommandError, SystemExit)):
        call_command(
            "plan_study",
            "--study",
            "bad",
            "--create",
            "--base",
            str(violence_prompts),
            "--harmful-controls",
            share,
            stdout=StringIO(),
            stderr=StringIO(),
        )
    assert not PlannedPrompt.objects.filter(study__slug="bad").exists()


def test_study_config_reads_harmful_controls():
    config = services.StudyConfig.from_dict({"slug": "s", "harmful_controls": True})
    assert (config.harmful_share, config.harmful_seed) == (0.25, 0)
    config = services.StudyConfig.from_dict(
        {"slug": "s", "harmful_controls": {"share": 0.5, "seed": 3}}
    )
    assert (config.harmful_share, config.harmful_seed) == (0.5, 3)
    assert services.StudyConfig.from_dict({"slug": "s"}).harmful_share is None
    with pytest.raises(ValueError, match="unknown harmful_controls keys"):
        services.StudyConfig.from_dict({"slug": "s", "harmful_controls": {"ratio": 1}})
    with pytest.raises(ValueError, match="share"):
        services.StudyConfig.from_dict({"slug": "s", "harmful_controls": 3})


def test_staff_plan_builder_offers_harmful_controls(staff_client, violence_prompts):
    page = staff_client.get(reverse("generation:plan_new"))
    assert b"Harmful controls" in page.content and b'value="0.25"' in page.content
    with violence_prompts.open("rb") as upload:
        response = staff_client.post(
            reverse("generation:plan_new"),
            {
                "slug": "staff",
                "base_prompts": "upload",
                "base_prompts_file": upload,
                "attributes": ["gender"],
                "sample_seed": 0,
                "missing_slot": "append",
                "harmful_controls": "on",
                "harmful_share": "0.25",
                "harmful_seed": 1,
            },
        )
    assert response.status_code == 302
    assert harmful_rows("staff").count() == 4
    page = staff_client.get(reverse("generation:study_plan", args=["staff"]))
    assert b"harmful control" in page.content and b"1 benign/harmful pairs" in page.content


def test_generated_items_carry_the_intent(violence_prompts, api_server, settings):
    config = services.StudyConfig.from_dict(
        {
            "slug": "gen",
            "base_prompts": str(violence_prompts),
            "attributes": ["gender"],
            "missing_slot": "append",
            "harmful_controls": {"share": 0.25},
            "generators": {"api": api_config(api_server)},
        }
    )
    study = services.study_setup(config=config)
    summary = services.generation_run_inline(study=study)
    assert summary.complete
    harmful = Item.objects.filter(study=study, intent="harmful")
    planned = PlannedPrompt.objects.filter(study=study, status="planned")
    assert harmful.count() == planned.filter(intent="harmful").count() >= 1
    assert (
        Item.objects.filter(study=study, intent="benign").count()
        == planned.filter(intent="benign").count()
    )
    assert all(":harmful:" in item.item_id for item in harmful)
    twin = harmful.first()
    assert Item.objects.filter(
        study=study, intent="benign", base_prompt_id=twin.base_prompt_id
    ).exists()


def test_run_audit_config_plans_controls_and_prints_the_trade_off(
    violence_prompts, api_server, tmp_path, capsys
):
    import yaml

    config = {
        "study": {
            "slug": "audited",
            "base_prompts": str(violence_prompts),
            "attributes": ["gender"],
            "missing_slot": "append",
            "generators": {"api": api_config(api_server)},
        },
        "harmful_controls": {"share": 0.5, "seed": 1},
        "judges": {"rules": {"kind": "hard_refusal", "version": "1", "clip": None}},
        "n_resamples": 0,
    }
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    call_command("run_audit", "--config", str(path))
    out = capsys.readouterr().out
    assert "harmful controls: 2 benign/harmful pairs (share 0.5 per domain)" in out
    assert "Safety–utility trade-off" in out and "under-refusal" in out
    assert Item.objects.filter(study__slug="audited", intent="harmful").exists()
