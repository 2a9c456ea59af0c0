import base64
import threading
import time

import pytest

from scoring.judges.backends.base import DecodingConfig, VLMRequest
from scoring.judges.backends.openai_compat import (
    OpenAICompatBackend,
    OpenAICompatConfig,
    option_probs_from_logprobs,
)
from scoring.judges.cue_judge import CueJudge
from scoring.judges.records import ItemInput
from tests.support.openai_server import (
    OpenAIServer,
    Reply,
    answer_with,
    completion,
    request_image_urls,
    request_text,
    scripted,
)

OPTIONS = ("retained", "erased", "substituted")


def _backend(server, sleeps=None, **overrides):
    config = OpenAICompatConfig(
        endpoint=server.base_url, model="loopback-vlm", backoff_base_s=0.01, **overrides
    )
    return OpenAICompatBackend(config, sleep=(sleeps.append if sleeps is not None else time.sleep))


def test_images_travel_as_data_urls_with_text_and_decoding(make_image):
    first, second = make_image((255, 0, 0)), make_image((0, 0, 255))
    with OpenAIServer(answer_with("A")) as server:
        request = VLMRequest(
            images=(first, second),
            text="Which person earns more? Answer A or B.",
            system="Be brief.",
            decoding=DecodingConfig(temperature=0.7, n=2, max_new_tokens=5, seed=3),
        )
        [response] = _backend(server).generate([request])
    assert response.ok and response.texts == ["A", "A"] and response.attempts == 1
    body = server.requests[0]
    urls = request_image_urls(body)
    assert [base64.b64decode(u.split(",", 1)[1]) for u in urls] == [
        open(first, "rb").read(),
        open(second, "rb").read(),
    ]
    assert request_text(body) == "Which person earns more? Answer A or B."
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert (body["temperature"], body["n"], body["max_tokens"], body["seed"]) == (0.7, 2, 5, 3)
    assert body["logprobs"] is True and body["model"] == "loopback-vlm"


def test_429_then_success_backs_off_and_honours_retry_after(make_image):
    replies = [
        Reply(status=429, headers={"Retry-After": "0.05"}),
        Reply(status=503),
        completion("erased"),
    ]
    sleeps = []
    with OpenAIServer(scripted(replies)) as server:
        [response] = _backend(server, sleeps).generate(
            [VLMRequest(images=(make_image((1, 1, 1)),), text="q")]
        )
    assert response.ok and response.text == "erased" and response.attempts == 3
    assert sleeps == [0.05, 0.02]  # Retry-After beats 0.01; then 0.01 * 2


def test_persistent_500_gives_up_and_400_is_not_retried(make_image):
    image = make_image((1, 1, 1))
    with OpenAIServer(lambda body: Reply(status=500, body={"error": "down"})) as server:
        [response] = _backend(server, [], max_retries=2).generate(
            [VLMRequest(images=(image,), text="q")]
        )
    assert (
        "gave up" in response.error and "HTTP 500" in response.error and len(server.requests) == 3
    )
    with OpenAIServer(lambda body: Reply(status=400, body={"error": "bad"})) as server:
        [response] = _backend(server, []).generate([VLMRequest(images=(image,), text="q")])
    assert response.error.startswith("HTTP 400") and len(server.requests) == 1


