"""The people and the data (docs/report.md, "The people and the data"). Django-free.

Two sections, each counted from plain records so that a report folder can recompute them:

- ``annotator_pool``: a CrowdWorkSheets-style account of the annotators (Díaz et al., FAccT
  2022): the groups and how they were matched to items (each batch's assignment policy), the
  guidelines they were shown, gold accuracy, time per item and agreement per group, and the
  recruitment and pay that staff state on the study.
- ``data_statement``: where the prompts came from (sources and licences), the taxonomy, how
  minimal pairs were built and which plan rows were skipped and why.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from html import unescape
from importlib import resources

import numpy as np

# How each assignment policy matches annotators to items (annotations/policies.py).
POLICY_MATCHING = {
    "k_overlap": "each item to k annotators, the least loaded first, ties at random; groups "
    "play no part",
    "expertise": "an item whose attribute value names an annotator group goes to k annotators "
    "of that group; other items to the k least loaded annotators overall",
    "manual": "staff listed each (item, annotator) pair",
    "imported": "labels made outside this tool and imported with their annotators",
    "validate_judge": "a budget of items drawn with probabilities that grow with the judges' "
    "uncertainty, at least a minimum per attribute value; each drawn item to k annotators, the "
    "least loaded first; each label weighted by its inverse inclusion probability",
}
AGREEMENT_STATISTIC = "krippendorff_alpha"
SHIPPED_DEFAULT_BASE_PROMPTS = (
    "base_prompts_108.json"  # generation.prompts.DEFAULT_BASE_PROMPTS_PATH
)


def annotator_pool(
    annotation_records: list[dict],
    *,
    batches: list[dict],
    guidelines: dict,
    recruitment: str,
    pay: str,
    gold_accuracy: list[dict],
    agreement_by_group: dict,
) -> dict:
    """The annotator-pool section. ``annotation_records``: every answer, gold ones included
    (``annotations.selectors.annotation_rows(include_gold=True)`` or a report folder's
    annotations file); ``agreement_by_group``: the report's inter-annotator agreement per group."""
    group_of = {row["annotator"]: row.get("annotator_group") or "" for row in annotation_records}
    gold_by_group: dict[str, list[int]] = {}
    for row in gold_accuracy:
        tally = gold_by_group.setdefault(group_of.get(row["annotator"], ""), [0, 0])
        tally[0] += row["n"]
        tally[1] += row["correct"]
    by_group: dict[str, list[dict]] = {}
    for row in annotation_records:
        by_group.setdefault(row.get("annotator_group") or "", []).append(row)
    groups = []
    for group, rows in sorted(by_group.items()):
        answered, correct = gold_by_group.get(group, [0, 0])
        groups.append(
            {
                "group": group,
                "n_annotators": len({row["annotator"] for row in rows}),
                "n_annotations": sum(1 for row in rows if not row.get("is_gold")),
                "n_gold_annotations": sum(1 for row in rows if row.get("is_gold")),
                "gold_answered": answered,
                "gold_accuracy": correct / answered if answered else None,
                **seconds_per_item(rows),
                "agreement": _group_agreement(agreement_by_group.get(group)),
            }
        )
    return {
        "groups": groups,
        "batches": [_batch(batch, annotation_records) for batch in batches],
        "guidelines": guidelines,
        "recruitment": recruitment,
        "pay": pay,
    }


def seconds_per_item(rows: list[dict]) -> dict:
    """Median and quartiles of the seconds from serving an item to the first answer, over the
    answers that recorded it (imported labels do not), and how many were flagged too fast."""
    seconds = np.array(
        [row["seconds_to_answer"] for row in rows if row.get("seconds_to_answer") is not None],
        dtype=float,
    )
    out = {
        "n_timed": int(len(seconds)),
        "n_too_fast": sum(1 for row in rows if row.get("too_fast")),
    }
    if len(seconds) == 0:
        return {
            **out,
            "seconds_median": None,
            "seconds_q1": None,
            "seconds_q3": None,
            "seconds_reason": "no answer recorded its time (imported or simulated labels)",
        }
    q1, median, q3 = np.percentile(seconds, [25, 50, 75])
    return {
        **out,
        "seconds_median": float(median),
        "seconds_q1": float(q1),
        "seconds_q3": float(q3),
    }


