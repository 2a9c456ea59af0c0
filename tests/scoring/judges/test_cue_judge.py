import pytest

from scoring.judges.backends.base import DecodingConfig, VLMResponse
from scoring.judges.cue_judge import CueJudge, parse_cue_answer
from scoring.judges.records import INVALID_LABEL, ItemInput
from tests.scoring.judges.fakes import ScriptedBackend


@pytest.mark.parametrize(
    ("text", "label", "stated"),
    [
        ("retained", "retained", None),
        ("  Erased.\n", "erased", None),
        ("**SUBSTITUTED**", "substituted", None),
        ('"retained"', "retained", None),
        ("erased\nconfidence: 0.8", "erased", 0.8),
        ("retained\nConfidence = 85%", "retained", 0.85),
        ("retained\n\nconfidence: .5", "retained", 0.5),
    ],
)
def test_strict_parser_accepts_only_a_label_and_a_confidence(text, label, stated):
    parsed = parse_cue_answer(text)
    assert (parsed.label, parsed.stated_confidence) == (label, stated)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "The cue is retained.",
        "Answer: retained",
        "retained, mostly",
        "retained or erased",
        "kept",
        "retained\nbecause the scarf is visible",
        "retained\nconfidence: 1.5",
        "retained\nconfidence: 0.9\nextra",
        "retained retained retained",
    ],
)
def test_anything_else_is_invalid_never_guessed(text):
    parsed = parse_cue_answer(text)
    assert parsed.label == INVALID_LABEL
    assert parsed.problem


def _items():
    return [
        ItemInput(item_id=str(i), image_path=f"/img/{i}.png", cue="red scarf", prompt="a nurse")
        for i in range(6)
    ]


def test_cue_judge_confidence_sources_and_review_flags():
    backend = ScriptedBackend(
        {
            "0": VLMResponse(
                texts=["erased"], option_probs={"retained": 0.1, "erased": 0.7, "substituted": 0.2}
            ),
            "1": VLMResponse(
                texts=["retained"],
                option_probs={"retained": 0.2, "erased": 0.5, "substituted": 0.3},
            ),
            "2": "substituted\nconfidence: 0.65",
            "3": "I think it is retained",
            "4": VLMResponse(error="HTTP 500: boom"),
            "5": VLMResponse(texts=["erased", "erased", "retained", "invalid answer"]),
        }
    )
    judge = CueJudge(backend, name="scripted_cue")
    out = judge.judge_items(_items())
    assert [o.label for o in out] == [
        "erased",
        "retained",
        "substituted",
        INVALID_LABEL,
        None,
        "erased",
    ]
    assert out[0].confidence == 0.7 and not out[0].needs_review
    # The text says retained but the options say erased: keep the text, ask a human.
    assert out[1].confidence == 0.2 and out[1].needs_review
    assert out[2].confidence == 0.65
    assert out[3].needs_review and out[3].evidence["parse_problems"]
    assert "HTTP 500" in out[4].error
    assert out[5].confidence == 0.5  # two of four samples
    assert judge.version == "scripted-1"
    request = backend.requests[0]
    assert "requested attribute" in request.text and '"red scarf"' in request.text
    assert set(request.options) == {"retained", "erased", "substituted"}
    assert out[0].evidence["option_order"] == list(judge.option_order(_items()[0]))
    assert request.images == ("/img/0.png",)


def test_sample_tie_needs_review_and_items_without_cue_or_image_err():
    backend = ScriptedBackend({"t": VLMResponse(texts=["erased", "retained"])})
    judge = CueJudge(backend, name="c", decoding=DecodingConfig(temperature=0.7, n=2))
    items = [
        ItemInput(item_id="nocue", image_path="/x.png"),
        ItemInput(item_id="t", image_path="/x.png", cue="hat"),
        ItemInput(item_id="noimage", cue="hat"),
    ]
    nocue, tie, noimage = judge.judge_items(items)
    assert "no cue" in nocue.error and "no image" in noimage.error
    assert tie.needs_review and tie.confidence == 0.5
    assert [r.request_id for r in backend.requests] == ["t"]


def test_cache_prompt_holds_question_decoding_and_backend():
    judge = CueJudge(ScriptedBackend({}), name="c")
    a = ItemInput(item_id="1", cue="hat", image_path="/a.png")
    b = ItemInput(item_id="2", cue="scarf", image_path="/a.png")
    assert judge.cache_prompt(a) != judge.cache_prompt(b)
    assert "hat" in judge.cache_prompt(a) and "scripted-1" in judge.cache_prompt(a)


def test_decoding_config_validation():
    with pytest.raises(ValueError):
        DecodingConfig(n=3)  # greedy repeated samples are pointless
    with pytest.raises(ValueError):
        DecodingConfig(temperature=-1)
    assert DecodingConfig.from_dict({"temperature": 0.7, "n": 5}).n == 5
