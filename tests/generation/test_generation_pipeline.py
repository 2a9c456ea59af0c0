"""Stage II end to end with a tiny random-weight pipeline loaded from a folder (CPU, 32×32,
2 steps), and the pipeline demo command."""

import io

import pytest
from django.core.management import call_command

from annotations.models import Batch, Item, Study
from generation import services
from generation.runs import execution

pytestmark = [pytest.mark.ml, pytest.mark.django_db(transaction=True)]
pytest.importorskip("torch")
pytest.importorskip("diffusers")

from generation.backends.tiny import build_tiny_text2image  # noqa: E402


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return build_tiny_text2image(tmp_path_factory.mktemp("tiny") / "t2i")


def tiny_config(folder, **overrides):
    return {
        "kind": "diffusers-t2i",
        "model": str(folder),
        "device": "cpu",
        "steps": 2,
        "width": 32,
        "height": 32,
        "guidance": 5.0,
        "batch_size": 4,
        **overrides,
    }


def test_tiny_pipeline_generates_items_and_stays_loaded(planned_study, tiny_folder, monkeypatch):
    from PIL import Image

    loads = []
    real_load = execution.backends.load_generator
    monkeypatch.setattr(
        execution.backends, "load_generator", lambda config: loads.append(1) or real_load(config)
    )
    services.study_generator_attach(
        study=planned_study, name="tiny", config=tiny_config(tiny_folder), seeds=[0, 1]
    )
    progress = []
    summary = services.generation_run_inline(
        study=planned_study, progress=lambda d, t: progress.append((d, t))
    )
    assert (summary.done, summary.refused, summary.error, summary.open) == (16, 0, 0, 0)
    assert progress[-1] == (16, 16) and len(loads) == 1  # one load, four chunks
    item = Item.objects.get(item_id="p1:gender:female|tiny|s1")
    with item.image.open("rb") as handle:
        assert Image.open(io.BytesIO(handle.read())).size == (32, 32)
    params = item.generation_params
    assert (params["seed"], params["steps"], params["guidance"], params["width"]) == (1, 2, 5.0, 32)
    assert params["kind"] == "diffusers-t2i" and params["extra"]["device"] == "cpu"
    assert services.generation_run_inline(study=planned_study).done == 16 and len(loads) == 1
    assert Item.objects.count() == 16


def test_safety_checker_flag_is_a_refusal_on_the_item(planned_study, tmp_path):
    folder = build_tiny_text2image(tmp_path / "flagging", safety="always")
    services.study_generator_attach(study=planned_study, name="strict", config=tiny_config(folder))
    summary = services.generation_run_inline(study=planned_study)
    assert summary.refused == 8
    item = Item.objects.first()
    assert item.provider_refusal_code == "nsfw_content_detected" and not item.image


def test_pipeline_demo_runs_every_stage_and_says_images_are_noise(tiny_folder, capsys, db):
    import logging

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    libraries = [logging.getLogger(name) for name in ("diffusers", "transformers")]
    for library in libraries:
        library.addHandler(handler)
    try:
        call_command("seed_pipeline_demo", folder=tiny_folder, prompts=2, attributes=["gender"])
    finally:
        for library in libraries:
            library.removeHandler(handler)
    out = capsys.readouterr().out
    assert "NOISE" in out
    # issue 21: no flood of CLIP's "<|endoftext|>" truncation warnings in the terminal
    assert not [r.getMessage()[:80] for r in records if r.levelno < logging.ERROR]
    study = Study.objects.get(slug="pipeline-demo")
    assert (
        study.is_synthetic_demo and Item.objects.filter(study=study).exclude(image="").count() > 0
    )
    assert Batch.objects.get(study=study).assignments.exists()
    # Harmful controls are planned and generated, judged, and kept from annotators (no opt-in).
    harmful = Item.objects.filter(study=study, intent="harmful")
    assert harmful.exists() and all(item.judgments.exists() for item in harmful)
    assert not Batch.objects.get(study=study).assignments.filter(item__intent="harmful").exists()
