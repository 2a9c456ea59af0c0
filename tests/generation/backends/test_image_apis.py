"""HTTP image APIs against a loopback server: images, refusals as data, 429s, timeouts."""

import base64

import pytest

from generation.backends import (
    ERROR,
    OK,
    REFUSED,
    GenerationRequest,
    content_sha256,
    load_generator,
)
from tests.support.image_api_server import (
    ImageApiServer,
    Reply,
    openai_policy_refusal,
    rate_limited,
    scripted,
    server_error,
    tiny_png,
)

KINDS = {"openai-images": "gpt-image-1", "google-imagen": "imagen-4", "gemini": "gemini-image"}


def make(server, kind="openai-images", **overrides):
    config = {
        "name": f"{kind}-test",
        "kind": kind,
        "model": KINDS[kind],
        "base_url": server.base_url,
        "max_retries": 2,
        "backoff_s": 0.0,
        "timeout_s": 2.0,
        **overrides,
    }
    return load_generator(config)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_image_comes_back_with_its_hash(kind):
    with ImageApiServer() as server:
        (result,) = make(server, kind).generate(
            [GenerationRequest("r1", "A person reading", seed=3)]
        )
    assert result.status == OK
    assert result.image == tiny_png()
    assert result.content_sha256 == content_sha256(tiny_png())
    assert (result.width, result.height, result.seed, result.http_status) == (8, 8, 3, 200)
    assert result.generator == f"{kind}-test" and result.model == KINDS[kind]


@pytest.mark.parametrize(
    "kind,reason",
    [
        ("openai-images", "content_policy_violation"),
        ("google-imagen", "rai_filtered"),
        ("gemini", "finish:IMAGE_SAFETY"),
    ],
)
def test_refusal_is_data_not_an_exception(kind, reason):
    with ImageApiServer() as server:
        results = make(server, kind).generate(
            [GenerationRequest("r1", "REFUSE this"), GenerationRequest("r2", "A person reading")]
        )
    assert [r.status for r in results] == [REFUSED, OK]
    assert results[0].refusal_reason == reason
    assert results[0].image is None and results[0].refusal_message


@pytest.mark.parametrize(
    "kind,reply,reason",
    [
        ("openai-images", Reply(body={"data": []}), "empty_result"),
        (
            "gemini",
            Reply(body={"promptFeedback": {"blockReason": "SAFETY"}}),
            "prompt_blocked:SAFETY",
        ),
        (
            "gemini",
            Reply(body={"candidates": [{"content": {"parts": [{"text": "No."}]}}]}),
            "empty_result",
        ),
        ("google-imagen", Reply(body={"predictions": []}), "empty_result"),
        (
            "google-imagen",
            Reply(400, {"error": {"message": "The prompt violates our Responsible AI practices"}}),
            "policy_error",
        ),
    ],
)
def test_other_refusal_shapes(kind, reply, reason):
    with ImageApiServer(scripted([reply])) as server:
        (result,) = make(server, kind).generate([GenerationRequest("r1", "x")])
    assert (result.status, result.refusal_reason) == (REFUSED, reason)


def test_429_then_success_is_retried_with_backoff():
    sleeps = []
    with ImageApiServer(scripted([rate_limited(retry_after=0.25), server_error(), None])) as server:
        generator = make(server)
        generator._retry.keywords["sleep"] = sleeps.append
        (result,) = generator.generate([GenerationRequest("r1", "A person")])
    assert result.status == OK and result.attempts == 3
    assert sleeps == [0.25, 0.0]  # Retry-After honoured, then exponential from backoff_s=0


def test_persistent_429_becomes_an_error_result():
    with ImageApiServer(lambda route, request: rate_limited()) as server:
        (result,) = make(server, max_retries=1).generate([GenerationRequest("r1", "A person")])
    assert result.status == ERROR and result.error.startswith("rate_limited")
    assert result.attempts == 2 and result.http_status == 429


def test_timeout_becomes_an_error_result():
    with ImageApiServer(lambda route, request: Reply(delay_s=1.0)) as server:
        (result,) = make(server, timeout_s=0.2, max_retries=1).generate(
            [GenerationRequest("r1", "x")]
        )
    assert result.status == ERROR and result.error == "timeout" and result.attempts == 2


def test_bad_request_is_an_error_not_a_refusal():
    reply = Reply(400, {"error": {"code": "invalid_size", "message": "size must be 1024x1024"}})
    with ImageApiServer(scripted([reply])) as server:
        (result,) = make(server).generate([GenerationRequest("r1", "x")])
    assert result.status == ERROR and "http_400" in result.error


def test_openai_edit_sends_the_source_image_as_multipart():
    with ImageApiServer() as server:
        request = GenerationRequest("e1", "make the face older", source_image=tiny_png((0, 0, 255)))
        (result,) = make(server).generate([request])
        route, fields = server.requests[0]
    assert result.status == OK
    assert route == "edits" and fields["image"] == tiny_png((0, 0, 255))
    assert fields["prompt"] == "make the face older"


def test_gemini_edit_sends_inline_image_and_results_keep_request_order():
    with ImageApiServer(scripted([openai_policy_refusal()])) as server:
        requests = [
            GenerationRequest(f"r{i}", f"prompt {i}", source_image=tiny_png()) for i in range(4)
        ]
        results = make(server, "gemini", max_concurrency=3).generate(requests)
        sent = [request for _, request in server.requests]
    assert [r.request_id for r in results] == ["r0", "r1", "r2", "r3"]
    inline = sent[0]["contents"][0]["parts"][1]["inline_data"]["data"]
    assert base64.b64decode(inline) == tiny_png()


def test_api_key_is_read_from_the_named_environment_variable(monkeypatch):
    monkeypatch.setenv("TEST_IMAGES_KEY", "sk-test")
    with ImageApiServer() as server:
        generator = make(server, api_key_env="TEST_IMAGES_KEY")
        assert generator.api_key == "sk-test"


def test_config_rejects_unknown_keys_and_kinds():
    with pytest.raises(ValueError):
        load_generator({"name": "x", "kind": "dalle", "model": "m"})
    with pytest.raises(ValueError):
        load_generator({"name": "x", "kind": "openai-images", "model": "m", "colour": "red"})
