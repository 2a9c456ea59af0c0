"""The real CLIP loading path on a tiny open_clip model, and run_audit on a tiny pipeline."""

from __future__ import annotations

import pytest
import yaml
from django.core.management import call_command

from annotations.imports import importers
from annotations.models import AutomatedJudgment, Item, Study
from scoring import services
from scoring.management.commands.seed_pipeline_demo import tiny_config
from tests.scoring.conftest import RULES_JUDGE

pytestmark = [pytest.mark.ml, pytest.mark.django_db]


@pytest.fixture(scope="session")
def tiny_clip_dir(tmp_path_factory):
    pytest.importorskip("open_clip")
    from tests.support.tiny_models import build_tiny_open_clip

    return build_tiny_open_clip(tmp_path_factory.mktemp("tiny_clip"))["local_dir"]


def clip_judge(folder: str, **extra) -> dict:
    clip = {
        "architecture": f"local-dir:{folder}",
        "pretrained": None,
        "device": "cpu",
        "batch_size": 4,
    }
    return {"kind": "hard_refusal", "name": "clip-refusal", "version": "1", "clip": clip, **extra}


def test_study_scored_with_tiny_clip_stores_the_refusal_similarity(
    mixed_study, judges, tiny_clip_dir
):
    judges(clip=clip_judge(tiny_clip_dir))
    summary = services.study_score(study=mixed_study, judge_name="clip", device="cpu")
    assert summary.items == 6 and summary.errors == 0
    rows = {
        r.item.item_id: r
        for r in AutomatedJudgment.objects.filter(judge="clip-refusal").select_related("item")
    }
    with_image = [rows[f"photo-{i}"] for i in range(4)] + [rows["blank"]]
    assert all(isinstance(row.score, float) and -1.0 <= row.score <= 1.0 for row in with_image)
    for row in with_image:
        checks = row.raw_output["evidence"]["checks"]
        assert checks[-1]["check"] == "clip" and checks[-1]["refusal_similarity"] == pytest.approx(
            row.score
        )
    assert rows["refused"].score is None and rows["refused"].hard_refusal is True


def test_calibrated_tau_is_applied_per_generator_on_the_next_run(
    mixed_study, judges, tiny_clip_dir
):
    judges(clip=clip_judge(tiny_clip_dir))
    services.study_score(study=mixed_study, judge_name="clip")
    lines = ["item_id,annotator,annotator_group,hard_refusal,cue"]
    for item in Item.objects.filter(study=mixed_study).exclude(item_id="refused"):
        refusal = item.item_id == "blank" or item.item_id == "photo-0"
        lines += [
            f"{item.item_id},{name},,{refusal},{'' if refusal else 'retained'}"
            for name in ("r1", "r2")
        ]
    importers.annotations_import(
        study=mixed_study, csv_text="\n".join(lines) + "\n", create_annotators=True
    )
    result = services.refusal_threshold_calibrate(
        study=mixed_study, judge_name="clip", criterion="f1"
    )
    taus = {row.generator: row.tau for row in result.thresholds if row.generator}
    assert set(taus) == {"gen-a", "gen-b"}
    services.study_score(study=mixed_study, judge_name="clip")
    for row in (
        AutomatedJudgment.objects.filter(judge="clip-refusal")
        .exclude(score=None)
        .select_related("item")
    ):
        assert row.raw_output["evidence"]["checks"][-1]["tau"] == pytest.approx(
            taus[row.item.generator]
        )
    assert AutomatedJudgment.objects.filter(judge="clip-refusal").count() == 6


def test_run_audit_quick_runs_stages_one_to_three(tmp_path, settings, tiny_clip_dir, capsys):
    pytest.importorskip("diffusers")
    from generation.backends.tiny import build_tiny_text2image

    pipeline = build_tiny_text2image(tmp_path / "tiny_t2i")
    generator = tiny_config(pipeline)  # the pipeline demo's tiny generator config
    settings.ACRB_JUDGES = {"rules": RULES_JUDGE}
    config = {
        "study": {
            "slug": "audit-quick",
            "name": "Quick audit",
            "attributes": ["culture"],
            "seeds": [0],
            "generators": {"tiny-a": generator, "tiny-b": generator},
        },
        "judges": {"rules": None, "clip": clip_judge(tiny_clip_dir)},
        "n_resamples": 50,
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    call_command("run_audit", "--config", str(path), "--quick")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="audit-quick")
    items = Item.objects.filter(study=study)
    assert items.exists() and set(items.values_list("generator", flat=True)) == {"tiny-a"}
    assert (
        1 <= len(set(items.values_list("base_prompt_id", flat=True))) <= 2
    )  # prompts without a slot are skipped
    judged = AutomatedJudgment.objects.filter(item__study=study)
    assert (
        judged.filter(judge="rules").count()
        == judged.filter(judge="clip-refusal").count()
        == items.count()
    )
    assert "Stage III" in out and "Largest disparities" in out
