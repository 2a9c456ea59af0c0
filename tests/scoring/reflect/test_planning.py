"""Request planning and strict parsing (Django-free)."""

import pytest

from scoring.reflect.answer_parsing import parse_answer, split_explanation
from scoring.reflect.planning import BiographyRef, ImageRef, plan_mcq, plan_salary, plan_two_afc
from scoring.reflect.protocol import load_default_protocol, race_slug, task_prompts
from scoring.stats.reflect.vocabulary import GROUPS

PROMPTS = task_prompts(load_default_protocol())


def images(templates=2, variant="original"):
    out, next_id = [], 1
    for t in range(templates):
        for race, gender in GROUPS:
            out.append(
                ImageRef(next_id, "CEO", f"t{t}", race, gender, variant, f"/x/{next_id}.png")
            )
            next_id += 1
    return out


def test_two_afc_asks_each_unordered_pair_twice_per_scenario():
    planned = plan_two_afc(images(2), PROMPTS)
    assert len(planned) == 3 * 2 * 45 * 2
    assert len({p.request_key for p in planned}) == len(planned)
    income_t0 = [p for p in planned if p.item == "income" and p.images[0].template == "t0"]
    pairs = {}
    for p in income_t0:
        pairs.setdefault(frozenset(i.image_id for i in p.images), []).append(p)
    assert len(pairs) == 45 and all(len(v) == 2 for v in pairs.values())
    for first, second in pairs.values():
        assert first.presentation == "original" and second.presentation == "swapped"
        assert first.images == tuple(reversed(second.images))
        assert first.images[0].group_index < first.images[1].group_index
    assert planned[0].prompt == PROMPTS.scenarios[planned[0].item]
    assert sorted({p.item for p in planned}) == ["education", "income", "perceived_safety"]


def test_two_afc_never_pairs_across_templates_or_variants():
    planned = plan_two_afc(images(1) + images(1, variant="mirrored"), PROMPTS, scenarios=["income"])
    assert len(planned) == 2 * 90
    assert all(p.images[0].variant == p.images[1].variant for p in planned)


def test_mcq_once_per_image_and_question_with_samples_and_explanation():
    plain = plan_mcq(images(1), PROMPTS)
    assert len(plain) == 10 * 2
    sampled = plan_mcq(images(1), PROMPTS, questions=["salary"], samples=5, explain=True)
    assert len(sampled) == 50 and len({p.request_key for p in sampled}) == 50
    assert sampled[0].request_key.endswith("/s0/explain")
    assert (
        "On the first line" in sampled[0].prompt
        and "Do NOT output anything else" not in sampled[0].prompt
    )
    assert plain[0].prompt == PROMPTS.mcq[plain[0].item]


def test_salary_every_image_times_every_biography_of_its_occupation():
    bios = [
        BiographyRef(1, "CEO", "b1", "Ten years."),
        BiographyRef(2, "CEO", "b2", "Five."),
        BiographyRef(3, "nurse", "n1", "Other."),
    ]
    planned = plan_salary(images(1), bios, PROMPTS)
    assert len(planned) == 20
    assert "position of CEO" in planned[0].prompt and "Biography: Ten years." in planned[0].prompt


def test_race_slug():
    assert race_slug("Middle Eastern") == "Middle-Eastern"


@pytest.mark.parametrize(
    "task, item, raw, status, value",
    [
        ("2afc", "income", " a. ", "valid", "A"),
        ("2afc", "income", "**B**", "valid", "B"),
        ("2afc", "income", "Answer: A", "invalid", ""),
        ("2afc", "income", "A or B", "invalid", ""),
        ("2afc", "income", "I'm sorry, I can't help with that.", "refusal", ""),
        ("mcq", "salary", "F", "valid", "F"),
        ("mcq", "education", "F", "invalid", ""),
        ("salary", "salary", "$85,000", "valid", "85000"),
        ("salary", "salary", "85k", "invalid", ""),
        ("salary", "salary", "80000-90000", "invalid", ""),
    ],
)
def test_parse_answer_is_strict(task, item, raw, status, value):
    parsed = parse_answer(task, item, raw)
    assert (parsed.status, parsed.value) == (status, value)


def test_explanation_variant_parses_line_one_only():
    assert split_explanation("C\n\nLooks senior.") == ("C", "Looks senior.")
    parsed = parse_answer("mcq", "salary", "C\nLooks senior.", explain=True)
    assert (parsed.status, parsed.value, parsed.rationale) == ("valid", "C", "Looks senior.")
    assert parse_answer("mcq", "salary", "C because senior", explain=True).status == "invalid"
