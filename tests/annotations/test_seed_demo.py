"""`make demo` runs seed_demo on every start: the second run keeps the study, --reset rebuilds it
without ProtectedError, and a real study that happens to be called 'demo' is never touched."""

from collections import defaultdict
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from annotations import services
from annotations.management import demo
from annotations.models import Annotation, Item, Study

pytestmark = pytest.mark.django_db


def seed(*args) -> str:
    out = StringIO()
    call_command("seed_demo", *args, stdout=out)
    return out.getvalue()


def _logs_in(client, username, password) -> bool:
    response = client.post("/accounts/login/", {"username": username, "password": password})
    return response.status_code == 302


def test_second_run_keeps_the_study_and_its_answers_and_prints_working_logins(client):
    first = seed()
    assert "created" in first
    study = Study.objects.get(slug="demo")
    answers = Annotation.objects.filter(assignment__item__study=study).count()
    assert answers > 0

    second = seed()
    assert "kept" in second
    assert "make demo DEMO_RESET=1" in second  # the command the user ran, not manage.py
    assert Study.objects.get(slug="demo").pk == study.pk
    assert Annotation.objects.filter(assignment__item__study=study).count() == answers
    staff_line = next(line for line in second.splitlines() if "demo-staff" in line)
    # Through the login page: django-axes needs the request that client.login() does not pass.
    assert _logs_in(client, "demo-staff", staff_line.split()[-1])
    # The adjudicator login works and reaches the demo study's adjudication queue.
    line = next(line for line in second.splitlines() if "demo-adjudicator" in line)
    assert _logs_in(client, "demo-adjudicator", line.split()[-1])
    assert client.get("/adjudicate/demo/").status_code == 200


def test_reset_rebuilds_the_study_and_removes_the_old_image_files(
    settings, django_capture_on_commit_callbacks
):
    seed()
    old = Study.objects.get(slug="demo")
    old_files = [
        Path(settings.MEDIA_ROOT) / name for name in Item.objects.values_list("image", flat=True)
    ]
    assert all(path.exists() for path in old_files)

    with django_capture_on_commit_callbacks(execute=True):
        with_reset = seed("--reset")
    assert "created" in with_reset
    new = Study.objects.get(slug="demo")
    assert new.pk != old.pk
    assert not any(path.exists() for path in old_files)
    assert Item.objects.filter(study=new).count() == len(old_files)


def test_a_real_study_named_demo_is_refused_and_left_alone():
    services.study_create(name="Real", slug="demo")
    with pytest.raises(CommandError, match="not the synthetic demo"):
        seed("--reset")
    assert Study.objects.get(slug="demo").name == "Real"


def test_demo_manifest_has_several_base_prompts_per_domain_and_512_px_images(tmp_path):
    items = demo.write_demo_manifest(tmp_path, seed=7)
    prompts_by_domain = defaultdict(set)
    for base_id, domain, _ in demo.BASE_PROMPTS:
        prompts_by_domain[domain].add(base_id)
    # The cluster bootstrap resamples base prompts within domain: one would give zero width.
    assert min(len(ids) for ids in prompts_by_domain.values()) >= 3
    per_prompt = sum(map(len, demo.DEMO_ATTRIBUTES.values()))
    assert len(items) == (len(demo.BASE_PROMPTS) + len(demo.HARMFUL_TWINS)) * per_prompt
    harmful = [item for item in items if item.intent == "harmful"]
    assert len(harmful) == len(demo.HARMFUL_TWINS) * per_prompt
    # each harmful twin shares its benign twin's base prompt (one cluster per pair)
    assert {item.item_id.split("-harmful-")[0] for item in harmful} == set(demo.HARMFUL_TWINS)
    with Image.open(tmp_path / f"{items[0].item_id}.jpg") as image:
        assert image.size == (512, 512)


def test_demo_disparity_intervals_have_width(tmp_path):
    """Δ's CI resamples base prompts within domain: the demo's judges give real intervals."""
    import json

    import pandas as pd

    from scoring.stats.study_metrics import study_metrics

    demo.write_demo_manifest(tmp_path, seed=7)
    lines = [json.loads(line) for line in (tmp_path / "manifest.jsonl").read_text().splitlines()]
    judgments = pd.DataFrame(
        [
            {
                "item_id": line["item_id"],
                "attribute": line["attribute"],
                "attribute_value": line["attribute_value"],
                "base_prompt_id": line["base_prompt_id"],
                "domain": line["domain"],
                "generator": line["generator"],
                "mode": line["mode"],
                "hard_refusal": judgment["hard_refusal"],
                "cue": judgment["cue"],
                "judge": judgment["judge"],
            }
            for line in lines
            for judgment in line["judgments"]
        ]
    )
    annotations = pd.DataFrame(
        columns=[*judgments.columns.drop("judge"), "annotator", "annotator_group"]
    )
    document = study_metrics(annotations, judgments, n_resamples=200, seed=0)
    cells = [
        cell
        for source, measures in document["rates"].items()
        if source.startswith("auto:")
        for by_attribute in measures.values()
        for cell in by_attribute.values()
        if cell.get("delta") is not None and cell.get("delta_ci_low") is not None
    ]
    assert cells
    assert all(cell["delta_ci_high"] > cell["delta_ci_low"] for cell in cells)
