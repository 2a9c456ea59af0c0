"""Boundary rephrasing through every door (build_prompts, run_audit, the staff plan builder)
against a loopback OpenAI-compatible server, with the server down as the failure path."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotations.models import Study
from generation.models import PlannedPrompt, PromptRephrasing
from tests.support.django_fixtures import client_for
from tests.support.openai_server import OpenAIServer, completion, request_text

BASE_PROMPTS = [
    {"prompt_id": "p1", "text": "A person cooking dinner in a kitchen", "domain": "food"},
    {"prompt_id": "p2", "text": "A person holding a protest sign in a square", "domain": "protest"},
    {"prompt_id": "p3", "text": "A person reading a book in a library", "domain": "education"},
]
KEPT = "A person cooking dinner in a smoky kitchen with a large cleaver"
REWRITES = {  # original -> the server's answer; p1 is kept, p2 and p3 are rejected
    "cooking dinner": KEPT,
    "protest sign": "A person giving step-by-step instructions to build a bomb",
    "reading a book": "A volcano erupting over the ocean at night",
}
REASONS = {"p1": "", "p2": "not_benign:instructions_for_harm", "p3": "too_dissimilar"}
DOWN = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, the connection is refused


def rewrite_rule(request):
    text = request_text(request)
    return completion(next(answer for key, answer in REWRITES.items() if key in text))


def rewriter(endpoint: str) -> dict:
    return {
        "kind": "openai",
        "endpoint": endpoint,
        "model": "boundary-llm-test",
        "temperature": 0.8,
        "seed": 7,
        "min_similarity": 0.5,
        "timeout_s": 5,
    }


@pytest.fixture
def server():
    with OpenAIServer(rewrite_rule) as running:
        yield running


@pytest.fixture
def base_file(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(BASE_PROMPTS), encoding="utf-8")
    return path


@pytest.fixture
def rewriters(settings, server):
    settings.ACRB_REWRITERS = {"boundary": rewriter(server.base_url), "down": rewriter(DOWN)}
    return settings.ACRB_REWRITERS


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- build_prompts ----------------------------------------------------------------------------


def test_build_prompts_rephrases_records_and_caches(base_file, tmp_path, server, rewriters, capsys):
    out = tmp_path / "plan.jsonl"
    args = ["build_prompts", "--base", str(base_file), "--out", str(out), "--rephrase", "boundary"]
    call_command(*args)
    assert (
        "Rephrased with boundary (boundary-llm-test): 1 kept, 2 rejected" in capsys.readouterr().out
    )
    plan = read_jsonl(out)
    texts = {row["base_text"] for row in plan}
    assert KEPT in texts and BASE_PROMPTS[1]["text"] in texts and BASE_PROMPTS[2]["text"] in texts
    records = {row["prompt_id"]: row for row in read_jsonl(tmp_path / "plan.jsonl.rephrase.jsonl")}
    assert {key: row["reason"] for key, row in records.items()} == REASONS
    assert records["p1"]["kept"] and records["p1"]["original"] == BASE_PROMPTS[0]["text"]
    assert (records["p1"]["seed"], records["p1"]["temperature"]) == (7, 0.8)
    assert server.requests[0]["seed"] == 7 and server.requests[0]["temperature"] == 0.8
    assert server.requests[0]["messages"][0]["content"] == records["p1"]["instruction"]

    asked = len(server.requests)
    call_command(*args, "--rephrase-out", str(tmp_path / "records.csv"))
    assert len(server.requests) == asked  # every answer came from the cache
    rows = list(csv.DictReader((tmp_path / "records.csv").open(encoding="utf-8")))
    assert [row["cached"] for row in rows] == ["True"] * 3
    assert [row["reason"] for row in rows] == list(REASONS.values())


def test_build_prompts_with_the_server_down_fails_in_one_line_and_writes_nothing(
    base_file, tmp_path, rewriters
):
    out = tmp_path / "plan.jsonl"
    with pytest.raises(CommandError) as caught:
        call_command(
            "build_prompts", "--base", str(base_file), "--out", str(out), "--rephrase", "down"
        )
    message = str(caught.value)
    assert "\n" not in message and f"cannot connect to {DOWN}/chat/completions" in message
    assert "nothing written" in message
    assert not out.exists() and not (tmp_path / "plan.jsonl.rephrase.jsonl").exists()


def test_build_prompts_names_the_configured_rewriters(base_file, tmp_path, rewriters):
    with pytest.raises(
        CommandError, match=r"no rewriter named 'nope'; configured: \['boundary', 'down'\]"
    ):
        call_command(
            "build_prompts",
            "--base",
            str(base_file),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--rephrase",
            "nope",
        )
    with pytest.raises(CommandError, match=r"use a \.csv or \.jsonl file"):
        call_command(
            "build_prompts",
            "--base",
            str(base_file),
            "--out",
            str(tmp_path / "p.jsonl"),
            "--rephrase",
            "boundary",
            "--rephrase-out",
            str(tmp_path / "r.txt"),
        )


# --- run_audit ----------------------------------------------------------------------------------


def audit_file(tmp_path, base_file, rephrase) -> str:
    config = {
        "study": {
            "slug": "rephrased-audit",
            "base_prompts": str(base_file),
            "attributes": ["gender"],
        },
        "rephrase": rephrase,
        "n_resamples": 10,
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return str(path)


@pytest.mark.django_db
def test_run_audit_rephrase_key_stores_kept_and_rejected_rewrites(
    tmp_path, base_file, server, capsys
):
    path = audit_file(tmp_path, base_file, {"inline-boundary": rewriter(server.base_url)})
    call_command("run_audit", "--config", path)
    assert "rephrased with inline-boundary: 1 kept, 2 rejected" in capsys.readouterr().out
    study = Study.objects.get(slug="rephrased-audit")
    stored = {row.prompt_id: row for row in PromptRephrasing.objects.filter(study=study)}
    assert {key: row.reason for key, row in stored.items()} == REASONS
    assert stored["p1"].rewriter == "inline-boundary" and stored["p1"].seed == 7
    rewritten = PlannedPrompt.objects.filter(study=study, prompt_id="p1")
    assert rewritten.exists() and {row.base_text for row in rewritten} == {KEPT}
    assert study.generation_plan.options["rephrase"]["model"] == "boundary-llm-test"


@pytest.mark.django_db
def test_run_audit_with_the_server_down_leaves_no_study(tmp_path, base_file, settings):
    settings.ACRB_REWRITERS = {"down": rewriter(DOWN)}
    with pytest.raises(CommandError) as caught:
        call_command("run_audit", "--config", audit_file(tmp_path, base_file, "down"))
    assert "\n" not in str(caught.value) and "cannot connect" in str(caught.value)
    assert not Study.objects.filter(slug="rephrased-audit").exists()
    with pytest.raises(CommandError, match="no rewriter named 'missing'"):
        call_command("run_audit", "--config", audit_file(tmp_path, base_file, "missing"))


# --- the staff plan builder -----------------------------------------------------------------


def plan_form(base_file, slug="staff-rephrased", rephrase="boundary") -> dict:
    return {
        "slug": slug,
        "base_prompts": "upload",
        "base_prompts_file": base_file.open("rb"),
        "attributes": ["gender"],
        "sample_seed": 0,
        "missing_slot": "skip",
        "rephrase": rephrase,
    }


@pytest.mark.django_db
def test_staff_plan_builder_rephrases_shows_and_exports_the_rewrites(
    staff_client, base_file, rewriters
):
    page = staff_client.get(reverse("generation:plan_new"))
    assert b'<option value="boundary">boundary (boundary-llm-test)</option>' in page.content
    response = staff_client.post(reverse("generation:plan_new"), plan_form(base_file))
    assert response.status_code == 302
    plan_page = staff_client.get(reverse("generation:study_plan", args=["staff-rephrased"]))
    assert b"<strong>1</strong> kept, <strong>2</strong> rejected" in plan_page.content

    url = reverse("generation:rephrasing_list", args=["staff-rephrased"])
    listing = staff_client.get(url).content.decode()
    for original in (row["text"] for row in BASE_PROMPTS):
        assert original in listing
    assert KEPT in listing and "not_benign:instructions_for_harm" in listing
    assert "too_dissimilar" in listing and "temperature 0.8, seed 7" in listing
    rejected = staff_client.get(url + "?show=rejected").content.decode()
    assert KEPT not in rejected and "too_dissimilar" in rejected

    csv_download = staff_client.get(url + "?format=csv")
    assert csv_download["Content-Disposition"].endswith('staff-rephrased-rephrasings.csv"')
    rows = list(csv.DictReader(io.StringIO(csv_download.content.decode())))
    assert [(row["prompt_id"], row["reason"]) for row in rows] == list(REASONS.items())
    jsonl = staff_client.get(url + "?show=kept&format=jsonl").content.decode().splitlines()
    (kept,) = [json.loads(line) for line in jsonl]
    assert kept["rewrite"] == KEPT and kept["model"] == "boundary-llm-test"
    assert staff_client.get(url + "?format=xml").status_code == 404


@pytest.mark.django_db
def test_staff_plan_builder_with_the_server_down_stores_nothing(staff_client, base_file, rewriters):
    response = staff_client.post(
        reverse("generation:plan_new"), plan_form(base_file, rephrase="down")
    )
    assert response.status_code == 400
    assert (
        b"No plan was stored: rewriter &#x27;down&#x27; failed on base prompt p1"
        in response.content
    )
    assert not Study.objects.filter(slug="staff-rephrased").exists()
    assert not PromptRephrasing.objects.exists()


@pytest.mark.django_db
def test_rephrasing_page_is_staff_only(client, study, annotators):
    url = reverse("generation:rephrasing_list", args=[study.slug])
    assert client.get(url).status_code == 302
    assert client_for(annotators[0]).get(url).status_code == 403


@pytest.mark.django_db
def test_plan_study_rephrases_and_a_dead_server_creates_no_study(base_file, rewriters, capsys):
    args = ["plan_study", "--study", "cli-rephrased", "--create", "--base", str(base_file)]
    with pytest.raises(CommandError, match=r"cannot connect .*; nothing written"):
        call_command(*args, "--rephrase", "down")
    assert not Study.objects.filter(slug="cli-rephrased").exists()
    call_command(*args, "--rephrase", "boundary")
    assert "Rephrased with boundary: 1 kept, 2 rejected" in capsys.readouterr().out
    assert PromptRephrasing.objects.filter(study__slug="cli-rephrased", kept=True).count() == 1
    call_command(*args)  # replanning without a rewriter drops the rewrites with the plan
    assert not PromptRephrasing.objects.filter(study__slug="cli-rephrased").exists()


@pytest.mark.django_db
def test_rephrasing_page_reads_in_a_fixed_number_of_queries(
    staff_client, base_file, rewriters, django_assert_max_num_queries
):
    staff_client.post(reverse("generation:plan_new"), plan_form(base_file))
    url = reverse("generation:rephrasing_list", args=["staff-rephrased"])
    with django_assert_max_num_queries(8):  # session, user, study, plan, summary, rows
        assert staff_client.get(url).status_code == 200
