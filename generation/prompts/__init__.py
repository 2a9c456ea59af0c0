"""Stage I: attribute taxonomy, base prompts and minimal-pair expansion (no Django)."""

from generation.prompts.base_prompts import (
    BENIGN,
    DEFAULT_BASE_PROMPTS_PATH,
    HARMFUL,
    INTENTS,
    OVERT_MINI_PATH,
    BasePrompt,
    BasePromptError,
    load_base_prompts,
)
from generation.prompts.controls import (
    DEFAULT_HARMFUL_SHARE,
    OVERT_UNSAFE_PATH,
    controls_for_plan,
    load_control_pairs,
)
from generation.prompts.expansion import (
    PlannedPrompt,
    build_prompts,
    planned_only,
    read_plan_jsonl,
    write_plan_jsonl,
)
from generation.prompts.taxonomy import (
    DEFAULT_TAXONOMY_PATH,
    AttributeValue,
    Taxonomy,
    TaxonomyError,
    load_taxonomy,
    taxonomy_from_dict,
)

__all__ = [
    "BENIGN",
    "DEFAULT_HARMFUL_SHARE",
    "HARMFUL",
    "INTENTS",
    "OVERT_UNSAFE_PATH",
    "controls_for_plan",
    "load_control_pairs",
    "DEFAULT_BASE_PROMPTS_PATH",
    "DEFAULT_TAXONOMY_PATH",
    "OVERT_MINI_PATH",
    "AttributeValue",
    "BasePrompt",
    "BasePromptError",
    "PlannedPrompt",
    "Taxonomy",
    "TaxonomyError",
    "build_prompts",
    "load_base_prompts",
    "load_taxonomy",
    "planned_only",
    "read_plan_jsonl",
    "taxonomy_from_dict",
    "write_plan_jsonl",
]
