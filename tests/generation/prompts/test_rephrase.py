"""LLM boundary rephrasing: checks, cache, and the OpenAI-compatible client."""

import csv
import dataclasses
import json
import re

import pytest

from generation.prompts import BasePrompt
from generation.prompts.rephrase import (
    RECORD_COLUMNS,
    LexicalSimilarity,
    OpenAICompatibleRewriter,
    RephraseCache,
    RephraseError,
    RephraseRecord,
    RewriterConfig,
    apply_rephrasings,
    benign_intent_check,
    rephrase_prompts,
    write_records,
)
from tests.support.openai_server import OpenAIServer, Reply, answer_with, scripted

BASE = [BasePrompt("P1", "A person practicing archery at a shooting range", "violence")]


class FakeRewriter:
    model_name = "fake-llm"
    decoding = {"temperature": 0.7, "seed": 3, "max_tokens": 120}

    def __init__(self, answer):
        self.answer = answer
        self.calls = []

    def rewrite(self, instruction):
        self.calls.append(instruction)
        return self.answer


def test_close_benign_rewrite_is_kept_and_records_model_and_instruction():
    rewriter = FakeRewriter("A person practicing archery at a busy outdoor shooting range")
    (record,) = rephrase_prompts(BASE, rewriter)
    assert record.kept and record.reason == "" and record.similarity > 0.5
    assert record.model == "fake-llm" and BASE[0].text in record.instruction
    (rephrased,) = apply_rephrasings(BASE, [record])
    assert rephrased.text == record.rewrite
    assert rephrased.metadata == {"original_text": BASE[0].text, "rephrase_model": "fake-llm"}


def test_dissimilar_rewrite_is_dropped():
    (record,) = rephrase_prompts(BASE, FakeRewriter("A bowl of fruit on a kitchen table"))
    assert not record.kept and record.reason == "too_dissimilar"
    assert apply_rephrasings(BASE, [record]) == BASE


def test_harmful_rewrite_is_dropped_whatever_its_similarity():
    answer = "A person practicing archery, step-by-step instructions to kill with a weapon"
    (record,) = rephrase_prompts(BASE, FakeRewriter(answer))
    assert not record.kept and record.reason == "not_benign:instructions_for_harm"
    assert benign_intent_check("A nurse drawing blood") == (True, "")


def test_results_are_cached(tmp_path):
    cache_path = tmp_path / "rephrase.json"
    rewriter = FakeRewriter("A person practicing archery at an indoor shooting range")
    first = rephrase_prompts(BASE, rewriter, cache=RephraseCache(cache_path))
    second = rephrase_prompts(BASE, rewriter, cache=RephraseCache(cache_path))
    assert len(rewriter.calls) == 1 and second[0].cached
    assert second[0].rewrite == first[0].rewrite


def test_lexical_similarity_is_a_cosine():
    similarity = LexicalSimilarity()
    assert similarity.score("a cat", "a cat") == 1.0
    assert similarity.score("abc", "xyz") == 0.0


def test_openai_compatible_endpoint(tmp_path):
    with OpenAIServer(
        answer_with("A person practicing archery at a crowded shooting range")
    ) as server:
        rewriter = OpenAICompatibleRewriter(server.base_url, "local-llm", timeout_s=5)
        (record,) = rephrase_prompts(BASE, rewriter)
        sent = server.requests[0]
    assert record.kept and sent["model"] == "local-llm"
    assert sent["messages"][0]["content"] == record.instruction


def test_endpoint_failure_is_recorded_not_raised_and_not_cached(tmp_path):
    cache = RephraseCache(tmp_path / "c.json")
    with OpenAIServer(scripted([Reply(status=500)])) as server:
        rewriter = OpenAICompatibleRewriter(server.base_url, "local-llm", timeout_s=5)
        (record,) = rephrase_prompts(BASE, rewriter, cache=cache)
    assert not record.kept and record.reason == "error:HTTPError"
    assert not (tmp_path / "c.json").exists()


