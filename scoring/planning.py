"""The planning aid of the new-batch form: the expected width of Δ's interval for a budget,
before anyone labels (docs/metrics.md, "Planning the human budget").

Reads the study's items and the judges' uncertainty (``annotations.selectors``), builds both
sampling designs with the batch policies themselves (``annotations.policies``), and hands the
inclusion probabilities to ``scoring.stats.ppi_planning``, which computes every number.
"""

from __future__ import annotations

import numpy as np

from annotations import policies
from annotations import selectors as annotation_selectors
from annotations.models import Item, Study
from scoring.stats.ppi_planning import ValueDesign, budget_plan, correlation_from_accuracy

PLAN_SEED = 0  # the probabilities do not depend on it; only the draw would


def batch_plan(
    *,
    study: Study,
    budget: int,
    accuracy: float = 0.9,
    rho: float | None = None,
    rate: float = 0.5,
    min_per_value: int | None = None,
) -> dict:
    """``{"rho", "rows", "n_items"}``; raises ``policies.PolicyError`` for a budget the designs
    cannot meet (the batch would refuse it the same way)."""
    rows = list(
        Item.objects.included()
        .filter(study=study, is_gold=False)
        .values_list("pk", "attribute_value__attribute", "attribute_value__value")
    )
    if not rows:
        raise policies.PolicyError("the study has no items yet")
    uncertainty = annotation_selectors.item_judge_uncertainty(
        study=study, item_ids=[pk for pk, _, _ in rows]
    )
    rng = np.random.default_rng(PLAN_SEED)
    sample = [policies.SampleItem(pk, f"{a}={v}", uncertainty[pk]) for pk, a, v in rows]
    validate = policies.validate_judge_design(sample, budget, rng, min_per_stratum=min_per_value)
    uniform = policies.uniform_design([pk for pk, _, _ in rows], budget, rng)
    attributes: dict[str, dict[str, list[int]]] = {}
    for pk, attribute, value in rows:
        attributes.setdefault(attribute, {}).setdefault(value, []).append(pk)
    designs = {
        attribute: {
            value: ValueDesign(
                uniform=[uniform.inclusion_probability[pk] for pk in pks],
                validate=[validate.inclusion_probability[pk] for pk in pks],
                uncertainty=[uncertainty[pk] for pk in pks],
            )
            for value, pks in values.items()
        }
        for attribute, values in attributes.items()
    }
    if rho is None:
        rho = correlation_from_accuracy(accuracy, rate)
    return {
        "rho": rho,
        "ratio_single_rate": float(np.sqrt(1 - rho**2)),
        "n_items": len(rows),
        "rows": budget_plan(designs, rho=rho, rate=rate),
    }
