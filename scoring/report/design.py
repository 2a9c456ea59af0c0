"""The study design block of the report (taxonomy, domains and base prompts, generators,
judges, each with its counts), counted from plain records so that a report folder can recompute
it (docs/report.md, "Verifying a report"). Django-free."""

from __future__ import annotations

from collections import Counter


def study_design_from_records(
    attribute_values: list[dict], items: list[dict], judgment_log: list[dict]
) -> dict:
    """``attribute_values``: the study's taxonomy rows (attribute, value, cue_description,
    is_neutral); ``items``: every included non-gold item (attribute, value, base_prompt_id,
    domain, generator, mode); ``judgment_log``: every judgment of those items (judge,
    judge_version, failed)."""
    per_value = Counter((item["attribute"], item["value"]) for item in items)
    taxonomy = [
        {**row, "n_items": per_value.get((row["attribute"], row["value"]), 0)}
        for row in sorted(attribute_values, key=lambda r: (r["attribute"], r["value"]))
    ]
    per_prompt = Counter((item["domain"], item["base_prompt_id"]) for item in items)
    prompts = [
        {"base_prompt_id": prompt, "domain": domain, "n_items": n}
        for (domain, prompt), n in sorted(per_prompt.items())
    ]
    domains: dict[str, dict] = {}
    for row in prompts:
        entry = domains.setdefault(
            row["domain"], {"domain": row["domain"], "n_base_prompts": 0, "n_items": 0}
        )
        entry["n_base_prompts"] += 1
        entry["n_items"] += row["n_items"]
    per_generator = Counter((item["generator"], item["mode"]) for item in items)
    generators = [
        {"generator": generator, "mode": mode, "n_items": n}
        for (generator, mode), n in sorted(per_generator.items())
    ]
    judged = Counter(
        (row["judge"], row["judge_version"], bool(row["failed"])) for row in judgment_log
    )
    judges = [
        {
            "judge": judge,
            "judge_version": version,
            "n_judgments": judged[(judge, version, False)],
            "n_errors": judged[(judge, version, True)],
        }
        for judge, version in sorted({(j, v) for j, v, _ in judged})
    ]
    return {
        "taxonomy": taxonomy,
        "domains": list(domains.values()),
        "prompts": prompts,
        "generators": generators,
        "judges": judges,
    }