def test_a_cached_answer_is_checked_again_and_decoding_is_part_of_the_key(tmp_path):
    cache = RephraseCache(tmp_path / "c.jsonl")
    rewriter = FakeRewriter("A person practicing archery at an indoor shooting range")
    (first,) = rephrase_prompts(BASE, rewriter, cache=cache)
    (strict,) = rephrase_prompts(
        BASE, rewriter, cache=RephraseCache(cache.path), min_similarity=0.99
    )
    assert first.kept and strict.cached and not strict.kept and strict.reason == "too_dissimilar"
    hotter = FakeRewriter("A person practicing archery outdoors")
    hotter.decoding = {**FakeRewriter.decoding, "temperature": 1.0}
    (other,) = rephrase_prompts(BASE, hotter, cache=RephraseCache(cache.path))
    assert not other.cached and hotter.calls and other.temperature == 1.0


def test_records_name_the_rewriter_and_its_decoding():
    (record,) = rephrase_prompts(
        BASE, FakeRewriter("x y"), rewriter_name="boundary", min_similarity=0.4
    )
    assert (record.rewriter, record.temperature, record.seed, record.min_similarity) == (
        "boundary",
        0.7,
        3,
        0.4,
    )


def test_fail_fast_raises_one_line_naming_the_server(tmp_path):
    cache = RephraseCache(tmp_path / "c.jsonl")
    rewriter = OpenAICompatibleRewriter("http://127.0.0.1:9/v1", "m", timeout_s=2)
    with pytest.raises(RephraseError) as caught:
        rephrase_prompts(BASE, rewriter, cache=cache, rewriter_name="down", fail_fast=True)
    message = str(caught.value)
    assert "\n" not in message and "cannot connect to http://127.0.0.1:9/v1" in message
    assert "'down'" in message and "P1" in message and not cache.path.exists()


def test_rewriter_config_is_validated_at_the_boundary():
    config = RewriterConfig.from_dict(
        {"kind": "openai", "endpoint": "http://x/v1", "model": "m", "seed": 1}, name="b"
    )
    assert config.name == "b" and config.as_dict()["seed"] == 1
    for raw, words in [
        ({"kind": "openai", "model": "m"}, "needs an 'endpoint'"),
        ({"kind": "bard", "model": "m"}, "kind must be one of"),
        ({"kind": "openai", "endpoint": "e", "model": "m", "temprature": 1}, "unknown keys"),
        ({"kind": "openai", "endpoint": "e", "model": "m", "min_similarity": 2}, "within [0, 1]"),
        ({"kind": "openai", "endpoint": "e", "model": "m", "instruction": "x"}, "{prompt}"),
    ]:
        with pytest.raises(ValueError, match=re.escape(words)):
            RewriterConfig.from_dict(raw, name="b")


def test_records_export_as_csv_and_jsonl_with_every_column(tmp_path):
    records = rephrase_prompts(BASE, FakeRewriter("A bowl of fruit on a kitchen table"))
    assert set(RECORD_COLUMNS) == {field.name for field in dataclasses.fields(RephraseRecord)}
    assert write_records(records, tmp_path / "r.jsonl") == 1
    (row,) = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert list(row) == list(RECORD_COLUMNS) and row["reason"] == "too_dissimilar"
    write_records(records, tmp_path / "r.csv")
    (csv_row,) = csv.DictReader((tmp_path / "r.csv").open())
    assert csv_row["kept"] == "False" and csv_row["original"] == BASE[0].text
    with pytest.raises(ValueError, match=r"\.csv or \.jsonl"):
        write_records(records, tmp_path / "r.txt")


def test_a_reply_that_is_not_a_chat_completion_is_an_error_not_an_empty_rewrite():
    with OpenAIServer(scripted([Reply(body="<html>proxy error</html>"), Reply(body={})])) as server:
        rewriter = OpenAICompatibleRewriter(server.base_url, "local-llm", timeout_s=5)
        first, second = rephrase_prompts(BASE * 2, rewriter)
        with pytest.raises(RephraseError, match="not a chat completion"):
            rephrase_prompts(BASE, rewriter, fail_fast=True)
    assert first.reason.startswith("error:") and second.reason == "error:KeyError"
