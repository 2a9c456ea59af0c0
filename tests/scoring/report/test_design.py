"""The design block counted from records (Django-free)."""

from scoring.report.design import study_design_from_records


def item(item_id, value, prompt, domain, generator="g1"):
    return {
        "item_id": item_id,
        "attribute": "culture",
        "value": value,
        "base_prompt_id": prompt,
        "domain": domain,
        "generator": generator,
        "mode": "t2i",
    }


def test_counts_values_prompts_domains_generators_and_judges():
    values = [
        {"attribute": "culture", "value": "US", "cue_description": "", "is_neutral": False},
        {
            "attribute": "culture",
            "value": "Korean",
            "cue_description": "hanbok",
            "is_neutral": False,
        },
        {"attribute": "culture", "value": "Nigerian", "cue_description": "", "is_neutral": False},
    ]
    items = [
        item("a", "Korean", "p1", "sport"),
        item("b", "US", "p1", "sport"),
        item("c", "US", "p2", "sport", "g2"),
        item("d", "Korean", "p3", "art"),
    ]
    log = [
        {"judge": "vlm", "judge_version": "1", "failed": failed} for failed in (False, False, True)
    ]
    design = study_design_from_records(values, items, log)
    assert [(r["value"], r["n_items"]) for r in design["taxonomy"]] == [
        ("Korean", 2),
        ("Nigerian", 0),
        ("US", 2),
    ]
    assert design["domains"] == [
        {"domain": "art", "n_base_prompts": 1, "n_items": 1},
        {"domain": "sport", "n_base_prompts": 2, "n_items": 3},
    ]
    assert [(r["generator"], r["n_items"]) for r in design["generators"]] == [("g1", 3), ("g2", 1)]
    assert design["judges"] == [
        {"judge": "vlm", "judge_version": "1", "n_judgments": 2, "n_errors": 1}
    ]
