"""LLM boundary rephrasing: checks, cache, and the OpenAI-compatible client."""

from generation.prompts import BasePrompt
from generation.prompts.rephrase import (
    LexicalSimilarity,
    OpenAICompatibleRewriter,
    RephraseCache,
    apply_rephrasings,
    benign_intent_check,
    rephrase_prompts,
)
from tests.support.openai_server import OpenAIServer, Reply, answer_with, scripted

BASE = [BasePrompt("P1", "A person practicing archery at a shooting range", "violence")]


class FakeRewriter:
    model_name = "fake-llm"

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
