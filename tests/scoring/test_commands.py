"""score_study (inline and through the eager task), calibrate_refusal."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from acrb_web.celery import app as celery_app
from annotations.models import AutomatedJudgment, BackgroundJob
from scoring.models import RefusalThreshold
from tests.scoring.conftest import RULES_JUDGE
from tests.scoring.test_calibration import JUDGE as CLIP_JUDGE
from tests.scoring.test_calibration import labelled_study


@pytest.mark.django_db
def test_score_study_inline(mixed_study, judges, capsys):
    judges(rules=RULES_JUDGE)
    call_command("score_study", "--study", mixed_study.slug, "--judge", "rules", "--inline")
    assert "rules@1: 6 items, 0 errors" in capsys.readouterr().out
    assert AutomatedJudgment.objects.filter(item__study=mixed_study).count() == 6


@pytest.mark.django_db(transaction=True)
def test_score_study_queues_batches_and_waits(mixed_study, judges, capsys):
    judges(rules=RULES_JUDGE)
    call_command(
        "score_study",
        "--study",
        mixed_study.slug,
        "--judge",
        "rules",
        "--batch-size",
        "4",
        "--timeout",
        "30",
    )
    out = capsys.readouterr().out
    assert "2 batches queued" in out and "Scored 6 items; 0 recorded an error." in out
    assert BackgroundJob.objects.get().status == "succeeded"


@pytest.mark.django_db(transaction=True)
def test_score_study_exits_non_zero_when_the_job_fails(mixed_study, judges):
    judges(broken={"kind": "cue_vlm", "name": "broken", "backend": {"type": "nope"}})
    celery_app.conf.task_eager_propagates = False  # as on a worker: the failure is recorded
    try:
        with pytest.raises(CommandError, match="failed: .*unknown backend type"):
            call_command(
                "score_study", "--study", mixed_study.slug, "--judge", "broken", "--timeout", "30"
            )
    finally:
        celery_app.conf.task_eager_propagates = True
    assert BackgroundJob.objects.get().status == "failed"


@pytest.mark.django_db
def test_unknown_judge_and_study_are_command_errors(mixed_study, judges):
    judges(rules=RULES_JUDGE)
    with pytest.raises(CommandError, match="no judge named 'nope'"):
        call_command("score_study", "--study", mixed_study.slug, "--judge", "nope", "--inline")
    with pytest.raises(CommandError, match="unknown study"):
        call_command("score_study", "--study", "missing", "--judge", "rules")


@pytest.mark.django_db
def test_calibrate_refusal_prints_and_stores_tau(study, judges, capsys):
    judges(**{"clip-refusal": CLIP_JUDGE})
    labelled_study(study)
    call_command("calibrate_refusal", "--study", study.slug, "--criterion", "youden")
    out = capsys.readouterr().out
    assert (
        "gen-a" in out
        and "gen-b" in out
        and "τ = " in out
        and "precision" in out
        and "recall" in out
    )
    assert RefusalThreshold.objects.filter(study=study, criterion="youden").count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("n_resamples: -1\n", "n_resamples: must be a whole number"),
        ("n_bootstrap: many\n", "'many'"),
    ],
)
def test_run_audit_rejects_a_bad_resample_count_before_creating_anything(tmp_path, extra, message):
    from annotations.models import Study

    config = tmp_path / "study.yaml"
    config.write_text("study: {slug: never-made, name: x}\n" + extra, encoding="utf-8")
    with pytest.raises(CommandError, match=message) as caught:
        call_command("run_audit", "--config", str(config))
    assert str(config) in str(caught.value)
    assert not Study.objects.filter(slug="never-made").exists()
