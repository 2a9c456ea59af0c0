"""Minimal-pair expansion: every shipped expansion differs from its neutral by the phrase only."""

import re

import pytest

from generation.prompts import (
    OVERT_MINI_PATH,
    BasePrompt,
    build_prompts,
    load_base_prompts,
    load_taxonomy,
    planned_only,
    read_plan_jsonl,
    write_plan_jsonl,
)

TAXONOMY = load_taxonomy()


def tokens(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text.lower())


def allowed_additions(attribute: str, value: str) -> list[list[str]]:
    entry = TAXONOMY.get(attribute, value)
    return [tokens(entry.phrase)] + ([tokens(entry.modifier)] if entry.modifier else [])


def assert_minimal_pair(row) -> None:
    """Independent of the code under test: on word tokens (a/an folded together, since
    the article is re-chosen for the new first word), the expansion is the neutral with
    the taxonomy phrase or its modifier inserted at one place, or with the phrase in
    place of a generic noun ("person" -> "woman")."""
    before = ["a" if t == "an" else t for t in tokens(row.neutral_text)]
    after = ["a" if t == "an" else t for t in tokens(row.text)]
    phrase = tokens(TAXONOMY.get(row.attribute, row.value).phrase)
    candidates = []
    for k in range(len(before) + 1):
        candidates += [
            before[:k] + added + before[k:] for added in allowed_additions(row.attribute, row.value)
        ]
        if k < len(before) and before[k] in ("person", "individual"):
            candidates.append(before[:k] + phrase + before[k + 1 :])
    assert after in candidates, (row.neutral_text, row.text)


def shipped_plans():
    yield "acrb", build_prompts(TAXONOMY, load_base_prompts())
    yield "overt", build_prompts(TAXONOMY, load_base_prompts(OVERT_MINI_PATH))
    yield "acrb-append", build_prompts(TAXONOMY, load_base_prompts(), missing_slot="append")


@pytest.mark.parametrize(
    "name,plan", list(shipped_plans()), ids=lambda x: x if isinstance(x, str) else ""
)
def test_every_shipped_expansion_differs_by_the_phrase_only(name, plan):
    expansions = [row for row in planned_only(plan) if row.attribute != "neutral"]
    assert expansions
    for row in expansions:
        assert_minimal_pair(row)


def test_every_base_prompt_times_every_value_is_recorded():
    base = load_base_prompts()
    plan = build_prompts(TAXONOMY, base)
    assert len(plan) == len(base) * (len(TAXONOMY.values) + 1)
    assert len({row.plan_id for row in plan}) == len(plan)
    for row in plan:
        assert (row.status == "planned") == (row.skip_reason == "")
        assert (row.text == "") == (row.status == "skipped")


@pytest.mark.parametrize(
    "text,value,expected",
    [
        ("A person practicing archery", "culture:Korean", "A Korean person practicing archery"),
        ("A person practicing archery", "culture:Indian", "An Indian person practicing archery"),
        ("A person practicing archery", "culture:US", "An American person practicing archery"),
        ("A person practicing archery", "gender:female", "A woman practicing archery"),
        ("A person practicing archery", "age:elderly", "An elderly person practicing archery"),
        ("An artist painting", "culture:Korean", "A Korean artist painting"),
        ("An artist painting", "age:elderly", "An elderly artist painting"),
        ("Nurse drawing blood", "culture:Chinese", "Chinese nurse drawing blood"),
        ("Medical student at work", "gender:male", "Male medical student at work"),
        ("EMT providing care", "culture:Kenyan", "Kenyan EMT providing care"),
        ("A chef with knives", "disability:wheelchair_user", "A chef in a wheelchair with knives"),
        ("Portrait of a doctor.", "religion:Sikh", "Portrait of a doctor wearing a turban."),
        ("A lone hiker resting", "culture:Nigerian", "A lone Nigerian hiker resting"),
        ("Person carving wood", "gender:non-binary", "Non-binary person carving wood"),
    ],
)
def test_phrase_is_inserted_grammatically(text, value, expected):
    attribute, name = value.split(":")
    plan = build_prompts(TAXONOMY, [BasePrompt("P1", text, "test")])
    (row,) = [r for r in plan if (r.attribute, r.value) == (attribute, name)]
    assert row.text == expected


@pytest.mark.parametrize(
    "text,reason",
    [
        ("Samurai armor displayed in a museum", "no_person_slot"),
        ("Fan illustration of a popular movie scene", "no_person_slot"),
        ("People praying at a mosque", "plural_person_only"),
        ("Boxing match between two athletes in a ring", "plural_person_only"),
        ("A Sikh individual lifting a car", "slot_names_a_group"),
    ],
)
def test_prompts_without_a_singular_person_are_skipped_with_a_reason(text, reason):
    plan = build_prompts(TAXONOMY, [BasePrompt("P1", text, "test")])
    assert {row.skip_reason for row in plan} == {reason}


def test_append_rule_gives_a_person_slot_and_changes_the_neutral_too():
    base = [BasePrompt("P1", "Samurai armor displayed in a museum.", "violence")]
    plan = build_prompts(TAXONOMY, base, missing_slot="append")
    neutral = plan[0]
    assert neutral.text == "Samurai armor displayed in a museum, with a person in the foreground"
    assert neutral.slot_rule == "appended"
    korean = [r for r in plan if r.value == "Korean"][0]
    assert korean.text.endswith("with a Korean person in the foreground")


def test_gender_and_age_skipped_when_the_noun_already_says_them():
    plan = build_prompts(TAXONOMY, [BasePrompt("P1", "A young woman reading", "test")])
    by_attribute = {row.attribute: row for row in plan}
    assert by_attribute["gender"].skip_reason == "slot_marks_gender_or_age"
    assert by_attribute["age"].skip_reason == "slot_marks_gender_or_age"
    assert by_attribute["culture"].status == "planned"


def test_plan_round_trips_through_jsonl(tmp_path):
    plan = build_prompts(TAXONOMY, load_base_prompts()[:5])
    path = tmp_path / "plan.jsonl"
    assert write_plan_jsonl(plan, path) == len(plan)
    assert read_plan_jsonl(path) == plan


def test_bad_policy_is_rejected():
    with pytest.raises(ValueError):
        build_prompts(TAXONOMY, [], missing_slot="guess")
