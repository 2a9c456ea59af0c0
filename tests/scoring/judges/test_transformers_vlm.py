"""The real transformers loading and generation code, on tiny LLaVA-style models."""

import math

import pytest
from PIL import Image

pytestmark = pytest.mark.ml
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from scoring.judges.backends.base import DecodingConfig, VLMRequest  # noqa: E402
from scoring.judges.backends.transformers_vlm import (  # noqa: E402
    TransformersVLMBackend,
    TransformersVLMConfig,
)
from scoring.judges.cue_judge import CueJudge  # noqa: E402
from scoring.judges.records import ItemInput  # noqa: E402

OPTIONS = ("retained", "erased", "substituted")


def _image(colour, size=(40, 30)):
    return Image.new("RGB", size, colour)


def test_generates_a_few_tokens_in_batches_with_one_or_two_images(tiny_llava_dir):
    backend = TransformersVLMBackend(TransformersVLMConfig(model=tiny_llava_dir, batch_size=2))
    requests = [
        VLMRequest(images=(_image("red"),), text="is the red scarf retained ?", decoding=DecodingConfig(max_new_tokens=3)),
        VLMRequest(images=(_image("red"), _image("blue", (50, 50))), text="A or B ?", decoding=DecodingConfig(max_new_tokens=3)),
        VLMRequest(images=(_image("green"),), text="hat ?", decoding=DecodingConfig(max_new_tokens=3)),
        VLMRequest(images=("/no/such/file.png",), text="x"),
    ]  # fmt: skip
    responses = backend.generate(requests)
    assert all(isinstance(r.text, str) for r in responses[:3]) and all(r.ok for r in responses[:3])
    assert "not found" in responses[3].error
    # Batched greedy decoding gives what the same request gives alone.
    alone = backend.generate([requests[1]])[0]
    assert alone.texts == responses[1].texts


def test_option_scoring_matches_a_hand_computed_likelihood(tiny_llava_dir):
    backend = TransformersVLMBackend(TransformersVLMConfig(model=tiny_llava_dir))
    image = _image("red")
    request = VLMRequest(
        images=(image,),
        text="is the hat retained ?",
        decoding=DecodingConfig(max_new_tokens=1),
        options=OPTIONS,
    )
    [response] = backend.generate([request])
    probs = response.option_probs
    assert set(probs) == set(OPTIONS) and sum(probs.values()) == pytest.approx(1.0)
    # By hand: one unpadded forward pass per option, log-probability of its single token.
    prompt = backend._prompts([request])[0]
    model, processor = backend.model, backend.processor
    raw = {}
    for option in OPTIONS:
        inputs = processor(text=[prompt + option], images=[[image]], return_tensors="pt")
        with torch.inference_mode():
            logits = model(**inputs).logits[0, -2].float()
        token = processor.tokenizer.convert_tokens_to_ids(option)
        raw[option] = math.exp(torch.log_softmax(logits, -1)[token].item())
    total = sum(raw.values())
    assert probs == pytest.approx({k: v / total for k, v in raw.items()}, rel=1e-4)


def test_sampling_returns_n_samples(tiny_llava_dir):
    backend = TransformersVLMBackend(TransformersVLMConfig(model=tiny_llava_dir))
    decoding = DecodingConfig(temperature=1.0, n=3, max_new_tokens=2, seed=0)
    [response] = backend.generate(
        [VLMRequest(images=(_image("red"),), text="q", decoding=decoding)]
    )
    assert len(response.texts) == 3


def test_rigged_model_answers_through_the_cue_judge(rigged_llava_dir, make_image):
    backend = TransformersVLMBackend(TransformersVLMConfig(model=rigged_llava_dir, batch_size=4))
    judge = CueJudge(backend, name="tiny_vlm", decoding=DecodingConfig(max_new_tokens=1))
    items = [
        ItemInput(str(i), make_image((i * 40, 0, 0)), cue="red scarf", prompt="a nurse")
        for i in range(3)
    ]
    outputs = judge.judge_items(items)
    assert [o.label for o in outputs] == ["erased"] * 3
    assert all(o.confidence == pytest.approx(1.0) and not o.needs_review for o in outputs)
    assert judge.version == rigged_llava_dir
    # Three tokens of "erased erased erased" is not an answer: the strict parser says invalid.
    chatty = CueJudge(backend, name="tiny_vlm", decoding=DecodingConfig(max_new_tokens=3))
    assert chatty.judge_items(items[:1])[0].label == "invalid"
