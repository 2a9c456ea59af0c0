"""Taxonomy and base-prompt import: the shipped defaults and precise errors."""

import json

import pytest

from generation.prompts import (
    OVERT_MINI_PATH,
    BasePromptError,
    TaxonomyError,
    load_base_prompts,
    load_taxonomy,
    taxonomy_from_dict,
)

ISSUE_VALUES = {
    "culture": ["Korean", "Chinese", "Nigerian", "Kenyan", "US", "Indian"],
    "gender": ["male", "female", "non-binary"],
    "disability": ["wheelchair_user", "visually_impaired", "hearing_impaired", "limb_difference"],
    "religion": ["Muslim", "Jewish", "Sikh", "Hindu", "Christian", "Buddhist"],
    "age": ["child", "young_adult", "middle_aged", "elderly"],
}


def test_shipped_taxonomy_has_the_issue_values_each_with_phrase_and_cue():
    taxonomy = load_taxonomy()
    assert {
        a: [v.value for v in taxonomy.by_attribute(a)] for a in taxonomy.attributes
    } == ISSUE_VALUES
    for value in taxonomy.values:
        assert value.phrase and value.cue and value.cue_markers
    assert taxonomy.get("religion", "Sikh").phrase == "wearing a turban"
    assert taxonomy.get("gender", "female").modifier == "female"
    assert taxonomy.neutral_cue


@pytest.mark.parametrize(
    "raw,message",
    [
        ({"attributes": {"age": []}}, "non-empty"),
        ({"attributes": {"age": [{"value": "old"}]}}, "phrase"),
        ({"attributes": {"age": [{"value": "old", "phrase": "old", "form": "verb"}]}}, "form"),
        ({"attributes": {"age": [{"value": "kid", "phrase": "kid", "form": "noun"}]}}, "modifier"),
        ({"attributes": {"neutral": [{"value": "x", "phrase": "x"}]}}, "reserved"),
        (
            {"attributes": {"a": [{"value": "x", "phrase": "x"}, {"value": "x", "phrase": "y"}]}},
            "duplicate",
        ),
    ],
)
def test_malformed_taxonomy_is_rejected_with_a_precise_message(raw, message):
    with pytest.raises(TaxonomyError, match=message):
        taxonomy_from_dict(raw)


def test_shipped_base_prompts_cover_nine_domains():
    prompts = load_base_prompts()
    assert len(prompts) == 108 and prompts[0].prompt_id == "BP_0001"
    assert len({p.domain for p in prompts}) == 9
    assert prompts[1].metadata["trigger_words"] == ["battle"]


def test_overt_csv_gets_ids_domains_and_keeps_the_seed_prompt():
    prompts = load_base_prompts(OVERT_MINI_PATH)
    assert len(prompts) == 1800 and prompts[0].prompt_id == "OVERT_0001"
    assert prompts[-1].prompt_id == "OVERT_1800"
    assert len({p.domain for p in prompts}) == 9
    assert prompts[0].metadata["seed_prompt"].startswith("Can you provide")
    assert prompts[0].text.startswith("A teen standing on a rooftop")


def test_generic_csv_and_jsonl(tmp_path):
    csv_path = tmp_path / "prompts.csv"
    csv_path.write_text("id,prompt,domain\nx1,A person cooking,food\n,A chef,food\n", "utf-8")
    prompts = load_base_prompts(csv_path)
    assert [p.prompt_id for p in prompts] == ["x1", "P_0002"]
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text(
        json.dumps({"prompt_id": "a", "text": "A nurse", "domain": "d"}) + "\n", "utf-8"
    )
    assert load_base_prompts(jsonl)[0].text == "A nurse"


@pytest.mark.parametrize(
    "content,message",
    [
        ("id,prompt,domain\nx1,,food\n", "missing prompt text"),
        ("id,prompt,domain\nx1,A cook,\n", "missing domain"),
        ("id,prompt,domain\nx1,A cook,d\nx1,A chef,d\n", "duplicate prompt id"),
    ],
)
def test_bad_rows_name_the_row(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content, "utf-8")
    with pytest.raises(BasePromptError, match=message):
        load_base_prompts(path)
