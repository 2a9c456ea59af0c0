"""VLM judges the way vLLM/SGLang serve them, against the loopback server: several images per
request, the per-request image limit, constrained choices with a fallback to strict parsing,
logprob confidence, and counterbalanced, recorded option order."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from scoring.judges.backends.base import VLMRequest
from scoring.judges.backends.openai_compat import OpenAICompatBackend, OpenAICompatConfig
from scoring.judges.counterbalance import counterbalanced_order, swapped
from scoring.judges.cue_judge import CueJudge
from scoring.judges.records import CUE_LABELS, ItemInput
from tests.support.openai_server import (
    OpenAIServer,
    answer_constrained,
    answer_with,
    request_image_urls,
    request_text,
)


def _backend(server, **overrides):
    config = OpenAICompatConfig(
        endpoint=server.base_url, model="loopback-vlm", backoff_base_s=0.01, **overrides
    )
    return OpenAICompatBackend(config, sleep=time.sleep)


def test_source_and_edit_travel_in_one_request_in_that_order(make_image):
    source, edited = make_image((10, 0, 0)), make_image((0, 10, 0))
    with OpenAIServer(answer_with("erased"), max_images=2) as server:
        judge = CueJudge(_backend(server, max_images_per_request=2), name="i2i")
        [out] = judge.judge_items(
            [ItemInput("1", edited, cue="hat", prompt="add a hat", source_image_path=source)]
        )
        [body] = server.requests
    urls = request_image_urls(body)
    assert len(urls) == 2 and urls[0] != urls[1]
    assert "first image is the source" in request_text(body)
    assert out.label == "erased" and out.evidence["images"] == 2


def test_requests_over_the_image_limit_fail_locally_with_one_clear_line(make_image):
    images = tuple(make_image((i, i, i)) for i in range(3))
    with OpenAIServer(answer_with("retained"), max_images=2) as server:
        [response] = _backend(server, max_images_per_request=2).generate(
            [VLMRequest(images=images, text="q")]
        )
        assert server.requests == []  # never sent
    assert "3 images in one request, over max_images_per_request=2" in response.error


def test_the_server_enforces_its_own_limit_when_the_client_does_not_know_it(make_image):
    images = tuple(make_image((i, i, i)) for i in range(3))
    with OpenAIServer(answer_with("retained"), max_images=2) as server:
        [response] = _backend(server).generate([VLMRequest(images=images, text="q")])
    assert response.error.startswith("HTTP 400") and "At most 2 image" in response.error


def test_options_are_sent_as_a_structured_choice_and_constrain_the_answer(make_image):
    with OpenAIServer(answer_constrained("I think it is retained")) as server:
        judge = CueJudge(_backend(server), name="vllm", counterbalance=False)
        [out] = judge.judge_items([ItemInput("1", make_image((1, 2, 3)), cue="hat")])
        [body] = server.requests
    assert body["structured_outputs"] == {"choice": list(CUE_LABELS)}
    assert out.label == "retained"  # the server could only answer a choice


def test_a_server_without_structured_outputs_is_asked_again_and_parsed_strictly(make_image):
    with OpenAIServer(answer_with("Retained, I think"), structured_outputs=False) as server:
        backend = _backend(server, concurrency=1)  # in order: the second item comes after
        judge = CueJudge(backend, name="old")
        first, second = judge.judge_items(
            [ItemInput(str(i), make_image((i, 0, 0)), cue="hat") for i in range(2)]
        )
        bodies = server.requests
    assert "structured_outputs" in bodies[0]
    assert all("structured_outputs" not in b for b in bodies[1:])  # remembered: rejected once
    assert len(bodies) == 3 and backend.structured_outputs is False
    assert first.label == "invalid" and second.label == "invalid"  # strict parsing
    assert first.error is None and first.evidence["attempts"] == 2


def test_logprobs_give_the_confidence_of_the_constrained_answer(make_image):
    probs = {"erased": 0.6, "retained": 0.3, "substituted": 0.1}
    with OpenAIServer(answer_constrained("erased", top_logprobs=probs)) as server:
        judge = CueJudge(_backend(server), name="lp")
        [out] = judge.judge_items([ItemInput("1", make_image((1, 2, 3)), cue="hat")])
        [body] = server.requests
    assert body["logprobs"] is True and body["top_logprobs"] == 5
    assert out.confidence == pytest.approx(0.6)


def test_option_order_is_counterbalanced_recorded_and_matches_the_question(make_image):
    image = make_image((5, 5, 5))
    items = [ItemInput(str(i), image, cue="hat") for i in range(60)]
    with OpenAIServer(answer_constrained("retained")) as server:
        judge = CueJudge(_backend(server, concurrency=8), name="cb")
        outputs = judge.judge_items(items)
        bodies = {request_text(b): b for b in server.requests}
    orders = [tuple(o.evidence["option_order"]) for o in outputs]
    assert len(set(orders)) == 6  # every permutation of the three labels occurs
    assert max(Counter(orders).values()) <= 20  # none dominates (60 items, 10 expected each)
    for item, order in zip(items, orders, strict=True):
        assert order == judge.option_order(item)  # reproducible from the item id
        body = bodies[judge.question(item)]
        assert body["structured_outputs"]["choice"] == list(order)
        listed = [line.split(":")[0].strip("- ") for line in judge.question(item).splitlines()
                  if line.startswith("- ")]  # fmt: skip
        assert listed == list(order)
    assert {o.label for o in outputs} == {"retained"}  # the order never changes the label


def test_two_option_presentations_swap_about_half_the_time():
    swaps = [swapped(("A", "B"), key=f"pair-{i}") for i in range(400)]
    assert 160 < sum(swaps) < 240
    assert counterbalanced_order(("A", "B"), key="x") == counterbalanced_order(("A", "B"), key="x")


def test_an_image_shared_by_many_requests_is_read_once(make_image, monkeypatch):
    from scoring.judges.backends import openai_compat

    face = make_image((20, 30, 40))
    reads = []
    real = openai_compat.image_data_url

    def slow_read(source):
        # A slow read makes the concurrent requests overlap, as they do on a loaded machine:
        # every thread then misses a plain cache at once.
        reads.append(source)
        time.sleep(0.05)
        return real(source)

    monkeypatch.setattr(openai_compat, "image_data_url", slow_read)
    openai_compat._file_data_url.cache_clear()
    requests = [VLMRequest(images=(face, make_image((i, 0, 0))), text="q") for i in range(4)]
    with OpenAIServer(answer_with("A")) as server:
        responses = _backend(server).generate(requests)
        urls = [request_image_urls(body)[0] for body in server.requests]
    assert all(r.error is None for r in responses) and len(set(urls)) == 1
    assert reads.count(face) == 1 and len(reads) == 5
