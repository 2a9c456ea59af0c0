"""Harmful controls: OVERT-unsafe pairs drawn per domain and expanded like every base prompt."""

import csv
from collections import Counter

import pytest

from generation.prompts import (
    OVERT_UNSAFE_PATH,
    BasePrompt,
    build_prompts,
    controls_for_plan,
    load_base_prompts,
    load_control_pairs,
    load_taxonomy,
    planned_only,
)
from generation.prompts.controls import CATEGORY_FOR_DOMAIN
from tests.generation.prompts.test_prompt_expansion import assert_minimal_pair

TAXONOMY = load_taxonomy()


def test_the_shipped_pairs_are_the_1785_overt_unsafe_rows_with_their_licence():
    pairs = load_control_pairs()
    assert len(pairs) == 1785
    with OVERT_UNSAFE_PATH.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert pairs[0].pair_id == "OVERTU_0001"
    assert pairs[41].harmful == " ".join(rows[41]["unsafe_image_prompt"].split())
    assert len(Counter(pair.category for pair in pairs)) == 9
    folder = OVERT_UNSAFE_PATH.parent
    assert "Apache License" in (folder / "LICENSE").read_text()
    assert "Cheng et al." in (folder / "README.md").read_text()


def test_every_shipped_domain_has_a_category():
    categories = {pair.category for pair in load_control_pairs()}
    domains = {prompt.domain for prompt in load_base_prompts()}
    assert domains <= set(CATEGORY_FOR_DOMAIN)
    assert set(CATEGORY_FOR_DOMAIN.values()) <= categories


def test_share_per_domain_is_round_share_times_base_prompts_at_least_one():
    base = load_base_prompts()  # 12 per domain, 9 domains
    plan = controls_for_plan(base, share=0.25, seed=3, missing_slot="append")
    per_domain = Counter(p.domain for p in plan.prompts if p.intent == "harmful")
    assert per_domain == {domain: 3 for domain in {p.domain for p in base}}
    small = controls_for_plan(base[:1], share=0.25, seed=3)
    assert sum(p.intent == "harmful" for p in small.prompts) == 1
    assert plan.options["n_pairs"] == 27 and plan.options["share"] == 0.25


def test_twins_share_the_prompt_id_and_sit_side_by_side():
    plan = controls_for_plan(load_base_prompts(), share=0.1, seed=0)
    prompts = plan.prompts
    for benign, harmful in zip(prompts[::2], prompts[1::2], strict=True):
        assert (benign.intent, harmful.intent) == ("benign", "harmful")
        assert benign.prompt_id == harmful.prompt_id and benign.domain == harmful.domain
        assert benign.text != harmful.text


def test_same_seed_same_draw_and_no_pair_twice():
    base = load_base_prompts()
    first = controls_for_plan(base, share=0.5, seed=7)
    assert first.prompts == controls_for_plan(base, share=0.5, seed=7).prompts
    assert first.prompts != controls_for_plan(base, share=0.5, seed=8).prompts
    ids = [p.prompt_id for p in first.prompts if p.intent == "harmful"]
    assert len(ids) == len(set(ids))


def test_skip_policy_prefers_pairs_with_a_person_and_records_the_shortfall():
    base = [BasePrompt(f"P{i}", "A person reading", "unethical") for i in range(40)]
    plan = controls_for_plan(base, share=1.0, seed=0, missing_slot="skip")
    # OVERT-unsafe has a single 'unethical' pair whose two prompts both name a person.
    assert plan.options["shortfall"] == {"unethical": {"wanted": 40, "available": 1}}
    unmatched = controls_for_plan([BasePrompt("P1", "A person", "elsewhere")], seed=0)
    assert unmatched.prompts == [] and unmatched.options["unmatched_domains"] == ["elsewhere"]


@pytest.mark.parametrize("share", [0, -0.1, 1.5, "x", float("nan")])
def test_a_bad_share_is_one_clear_error(share):
    with pytest.raises(ValueError, match="share"):
        controls_for_plan(load_base_prompts()[:3], share=share)


def test_harmful_rows_are_minimal_pairs_through_the_same_slots():
    base = load_base_prompts()
    controls = controls_for_plan(base, share=0.25, seed=1, missing_slot="append")
    plan = build_prompts(TAXONOMY, [*base, *controls.prompts], missing_slot="append")
    harmful = [row for row in planned_only(plan) if row.intent == "harmful"]
    assert harmful and all(row.plan_id.split(":")[1] == "harmful" for row in harmful)
    for row in harmful:
        if row.attribute != "neutral":
            assert_minimal_pair(row)
    assert len({row.plan_id for row in plan}) == len(plan)
    # every value of the benign twin has its harmful counterpart
    benign_keys = {
        (r.prompt_id, r.attribute, r.value)
        for r in plan
        if r.intent == "benign" and r.prompt_id.startswith("OVERTU")
    }
    harmful_keys = {(r.prompt_id, r.attribute, r.value) for r in plan if r.intent == "harmful"}
    assert benign_keys == harmful_keys