def _group_agreement(block: dict | None) -> dict:
    """Krippendorff's α per question within the group, or its reason when undefined (``block``
    None, or a question absent: the group has no agreement to compute)."""
    out = {}
    for question in ("hard_refusal", "cue"):
        answer = block[question] if block is not None and block.get(question) else None
        value = answer.get(AGREEMENT_STATISTIC) if answer is not None else None
        out[question] = {
            "value": value,
            "reason": answer.get(f"{AGREEMENT_STATISTIC}_reason")
            if answer is not None and value is None
            else None,
        }
        if value is None and out[question]["reason"] is None:
            out[question]["reason"] = "no items with two or more answers in this group"
    return out


def _batch(batch: dict, annotation_records: list[dict]) -> dict:
    rows = [row for row in annotation_records if row.get("batch") == batch["name"]]
    return {
        **batch,
        "matching": POLICY_MATCHING.get(batch["policy"], "not described"),
        "n_answers": len(rows),
        "n_annotators": len({row["annotator"] for row in rows}),
        "groups": sorted({row.get("annotator_group") or "" for row in rows}),
    }


def guidelines_text(html: str) -> str:
    """The guidelines page's template as plain text in its source language (English): the text
    of ``{% translate "…" %}`` and ``{% blocktranslate %}`` kept, other tags dropped."""
    text = re.sub(r"""{%\s*(?:translate|trans)\s+(["'])(.*?)\1.*?%}""", r"\2", html, flags=re.S)
    text = re.sub(r"{%\s*(?:end)?blocktrans(?:late)?\b.*?%}", "", text, flags=re.S)
    text = re.sub(r"{%.*?%}|{{.*?}}", "", text, flags=re.S)
    text = re.sub(r"<(br|/p|/li|/h\d|/dt|/dd)\s*/?>", "\n", text)
    text = unescape(re.sub(r"<[^>]+>", "", text))
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


# --- the data statement ---------------------------------------------------------------------


@cache
def known_sources() -> dict:
    text = resources.files("scoring.report").joinpath("data/sources.json").read_text("utf-8")
    return json.loads(text)["sources"]


def source_entry(path: str) -> dict:
    """A source path with its name and licence when it is one the tool ships."""
    # generation.services stores "shipped default" when the plan used the shipped base prompts.
    name = SHIPPED_DEFAULT_BASE_PROMPTS if path == "shipped default" else path
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    known = known_sources().get(name)
    if known is None:
        return {
            "path": path,
            "name": name or "(not recorded)",
            "licence": None,
            "licence_reason": "not a source shipped with the tool: record its licence",
        }
    return {"path": path, **known}


def data_statement(plan: dict | None, planned_prompts: list[dict]) -> dict:
    """The prompt set's data statement from the study's generation plan (``None`` when the
    items were imported without one) and its plan rows, skipped ones included."""
    if plan is None:
        return {
            "has_plan": False,
            "reason": "the items were imported without a generation plan: the prompts' sources, "
            "licences and construction are not recorded in the tool",
        }
    taxonomy = plan.get("taxonomy") or {}
    planned = [row for row in planned_prompts if row["status"] == "planned"]
    skipped = [row for row in planned_prompts if row["status"] == "skipped"]
    sources = [
        source_entry(path)
        for path in dict.fromkeys(
            [plan.get("taxonomy_source") or "", plan.get("base_prompts_source") or ""]
        )
        if path
    ]
    return {
        "has_plan": True,
        "sources": sources,
        "base_prompts_sha256": plan.get("base_prompts_sha256") or "",
        "taxonomy_version": str(taxonomy.get("version", "")),
        "taxonomy": taxonomy_values(taxonomy),
        "options": plan.get("options") or {},
        "n_rows": len(planned_prompts),
        "n_planned": len(planned),
        "n_skipped": len(skipped),
        "n_base_prompts": len({row["prompt_id"] for row in planned_prompts}),
        "skipped_by_reason": _counted(skipped, "skip_reason"),
        "construction": _counted(planned, "operation", "slot_rule"),
        "planned_by_attribute": _counted(planned, "attribute"),
    }


def taxonomy_values(taxonomy: dict) -> list[dict]:
    """Attribute types and their value names, from a taxonomy document (generation/data/README.md)."""
    out = []
    for name, values in sorted((taxonomy.get("attributes") or {}).items()):
        names = [v.get("value", "") if isinstance(v, dict) else str(v) for v in values or []]
        out.append({"attribute": name, "values": names})
    return out


def _counted(rows: list[dict], *keys: str) -> list[dict]:
    counts = Counter(tuple(row.get(key) or "" for key in keys) for row in rows)
    return [
        {**dict(zip(keys, values, strict=True)), "n": n}
        for values, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
