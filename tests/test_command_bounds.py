"""Numbers a command refuses in one line, before any work (issue 36 §2): the bounds live in the
argument parsers (``annotations.management.helpers.bounded_int``), and the services check the
same bounds again for the callers that bypass a parser (``call_command``, forms, YAML)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from annotations import services
from annotations.management.helpers import bounded_float, bounded_int
from annotations.models import Batch, Study
from generation.services import sampled_base_prompts
from tests.generation.conftest import BASE_PROMPTS


def _run(app: str, name: str, *argv: str) -> tuple[int, str]:
    """(exit status, stderr) of ``manage.py name argv``, as from a shell."""
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        command = load_command_class(app, name)  # writes to the stderr it found when made
        try:
            command.run_from_argv(["manage.py", name, *argv])
            status = 0
        except SystemExit as exit_:
            status = exit_.code
    return status, stderr.getvalue()


def _one_refusal(status: int, stderr: str, option: str) -> str:
    assert status == 2 and "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert f"argument {option}" in last
    return last


def test_bounded_types_say_the_range_in_one_line():
    whole = bounded_int(1, 50)
    assert whole("7") == 7
    for text, words in [("-5", "-5 is out of range: use 1 to 50"), ("many", "'many' is not a")]:
        with pytest.raises(Exception, match=words):
            whole(text)
    share = bounded_float(0, 1, low_open=True)
    assert share("0.25") == 0.25
    for text in ("0", "1.5", "nan", "inf", "-1e400"):
        with pytest.raises(Exception, match="more than 0 and at most 1|finite"):
            share(text)


@pytest.mark.django_db(transaction=True)
def test_import_items_refuses_a_negative_overlap_before_creating_the_study(make_manifest):
    manifest = make_manifest()
    status, stderr = _run(
        "annotations", "import_items", str(manifest), "--study", "new-one", "--create",
        "--overlap-k", "-5",
    )  # fmt: skip
    assert "-5 is out of range: use 1 to 50" in _one_refusal(status, stderr, "--overlap-k")
    assert not Study.objects.filter(slug="new-one").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "app,name,extra",
    [
        ("scoring", "export_metrics", ["--out", "{tmp}/m.json"]),
        ("scoring", "audit_report", ["--out", "{tmp}/report"]),
        ("scoring", "compare_models", ["--out", "{tmp}/c.json"]),
    ],
)
def test_a_huge_resample_count_is_refused_not_allocated(imported_study, tmp_path, app, name, extra):
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.format(tmp=out) for a in extra]
    for resamples in ("99999999999999", "-1"):
        status, stderr = _run(
            app, name, "--study", imported_study.slug, *argv, "--resamples", resamples
        )
        line = _one_refusal(status, stderr, "--resamples")
        assert "use 0 to 100,000" in line
    assert not list(out.iterdir())  # nothing was written


@pytest.mark.django_db(transaction=True)
def test_plan_study_refuses_an_empty_or_negative_sample(tmp_path):
    base_prompts_file = tmp_path / "base.json"
    base_prompts_file.write_text(json.dumps(BASE_PROMPTS), encoding="utf-8")
    for size in ("0", "-1"):
        status, stderr = _run(
            "generation", "plan_study", "--study", "empty", "--create",
            "--base", str(base_prompts_file), "--sample-size", size,
        )  # fmt: skip
        line = _one_refusal(status, stderr, "--sample-size")
        assert "negative dimensions" not in line and "use 1 to 1,000,000" in line
    # Through call_command (no parser) the service says it, and nothing is created either.
    with pytest.raises(CommandError, match="sample size must be a whole number of at least 1"):
        call_command(
            "plan_study", study="empty", create=True, base=str(base_prompts_file), sample_size=0
        )
    assert not Study.objects.filter(slug="empty").exists()


def test_the_sample_draw_checks_its_own_inputs():
    prompts = [{"id": str(i)} for i in range(5)]
    assert len(sampled_base_prompts(prompts, size=2, seed=0)) == 2
    for size, seed in [(0, 0), (-1, 0), (2, -3), (2, 10**23)]:
        with pytest.raises(ValueError, match="sample (size|seed) must be a whole number"):
            sampled_base_prompts(prompts, size=size, seed=seed)
    with pytest.raises(ValueError, match="holds no prompts"):
        sampled_base_prompts([], size=None, seed=0)


@pytest.mark.django_db
def test_create_batch_names_a_negative_gold_count_in_its_own_words(imported_study, annotators):
    for item in imported_study.items.all()[:2]:
        services.item_set_gold(item=item, hard_refusal=False, cue="retained")
    with pytest.raises(CommandError) as refused:
        call_command(
            "create_batch", study=imported_study.slug, name="g", policy="k_overlap",
            annotators="ann0,ann1", k=1, gold_per_annotator=-3,
        )  # fmt: skip
    # Past the parser (call_command with keywords), the batch request's own check says it.
    assert str(refused.value) == (
        "nothing was created: gold items per annotator must be at least 0 (got -3)"
    )
    assert not Batch.objects.filter(study=imported_study).exists()


def test_help_states_the_bounds():
    parser = load_command_class("scoring", "export_metrics").create_parser("manage.py", "x")
    assert "0 to 100,000" in " ".join(parser.format_help().split())
