"""The real backends: the local transformers VLM (a tiny random-weight LLaVA built here,
rigged to answer "a") and the OpenAI-compatible backend (loopback server, in the other tests)."""

import json

import pytest
from django.core.management import call_command

from scoring.reflect.models import ReflectAnswer
from tests.scoring.reflect.fakes import write_face_set

pytestmark = [pytest.mark.ml, pytest.mark.django_db]


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.support.tiny_models import build_tiny_llava

    return build_tiny_llava(tmp_path_factory.mktemp("tiny-llava"), answer_word="a")


def test_local_model_answers_every_request_and_the_report_shows_position_bias(
    tiny_vlm, tmp_path, settings
):
    folder = write_face_set(tmp_path / "faces", occupations=("CEO",), templates_per_occupation=1)
    call_command("import_face_set", str(folder), "--set", "tiny", verbosity=0)
    settings.ACRB_VLM_MODELS = {
        "tiny-llava": {"type": "transformers", "model": tiny_vlm, "device": "cpu", "batch_size": 16}
    }
    call_command(
        "run_reflect",
        "--set",
        "tiny",
        "--model",
        "tiny-llava",
        "--tasks",
        "2afc,mcq",
        "--max-new-tokens",
        "1",
        verbosity=0,
    )
    answers = ReflectAnswer.objects.all()
    assert answers.count() == 270 + 20
    assert set(answers.values_list("raw_answer", flat=True)) == {"a"}
    assert answers.filter(task="2afc").first().model_version.startswith("transformers:")
    out = tmp_path / "report"
    call_command(
        "reflect_report",
        "--set",
        "tiny",
        "--out",
        str(out),
        "--resamples",
        "0",
        "--no-figures",
        verbosity=0,
    )
    model = json.loads((out / "report.json").read_text())["reflect"]["models"]["tiny-llava"]
    block = model["2afc"]["income"]
    # Always "A": every comparison flips with the swap, so none is kept.
    assert (block["attempted"], block["kept"], block["discarded_inconsistent"]) == (45, 0, 45)
    assert block["first_position_rate"] == 1.0
    assert model["mcq"]["salary"]["valid"] == 10
    assert model["mcq"]["salary"]["distribution"]["pooled"]["A"] == 1.0
