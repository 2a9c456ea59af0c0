"""Commands that need no database, and plan_study."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.generation.conftest import PLANNED_ROWS, SKIPPED_ROWS


def test_build_prompts_writes_the_plan_without_a_database(base_prompts_file, tmp_path, capsys):
    out = tmp_path / "prompts.jsonl"
    call_command("build_prompts", base=str(base_prompts_file), out=str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3 * 24  # 3 base prompts × (neutral + 23 shipped values)
    assert {row["skip_reason"] for row in rows if row["prompt_id"] == "p3"} == {"no_person_slot"}
    assert "planned" in capsys.readouterr().out


def test_build_prompts_reports_a_bad_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(CommandError, match="no prompts"):
        call_command("build_prompts", base=str(bad), out=str(tmp_path / "x.jsonl"))


@pytest.mark.django_db
def test_plan_study_creates_and_plans(base_prompts_file, capsys):
    call_command(
        "plan_study", study="cli", create=True, base=str(base_prompts_file), attributes=["gender"]
    )
    assert f"{PLANNED_ROWS} planned, {SKIPPED_ROWS} skipped" in capsys.readouterr().out
    with pytest.raises(CommandError, match="unknown study"):
        call_command("plan_study", study="missing")