def test_timeouts_are_retried_then_recorded(make_image):
    image = make_image((1, 1, 1))
    slow_then_fast = scripted(
        [Reply(body=completion("late"), delay_s=0.5)], then=answer_with("retained")
    )
    with OpenAIServer(slow_then_fast) as server:
        [response] = _backend(server, [], timeout_s=0.1).generate(
            [VLMRequest(images=(image,), text="q")]
        )
    assert response.text == "retained" and response.attempts == 2
    with OpenAIServer(lambda body: Reply(body=completion("late"), delay_s=0.3)) as server:
        [response] = _backend(server, [], timeout_s=0.05, max_retries=1).generate(
            [VLMRequest(images=(image,), text="q")]
        )
    assert "timed out" in response.error


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("{not json", "not JSON"),
        ({"choices": []}, "no 'choices'"),
        ({"choices": [{"message": {"content": None}}]}, "message.content"),
        ([1, 2], "JSON object"),
    ],
)
def test_malformed_replies_are_recorded_errors(make_image, body, problem):
    with OpenAIServer(lambda request: Reply(body=body)) as server:
        [response] = _backend(server, []).generate(
            [VLMRequest(images=(make_image((1, 1, 1)),), text="q")]
        )
    assert "malformed reply" in response.error and problem in response.error
    assert len(server.requests) == 1


def test_unreadable_image_is_that_requests_error(make_image, tmp_path):
    bad = tmp_path / "bad.png"
    bad.write_text("nope")
    with OpenAIServer(answer_with("retained")) as server:
        good, broken = _backend(server).generate(
            [
                VLMRequest(images=(make_image((1, 1, 1)),), text="q"),
                VLMRequest(images=(str(bad),), text="q"),
            ]
        )
    assert good.ok and "could not build request" in broken.error and len(server.requests) == 1


def test_logprobs_become_option_probabilities(make_image):
    rule = answer_with(
        "erased", top_logprobs={"erased": 0.6, "ret": 0.25, " Substituted": 0.1, "the": 0.05}
    )
    with OpenAIServer(rule) as server:
        [response] = _backend(server).generate(
            [VLMRequest(images=(make_image((1, 1, 1)),), text="q", options=OPTIONS)]
        )
    assert response.option_probs == pytest.approx(
        {"retained": 0.25 / 0.95, "erased": 0.6 / 0.95, "substituted": 0.1 / 0.95}
    )


def test_option_probs_ignore_ambiguous_and_blank_tokens():
    entries = [
        {"token": " ", "logprob": -0.01},
        {"token": "e", "logprob": -0.2, "top_logprobs": [{"token": "e", "logprob": -0.2}]},
    ]
    assert option_probs_from_logprobs(entries, ("erased", "else")) is None  # "e" fits both
    assert option_probs_from_logprobs(None, OPTIONS) is None


def test_requests_run_concurrently_up_to_the_limit(make_image):
    active, peak, lock = [0], [0], threading.Lock()

    def rule(body):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.1)
        with lock:
            active[0] -= 1
        return completion(request_text(body))

    image = make_image((1, 1, 1))
    requests = [VLMRequest(images=(image,), text=f"q{i}") for i in range(12)]
    with OpenAIServer(rule) as server:
        responses = _backend(server, concurrency=4).generate(requests)
    assert [r.text for r in responses] == [f"q{i}" for i in range(12)]  # input order kept
    assert peak[0] == 4  # the concurrency, not a timing: tests never assert timings


def test_cue_judge_over_the_api(make_image):
    rule = answer_with(
        "substituted", top_logprobs={"substituted": 0.7, "erased": 0.2, "retained": 0.1}
    )
    with OpenAIServer(rule) as server:
        judge = CueJudge(_backend(server), name="api_cue")
        [out] = judge.judge_items(
            [ItemInput("1", make_image((3, 3, 3)), cue="hat", prompt="a doctor")]
        )
    assert (out.label, out.needs_review) == ("substituted", False)
    assert out.confidence == pytest.approx(0.7)
    assert judge.version == "loopback-vlm"


def test_api_key_read_from_the_named_environment_variable(make_image, monkeypatch):
    monkeypatch.setenv("ACRB_TEST_KEY", "sk-test")
    with OpenAIServer(answer_with("retained")) as server:
        backend = _backend(server, api_key_env="ACRB_TEST_KEY")
        [response] = backend.generate([VLMRequest(images=(make_image((1, 1, 1)),), text="q")])
    assert response.ok and backend._api_key == "sk-test"
    assert "sk-test" not in repr(backend.config)  # the config names the variable, not the key
