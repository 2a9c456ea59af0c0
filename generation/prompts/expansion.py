"""Minimal-pair expansion: every base prompt x every attribute value -> the study plan.

Read top to bottom: find the person slot of each base prompt (or give it one by
the explicit ``person_slot_template`` rule, or skip it with a recorded reason),
then insert each attribute phrase into that slot. The neutral prompt of a pair
is the base prompt with its slot; an expansion differs from it by the attribute
phrase only (plus a re-chosen a/an). Skipped combinations stay in the plan with
``status="skipped"`` and a ``skip_reason``, so the plan records every decision.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from generation.prompts.base_prompts import BENIGN, HARMFUL, BasePrompt
from generation.prompts.slots import Slot, find_person_slot, insert_phrase
from generation.prompts.taxonomy import NEUTRAL, AttributeValue, Taxonomy

DEFAULT_PERSON_SLOT_TEMPLATE = "{text}, with a person in the foreground"
MISSING_SLOT_POLICIES = ("skip", "append")
PLANNED, SKIPPED = "planned", "skipped"


@dataclass(frozen=True)
class PlannedPrompt:
    plan_id: str
    prompt_id: str
    domain: str
    attribute: str
    value: str
    text: str  # the prompt to generate from; "" when skipped
    neutral_text: str  # the neutral member of the minimal pair
    base_text: str  # the base prompt as imported
    phrase: str = ""  # the words added to neutral_text
    operation: str = ""  # before_noun / after_noun / replace_generic / neutral
    cue: str = ""
    slot_rule: str = ""  # "found", or "appended" when the template gave it a person
    status: str = PLANNED
    skip_reason: str = ""
    source: str = ""
    intent: str = BENIGN  # "harmful" for a harmful control's rows (generation.prompts.controls)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, row: dict) -> PlannedPrompt:
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in row.items() if key in known})


def build_prompts(
    taxonomy: Taxonomy,
    base_prompts: Iterable[BasePrompt],
    *,
    missing_slot: str = "skip",
    person_slot_template: str = DEFAULT_PERSON_SLOT_TEMPLATE,
    marked_attributes: Sequence[str] = ("gender", "age"),
) -> list[PlannedPrompt]:
    """Expand base prompts into the study plan (neutral + one row per value).

    ``missing_slot="skip"`` records prompts without a singular person as skipped;
    ``"append"`` gives them one with ``person_slot_template`` (``{text}`` is the
    base prompt), and the neutral text then carries that added person too.
    ``marked_attributes`` are skipped when the person noun already states them
    ("a young woman" gets no gender or age value).
    """
    if missing_slot not in MISSING_SLOT_POLICIES:
        raise ValueError(f"missing_slot must be one of {MISSING_SLOT_POLICIES}")
    if "{text}" not in person_slot_template:
        raise ValueError("person_slot_template must contain '{text}'")
    plan: list[PlannedPrompt] = []
    for base in base_prompts:
        neutral_text, slot, slot_rule, reason = _slot_for(base, missing_slot, person_slot_template)
        plan.append(_neutral_row(base, neutral_text, slot_rule, reason))
        for value in taxonomy.values:
            if reason:
                plan.append(_skipped_row(base, value, reason))
            elif slot.marked and value.attribute in marked_attributes:
                plan.append(_skipped_row(base, value, "slot_marks_gender_or_age", neutral_text))
            else:
                plan.append(_expanded_row(base, value, neutral_text, slot, slot_rule))
    return plan


def _slot_for(base: BasePrompt, missing_slot: str, template: str):
    search = find_person_slot(base.text)
    if search.slot is not None:
        return base.text, search.slot, "found", ""
    if missing_slot == "skip" or search.reason != "no_person_slot":
        return base.text, None, "", search.reason
    stem = base.text.rstrip(" .;,")
    neutral_text = template.format(text=stem)
    # Look for the person only in the words the template added.
    appended = find_person_slot(neutral_text, from_word=len(stem.split()))
    if appended.slot is None:
        raise ValueError(f"person_slot_template gives no person slot: {neutral_text!r}")
    return neutral_text, appended.slot, "appended", ""


def _neutral_row(base: BasePrompt, neutral_text: str, slot_rule: str, reason: str):
    return PlannedPrompt(
        plan_id=f"{_plan_stem(base)}:{NEUTRAL}",
        prompt_id=base.prompt_id,
        domain=base.domain,
        attribute=NEUTRAL,
        value=NEUTRAL,
        text="" if reason else neutral_text,
        neutral_text=neutral_text,
        base_text=base.text,
        operation=NEUTRAL,
        slot_rule=slot_rule,
        status=SKIPPED if reason else PLANNED,
        skip_reason=reason,
        source=base.source,
        intent=base.intent,
    )


def _skipped_row(base: BasePrompt, value: AttributeValue, reason: str, neutral_text: str = ""):
    return PlannedPrompt(
        plan_id=f"{_plan_stem(base)}:{value.key}",
        prompt_id=base.prompt_id,
        domain=base.domain,
        attribute=value.attribute,
        value=value.value,
        text="",
        neutral_text=neutral_text or base.text,
        base_text=base.text,
        cue=value.cue,
        status=SKIPPED,
        skip_reason=reason,
        source=base.source,
        intent=base.intent,
    )


def _expanded_row(base, value: AttributeValue, neutral_text: str, slot: Slot, slot_rule: str):
    insertion = insert_phrase(
        neutral_text, slot, form=value.form, phrase=value.phrase, modifier=value.modifier
    )
    return PlannedPrompt(
        plan_id=f"{_plan_stem(base)}:{value.key}",
        prompt_id=base.prompt_id,
        domain=base.domain,
        attribute=value.attribute,
        value=value.value,
        text=insertion.text,
        neutral_text=neutral_text,
        base_text=base.text,
        phrase=insertion.inserted,
        operation=insertion.operation,
        cue=value.cue,
        slot_rule=slot_rule,
        source=base.source,
        intent=base.intent,
    )


def _plan_stem(base: BasePrompt) -> str:
    return f"{base.prompt_id}:{HARMFUL}" if base.intent == HARMFUL else base.prompt_id


def planned_only(plan: Iterable[PlannedPrompt]) -> list[PlannedPrompt]:
    return [row for row in plan if row.status == PLANNED]


def write_plan_jsonl(plan: Iterable[PlannedPrompt], path: str | Path) -> int:
    """Write the study plan, one JSON object per line; returns the row count."""
    count = 0
    with Path(path).open("w", encoding="utf-8") as handle:
        for row in plan:
            handle.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_plan_jsonl(path: str | Path) -> list[PlannedPrompt]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [PlannedPrompt.from_dict(json.loads(line)) for line in lines if line.strip()]
