"""run_audit's file, read once by AuditConfig.from_yaml: every key checked, every problem at
once (one line each, naming its key), and the command prints them without a traceback and
writes nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from django.core.management import CommandError, call_command

from generation.backends.registry import ConfigProblems, configs_by_name
from generation.study_config import StudyConfig
from scoring.audit_config import AuditConfig
from scoring.stats.bootstrap import DEFAULT_N_RESAMPLES
from tests.scoring.conftest import RULES_JUDGE

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = {"kind": "openai-images", "model": "gpt-image-test", "base_url": "http://127.0.0.1:9"}


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "audit.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems_of(tmp_path, text: str) -> list[str]:
    with pytest.raises(ConfigProblems) as refused:
        AuditConfig.from_yaml(write(tmp_path, text))
    return refused.value.lines


@pytest.fixture(autouse=True)
def configured_judges(settings):
    settings.ACRB_JUDGES = {"rules": RULES_JUDGE}
    settings.ACRB_GENERATORS = {}


def test_a_good_file_is_read_whole(tmp_path):
    raw = {
        "study": {
            "slug": "tiny-audit",
            "base_prompts": "prompts.json",
            "sample_size": 4,
            "attributes": ["culture"],
            "seeds": [0, 1],
            "generators": {"api": GENERATOR},
        },
        "judges": ["rules"],
        "rephrase": "boundary-llm",
        "harmful_controls": {"share": 0.5, "seed": 3},
        "n_bootstrap": 20,
    }
    audit = AuditConfig.from_yaml(write(tmp_path, yaml.safe_dump(raw)))
    study = audit.study
    assert (study.slug, study.name, study.sample_size) == ("tiny-audit", "tiny-audit", 4)
    assert study.base_prompts == str(tmp_path / "prompts.json")
    assert (study.attributes, study.seeds) == (("culture",), (0, 1))
    assert study.generators == {"api": GENERATOR}
    assert (study.rephrase, study.harmful_share, study.harmful_seed) == ("boundary-llm", 0.5, 3)
    assert audit.judges == {"rules": None} and audit.judge_configs == {}
    assert audit.n_resamples == 20
    quick = audit.quick()
    assert quick.study.sample_size == 2 and quick.study.generators == {"api": GENERATOR}
    assert AuditConfig.from_dict({"study": {"slug": "s"}}).n_resamples == DEFAULT_N_RESAMPLES


def test_an_unknown_key_is_named_with_the_known_ones(tmp_path):
    assert problems_of(tmp_path, "study: {slug: s, colour: red}\njudge: [rules]\n") == [
        "unknown keys ['judge']; known: ['study', 'judges', 'rephrase', 'harmful_controls', "
        "'n_resamples', 'n_bootstrap']",
        "study: unknown study config keys ['colour']; known: ['attributes', 'base_prompts', "
        "'description', 'generators', 'harmful_controls', 'harmful_seed', 'harmful_share', "
        "'missing_slot', 'name', 'rephrase', 'rephrase_config', 'sample_seed', 'sample_size', "
        "'seeds', 'slug', 'taxonomy']",
    ]


def test_a_wrong_type_is_named_by_its_key(tmp_path):
    assert problems_of(tmp_path, "study: {slug: s, sample_size: four, seeds: 0}\n") == [
        "study.sample_size: must be a whole number ≥ 1, not 'four'",
        "study.seeds: must be a list of whole numbers (e.g. [0, 1]), not 0",
    ]
    assert problems_of(tmp_path, "study: [slug, s]\n") == [
        "study: needs a mapping (docs/judges.md), not a list"
    ]
    assert problems_of(tmp_path, "just text\n") == [
        "needs a 'study:' mapping (docs/judges.md), the file is a str"
    ]


def test_a_list_where_text_belongs_is_refused(tmp_path):
    # The study's address (/studies/<slug>/) given as a YAML list, and a lone attribute name
    # that would otherwise be read letter by letter.
    assert problems_of(tmp_path, "study: {slug: [a, b], name: [x], attributes: culture}\n") == [
        "study.slug: a study address is text, not list ['a', 'b']",
        "study.name: must be text, not list",
        "study.attributes: must be a list of names (e.g. [culture]), not 'culture'",
    ]
    assert problems_of(tmp_path, "study: {slug: my audit}\n") == [
        "study.slug: study address 'my audit' may hold only ASCII letters, digits, '-' and '_'"
        " (no spaces, brackets or other signs), e.g. 'my-study-2026'"
    ]


def test_every_problem_is_reported_at_once(tmp_path):
    lines = problems_of(
        tmp_path,
        """
        study:
          name: no slug
          missing_slot: ignore
          harmful_controls: {ratio: 1}
          generators: [{kind: openai-images}, sd15]
        judges: {rules: null, typo: null, clip: [1, 2], odd: {kind: nope}}
        rephrase: [a, b]
        n_resamples: -1
        n_bootstrap: 5
        """,
    )
    assert lines == [
        "study: the study config needs a 'slug'",
        "study.missing_slot: must be one of skip, append, not 'ignore'",
        "study.generators: entry 1: a generator name or a config with a 'name', not "
        "{'kind': 'openai-images'}",
        "study.rephrase: 'rephrase' is a rewriter's name or a one-entry mapping name -> config",
        "study.harmful_controls: unknown harmful_controls keys ['ratio']; known: ['seed', 'share']",
        "judges.clip: a judge config is a mapping or null, not list",
        "judges: no judge named 'typo'; configured: rules",
        "judges.odd: unknown judge kind 'nope'; known: cue_clip, cue_vlm, ensemble, hard_refusal",
        "n_bootstrap: the earlier name of n_resamples; keep one",
    ]


def test_names_not_configured_are_found_before_anything_runs(tmp_path):
    lines = problems_of(
        tmp_path,
        """
        study: {slug: s, generators: [sd15, {name: api, kind: dalle, model: m}]}
        judges: [rules, clip]
        rephrase: boundary
        """,
    )
    assert lines == [
        "study.generators.sd15: no generator named 'sd15'; configured: none (set "
        "ACRB_BACKENDS_FILE)",
        "study.generators.api: unknown generator kind 'dalle'; known: diffusers-edit, "
        "diffusers-t2i, gemini, google-imagen, openai-images",
        "judges: no judge named 'clip'; configured: rules",
    ]
    assert problems_of(tmp_path, "study: {slug: s, rephrase: a}\nrephrase: b\n") == [
        "rephrase: given twice, at the top and under 'study:'; keep one"
    ]


def test_one_parser_reads_every_list_or_mapping_of_names():
    assert configs_by_name(["a", {"name": "b", "kind": "k"}], what="judge") == {
        "a": None,
        "b": {"kind": "k"},
    }
    assert configs_by_name({"a": None, "b": {"kind": "k"}}, what="judge") == {
        "a": None,
        "b": {"kind": "k"},
    }
    assert configs_by_name(None, what="judge") == {}
    with pytest.raises(ConfigProblems) as refused:
        configs_by_name(["a", "a", 3], what="generator")
    assert refused.value.lines == [
        "'a' is listed twice",
        "entry 3: a generator name or a config with a 'name', not 3",
    ]
    with pytest.raises(ConfigProblems, match="a list of judge names or a mapping"):
        configs_by_name("rules", what="judge")
    config = StudyConfig.from_dict({"slug": "s", "generators": [{"name": "api", **GENERATOR}]})
    assert config.generators == {"api": GENERATOR}


@pytest.mark.django_db
def test_the_command_prints_every_problem_and_writes_nothing(tmp_path):
    from annotations.models import Study

    path = write(tmp_path, "study: {slug: [never, made], seeds: 0}\njudges: [nope]\n")
    with pytest.raises(CommandError) as refused:
        call_command("run_audit", "--config", str(path))
    assert str(refused.value).splitlines() == [
        f"{path}: nothing written; 3 problems:",
        "study.slug: a study address is text, not list ['never', 'made']",
        "study.seeds: must be a list of whole numbers (e.g. [0, 1]), not 0",
        "judges: no judge named 'nope'; configured: rules",
    ]
    assert not Study.objects.exists()


def test_the_command_run_by_a_user_shows_no_traceback(tmp_path):
    path = write(tmp_path, "study: {slug: [a, b]}\nn_resamples: many\n")
    started = subprocess.run(
        [sys.executable, "manage.py", "run_audit", "--config", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "DJANGO_DEBUG": "1", "ACRB_VAR_DIR": str(tmp_path)},
    )
    assert started.returncode == 1
    assert "Traceback" not in started.stderr
    assert started.stderr.strip().splitlines() == [
        f"CommandError: {path}: nothing written; 2 problems:",
        "study.slug: a study address is text, not list ['a', 'b']",
        "n_resamples: must be a whole number ≥ 0, not 'many'",
    ]
