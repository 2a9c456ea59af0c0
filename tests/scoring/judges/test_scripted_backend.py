"""The scripted VLM (type ``scripted``): deterministic, biased as its docstring says, and built
by name through the one registry like every VLM backend."""

import pytest

from scoring.judges.backends.base import VLMRequest
from scoring.judges.backends.scripted import (
    REFUSAL_ANSWER,
    ScriptedVLMBackend,
    ScriptedVLMConfig,
    standing,
)
from scoring.judges.registry import BackendConfigError, build_vlm_backend, vlm_backend_config
from scoring.stats.reflect.parsing import parse_letter, parse_salary
from scoring.stats.reflect.vocabulary import VALID


def ask(backend, key):
    return backend.generate([VLMRequest(images=(), text="question", request_id=key)])[0]


def two_afc_key(a, b, template="t01", scenario="income"):
    return f"2afc/{scenario}/original/CEO/{template}/{a}/{b}"


def test_built_by_name_through_the_registry():
    config = vlm_backend_config({"type": "scripted", "seed": 3}, name="demo")
    backend = build_vlm_backend(config)
    assert isinstance(backend, ScriptedVLMBackend)
    assert (backend.name, backend.version) == ("scripted:scripted-demo", "seed3")
    with pytest.raises(BackendConfigError, match="unknown VLM backend config keys"):
        vlm_backend_config({"type": "scripted", "colour": "red"}, name="demo")
    with pytest.raises(ValueError, match="refusal_rate"):
        ScriptedVLMConfig(refusal_rate=2)


def test_answers_are_deterministic_per_seed_and_request():
    keys = [two_afc_key("White|female", "Black|male", template=f"t{i}") for i in range(40)]
    first = [ask(ScriptedVLMBackend(ScriptedVLMConfig(seed=1)), k).text for k in keys]
    again = [ask(ScriptedVLMBackend(ScriptedVLMConfig(seed=1)), k).text for k in keys]
    other = [ask(ScriptedVLMBackend(ScriptedVLMConfig(seed=2)), k).text for k in keys]
    assert first == again and first != other


def test_the_documented_bias_shows_in_its_answers():
    backend = ScriptedVLMBackend(ScriptedVLMConfig(refusal_rate=0, invalid_rate=0))
    templates = [f"t{i}" for i in range(400)]
    a_wins = sum(
        ask(backend, two_afc_key("White|male", "Black|female", t)).text == "A" for t in templates
    )
    assert a_wins / len(templates) > 0.7  # σ(0.9 + 0.3) ≈ 0.77
    safety = sum(
        ask(backend, two_afc_key("Latino|female", "Latino|male", t, "perceived_safety")).text == "A"
        for t in templates
    )
    assert safety / len(templates) > 0.6  # women read as safer: σ(0.6 + 0.3) ≈ 0.71
    assert standing("White|male") > standing("Black|female")

    def pay(group):
        answers = [ask(backend, f"salary/original/CEO/{t}/{group}/b1").text for t in templates[:50]]
        return sum(parse_salary(a)[1] for a in answers) / len(answers)

    assert pay("Black|female") < pay("White|male")


def test_every_answer_parses_and_some_are_refusals():
    backend = ScriptedVLMBackend(ScriptedVLMConfig(refusal_rate=0.2, invalid_rate=0.0))
    answers = [ask(backend, f"mcq/salary/original/CEO/t{i}/Asian|male/s0").text for i in range(200)]
    statuses = [parse_letter(a, "ABCDEF")[0] for a in answers]
    assert statuses.count(VALID) + answers.count(REFUSAL_ANSWER) == 200
    assert 20 < answers.count(REFUSAL_ANSWER) < 60


@pytest.mark.parametrize(
    "key", [None, "cue/anything", "2afc/income/original/CEO", "mcq/salary/o/CEO/t/Martian|male/s0"]
)
def test_a_request_it_has_no_script_for_is_an_error_response(key):
    response = ask(ScriptedVLMBackend(ScriptedVLMConfig()), key)
    assert response.text is None and "no script for request" in response.error
