"""JSON Schemas (draft 2020-12) of the documents users keep: report.json and the study export.

Each document names its schema in its ``schema`` key (``acrb-audit-report/2``,
``acrb-reflect-report/1``, ``acrb-study-metrics/1``); the number after the slash changes when a
key is removed, renamed or changes type (adding an optional key does not). The schemas are built
here from shared pieces (a rate cell, a rate block, a statistic that may be null with a reason
beside it) and published as package data (``scoring/report/data/*.schema.json``) and under
``docs/schema/``; ``python -m scoring.report.schema`` rewrites both copies, and
tests/scoring/report/test_schema.py fails when they are stale or a document does not validate.
External tools can validate a document with any draft 2020-12 validator, e.g.
``check-jsonschema --schemafile docs/schema/report.schema.json report.json``. docs/report.md,
"The report document".

Django-free. ``jsonschema`` is imported only by :func:`validation_errors`.
"""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

# /2: the disparity rows' permutation_p* became delta_p* (the export's max-t test of Δ) and
# provenance lost n_permutations.
AUDIT_REPORT = "acrb-audit-report/2"
REFLECT_REPORT = "acrb-reflect-report/1"
REFLECT_PART = "acrb-reflect-part/1"
STUDY_METRICS = "acrb-study-metrics/1"
MODEL_COMPARISON = "acrb-model-comparison/1"
DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_URI = "https://acrb.invalid/schema/"  # a name, not a place: nothing is fetched from it
FILES = {
    "report": "report.schema.json",
    "study-metrics": "study-metrics.schema.json",
    "model-comparison": "model-comparison.schema.json",
}
DOCS_DIR = Path(__file__).resolve().parents[2] / "docs" / "schema"

# --- shared pieces ------------------------------------------------------------------------------

NUMBER = {"type": ["number", "null"]}
INTEGER = {"type": ["integer", "null"]}
COUNT = {"type": "integer", "minimum": 0}
TEXT = {"type": "string"}
TEXT_OR_NULL = {"type": ["string", "null"]}
TEXTS = {"type": "array", "items": TEXT}
# An undefined statistic is null with ``<name>_reason`` (and, for an interval,
# ``<name>_reason_code``) beside it: docs/metrics.md, "Intervals that cannot carry uncertainty".
REASONS = {"_reason$": TEXT_OR_NULL, "_reason_code$": TEXT_OR_NULL}


def ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def record(properties: dict, required: tuple[str, ...] = (), *, closed: bool = False) -> dict:
    """An object with typed ``properties``; reason keys allowed beside any of them. Open
    (other keys allowed) unless ``closed``: sections grow keys without a version change."""
    schema = {"type": "object", "properties": properties, "patternProperties": REASONS}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    return schema


def mapping(values: dict) -> dict:
    """An object keyed by data (a source, an attribute, a value, a judge)."""
    return {"type": "object", "additionalProperties": values}


def rows(item: dict) -> dict:
    return {"type": "array", "items": item}


ESTIMATE = record({"estimate": NUMBER, "ci_low": NUMBER, "ci_high": NUMBER, "reason": TEXT_OR_NULL})

DEFS: dict[str, dict] = {
    "equivalence": record(
        {
            "delta_margin": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "verdict": {"enum": ["equivalent within δ", "disparity shown", "inconclusive", None]},
            "max_abs_bound": NUMBER,
            "method": TEXT,
        },
        ("delta_margin", "verdict", "max_abs_bound", "method"),
    ),
    "equivalence_margin": record(
        {
            "delta_margin": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "default": {"type": "boolean"},
            "set_by": TEXT_OR_NULL,
            "set_at": TEXT_OR_NULL,
            "set_after_data": {"type": "boolean"},
            "history": rows(
                record(
                    {
                        "delta_margin": {"type": "number"},
                        "set_by": TEXT_OR_NULL,
                        "set_at": TEXT,
                        "labels_existed": {"type": "boolean"},
                    },
                    ("delta_margin", "set_at", "labels_existed"),
                )
            ),
        },
        ("delta_margin", "default", "set_after_data", "history"),
    ),
    # rates.<source>.<outcome>.<attribute>.values.<value> (docs/metrics.md, "Rates")
    "rate_cell": record(
        {
            # n counts labels (annotations, or a judge's judgments); n_labels is the same count
            # beside n_items, and n_effective the Korn–Graubard effective sample size.
            "n": COUNT,
            "n_items": COUNT,
            "n_labels": COUNT,
            "n_effective": NUMBER,
            "successes": COUNT,
            "rate": NUMBER,
            "ci_low": NUMBER,
            "ci_high": NUMBER,
            "ratio_to_neutral": NUMBER,
            "ratio_to_neutral_ci_low": NUMBER,
            "ratio_to_neutral_ci_high": NUMBER,
        },
        ("n", "rate"),
    ),
    "pairwise_test": record(
        {
            "value_a": TEXT,
            "value_b": TEXT,
            "test": TEXT_OR_NULL,
            "p_value": NUMBER,
            "p_holm": NUMBER,
            "p_bh": NUMBER,
            "cohen_h": NUMBER,
            "odds_ratio": NUMBER,
            "odds_ratio_ci_low": NUMBER,
            "odds_ratio_ci_high": NUMBER,
        },
        ("value_a", "value_b"),
    ),
    # rates.<source>.<outcome>.<attribute>: Δ, ratio and their intervals over the values
    "rate_block": record(
        {
            "values": mapping(ref("rate_cell")),
            "n": COUNT,
            "n_items": COUNT,
            "n_values": COUNT,
            "delta": NUMBER,
            "delta_ci_low": NUMBER,
            "delta_ci_high": NUMBER,
            # The max-t test of "every value has the same rate" from the band of Δ's interval.
            "delta_p_value": NUMBER,
            "ratio": NUMBER,
            "ratio_ci_low": NUMBER,
            "ratio_ci_high": NUMBER,
            "max_value": TEXT_OR_NULL,
            "min_value": TEXT_OR_NULL,
            "pairwise_tests": rows(ref("pairwise_test")),
        },
        ("values",),
    ),
    # rates.<source>: outcome -> attribute -> block. ``under_refusal`` (refusals of harmful twins) has the shape of
    # ``refusal``; any other outcome a later version adds must have it too.
    "source_rates": record(
        {
            outcome: mapping(ref("rate_block"))
            for outcome in ("refusal", "erasure", "substitution", "combined", "under_refusal")
        }
    )
    | {"additionalProperties": mapping(ref("rate_block"))},
    "rates": mapping(ref("source_rates")),
    "agreement_block": record(
        {
            "n": INTEGER,
            "n_items": INTEGER,
            "n_annotations": INTEGER,
            "n_annotators": INTEGER,
            "percent_agreement": NUMBER,
            "cohen_kappa": NUMBER,
            "cohen_kappa_ci_low": NUMBER,
            "cohen_kappa_ci_high": NUMBER,
            "cohen_kappa_pairwise_mean": NUMBER,
            "fleiss_kappa": NUMBER,
            "krippendorff_alpha": NUMBER,
            "krippendorff_alpha_ci_low": NUMBER,
            "krippendorff_alpha_ci_high": NUMBER,
            "gwet_ac1": NUMBER,
        }
    ),
    "agreement": record(
        {
            "inter_annotator": mapping(ref("agreement_block")),
            "human_vs_auto": mapping(mapping(ref("agreement_block"))),
        },
        ("inter_annotator", "human_vs_auto"),
    ),
    "counts": record(
        {
            "n_items": COUNT,
            "n_items_annotated": COUNT,
            "n_annotations": COUNT,
            "n_annotators": COUNT,
            "n_judgments": COUNT,
            "judges": TEXTS,
        }
    ),
    "software": mapping(TEXT),
    # --- keys other versions of the analysis add (optional here, typed when present) ----------
    # ppi.<judge>.<outcome> (prediction-powered rates, Δ and gaps to neutral)
    "ppi_outcome": record(
        {
            "rates": mapping(
                mapping(
                    record(
                        {
                            "estimate": NUMBER,
                            "ci_low": NUMBER,
                            "ci_high": NUMBER,
                            "lambda": NUMBER,
                            "n_labelled": INTEGER,
                            "n_unlabelled": INTEGER,
                            "n_labelled_not_probability_sample": INTEGER,
                        }
                    )
                )
            ),
            "delta": mapping(
                record(
                    {
                        "estimate": NUMBER,
                        "ci_low": NUMBER,
                        "ci_high": NUMBER,
                        "max_value": TEXT_OR_NULL,
                        "min_value": TEXT_OR_NULL,
                    }
                )
            ),
            "vs_neutral": mapping(mapping(ESTIMATE)),
            # judge-only rate − PPI rate per value, simultaneous (max-t) intervals, the warning
            "judge_bias": mapping(
                record(
                    {
                        "per_value": mapping(
                            record(
                                {
                                    "estimate": NUMBER,
                                    "ci_low": NUMBER,
                                    "ci_high": NUMBER,
                                    "judge_rate": NUMBER,
                                    "ppi_rate": NUMBER,
                                }
                            )
                        ),
                        "warning": {"type": ["boolean", "null"]},
                        "method": TEXT,
                        "largest_value": TEXT_OR_NULL,
                        "judge_delta": NUMBER,
                        "ppi_delta": NUMBER,
                        "reason": TEXT_OR_NULL,
                    },
                    ("per_value", "warning"),
                )
            ),
            # human labels left out: not a probability sample of their cells (per batch)
            "n_labels_not_probability_sample": COUNT,
            "not_probability_sample": rows(
                record(
                    {"batch": TEXT, "reason": TEXT, "n_labels": COUNT, "n_items": COUNT},
                    ("batch", "reason", "n_labels"),
                )
            ),
            "not_probability_sample_reason": TEXT_OR_NULL,
        }
    ),
    "ppi": mapping(mapping(ref("ppi_outcome"))),
    # judge_error.<judge>.<outcome>.<attribute>.{fnr_test, fpr_test}: one error rate across values
    "judge_error_class_test": record({"p_value": NUMBER, "test": TEXT_OR_NULL, "n": INTEGER}),
    # judge_error.<judge>.<outcome>.<attribute> (does the judge's FNR or FPR differ by value?)
    "judge_error": mapping(
        mapping(
            mapping(
                record(
                    {
                        "per_value": {"type": ["object", "null"]},
                        "fnr_test": ref("judge_error_class_test"),
                        "fpr_test": ref("judge_error_class_test"),
                        "p_value": NUMBER,
                        "p_holm": NUMBER,
                        "differential": {"type": ["boolean", "null"]},
                        "power": record(
                            {
                                "power": NUMBER,
                                "alpha": NUMBER,
                                "min_detectable_fnr_difference": NUMBER,
                                "fnr_baseline": NUMBER,
                                "fnr_counts": {"type": "array", "items": COUNT},
                                "min_detectable_fpr_difference": NUMBER,
                                "fpr_baseline": NUMBER,
                                "fpr_counts": {"type": "array", "items": COUNT},
                            }
                        ),
                    }
                )
            )
        )
    ),
    # frontier.<source>.<generator>.<attribute>.<value> (over- vs under-refusal)
    "frontier": mapping(
        mapping(
            mapping(
                mapping(
                    record(
                        {
                            "over_refusal": NUMBER,
                            "over_refusal_ci": {"type": ["array", "null"], "items": NUMBER},
                            "under_refusal": NUMBER,
                            "under_refusal_ci": {"type": ["array", "null"], "items": NUMBER},
                            "n_benign": INTEGER,
                            "n_harmful": INTEGER,
                            # items behind the labels (two annotators' labels: one item)
                            "n_items_benign": INTEGER,
                            "n_items_harmful": INTEGER,
                        }
                    )
                )
            )
        )
    ),
    # intent_interaction.<source>.<attribute> (does intent change the attribute gap?)
    "intent_interaction": mapping(
        mapping(
            record(
                {
                    "p_value": NUMBER,
                    "test": TEXT_OR_NULL,
                    "largest": {
                        "oneOf": [
                            {"type": "null"},
                            record(
                                {
                                    "value": TEXT_OR_NULL,
                                    "odds_ratio": NUMBER,
                                    "ci_low": NUMBER,
                                    "ci_high": NUMBER,
                                }
                            ),
                        ]
                    },
                }
            )
        )
    ),
}
# models_side_by_side.sources.<source>.change: B − A for every rate and Δ (docs/metrics.md,
# "Models side by side")
CHANGE = {
    "measure": TEXT,
    "attribute": TEXT,
    "difference": NUMBER,
    "ci_low": NUMBER,
    "ci_high": NUMBER,
    "test": TEXT_OR_NULL,
    "p_value": NUMBER,
    "p_holm": NUMBER,
    "p_bh": NUMBER,
}
CHANGE_REQUIRED = ("measure", "attribute", "difference", "ci_low", "ci_high", "p_value", "p_holm")
DEFS["version_change"] = record(
    {
        "design": {"enum": ["paired", "independent", None]},
        "n_prompts_baseline": COUNT,
        "n_prompts_candidate": COUNT,
        "n_prompts_shared": COUNT,
        "rates": rows(
            record(
                CHANGE
                | {
                    "value": TEXT,
                    "rate_baseline": NUMBER,
                    "rate_candidate": NUMBER,
                    "n_baseline": COUNT,
                    "n_candidate": COUNT,
                    # items behind the labels; the independent design's effective sample sizes
                    "n_items_baseline": COUNT,
                    "n_items_candidate": COUNT,
                    "n_effective_baseline": NUMBER,
                    "n_effective_candidate": NUMBER,
                },
                (*CHANGE_REQUIRED, "value", "rate_baseline", "rate_candidate"),
            )
        ),
        "deltas": rows(
            record(
                CHANGE | {"delta_baseline": NUMBER, "delta_candidate": NUMBER},
                (*CHANGE_REQUIRED, "delta_baseline", "delta_candidate"),
            )
        ),
    },
    ("design", "n_prompts_shared", "rates", "deltas"),
)
# models_side_by_side: per source, each model's rates and Δ (model → outcome → attribute →
# rate block) and the change from the baseline to the candidate.
DEFS["models_side_by_side"] = record(
    {
        "model_column": TEXT,
        "baseline": TEXT,
        "candidate": TEXT,
        "measures": TEXTS,
        "confidence": NUMBER,
        "n_resamples": INTEGER,
        "seed": INTEGER,
        "sources": mapping(
            record(
                {
                    "models": TEXTS,
                    "per_model": mapping(mapping(mapping(ref("rate_block")))),
                    "change": {"oneOf": [{"type": "null"}, ref("version_change")]},
                    "change_reason": TEXT,
                },
                ("models", "per_model", "change"),
            )
        ),
    },
    ("model_column", "baseline", "candidate", "sources"),
)
EXTENSIONS = {name: ref(name) for name in ("ppi", "judge_error", "frontier", "intent_interaction")}

PROVENANCE = record(
    {
        "generated_at": TEXT,
        "seed": INTEGER,
        "n_resamples": INTEGER,
        "confidence": NUMBER,
        "software": ref("software"),
        "data_fingerprint": TEXT_OR_NULL,
        "definitions": TEXTS,
    },
    ("generated_at", "software", "definitions"),
)
TEXT_ROW = record({"kind": TEXT, "text": TEXT}, ("kind", "text"))
REFLECT_PART_SCHEMA = record(
    {
        "schema": {"const": REFLECT_PART},
        "face_set": record({"name": TEXT, "slug": TEXT, "description": TEXT}, ("name",)),
        "system": record({"system_kind": TEXT, "intended_purpose": TEXT, "kind_source": TEXT}),
        "runs": rows({"type": "object"}),
        "settings": {"type": "object"},
        "answers": record({"n_answers": COUNT}, ("n_answers",)),
        "report_version": {"type": "integer"},
        "models": mapping({"type": "object"}),
        "spearman": {"type": "object"},
        "discard_table": {"type": "object"},
        "limitations": rows(TEXT_ROW),
    },
    (
        "schema",
        "face_set",
        "system",
        "runs",
        "settings",
        "answers",
        "models",
        "limitations",
    ),
)
LEGAL = record(
    {
        "system_kind": TEXT,
        "statement": TEXT,
        "systems": rows({"type": "object"}),
        "obligations": rows(
            record(
                {"id": TEXT, "instrument": TEXT, "provision": TEXT, "evidence": {}},
                ("id", "provision"),
            )
        ),
    },
    ("obligations",),
)


def report_schema() -> dict[str, Any]:
    """report.json: a study's audit report (``acrb-audit-report/2``, with an optional REFLECT
    part) or a REFLECT-only document (``acrb-reflect-report/1``)."""
    fit = record(
        {
            "method": TEXT,
            "fitted": {"type": "boolean"},
            "coefficients": {"type": "object"},
            "covariates": TEXTS,
            "reason": TEXT_OR_NULL,
        },
        ("method", "fitted"),
    )
    disparity = record(
        {
            "source": TEXT,
            "measure": TEXT,
            "attribute": TEXT,
            "n": COUNT,
            "n_items": COUNT,
            "n_values": COUNT,
            "delta": NUMBER,
            "delta_ci_low": NUMBER,
            "delta_ci_high": NUMBER,
            "ratio": NUMBER,
            "max_value": TEXT_OR_NULL,
            "min_value": TEXT_OR_NULL,
            "neutral_rate": NUMBER,
            # The export's delta_p_value; Holm and BH across the source's measures × attributes.
            "delta_p": NUMBER,
            "delta_p_holm": NUMBER,
            "delta_p_bh": NUMBER,
            "flagged": {"type": "boolean"},
            "values": rows({"allOf": [ref("rate_cell"), record({"value": TEXT}, ("value",))]}),
            "pairwise_tests": rows(ref("pairwise_test")),
        },
        ("source", "measure", "attribute", "n", "delta", "values"),
    )
    audit = {
        "study": record({"slug": TEXT, "name": TEXT, "synthetic_demo": {"type": "boolean"}}),
        "settings": mapping({"type": ["number", "string", "boolean", "null"]}),
        "design": {"type": "object"},
        "rates": ref("rates"),
        "agreement": ref("agreement"),
        "counts": ref("counts"),
        "clusters": record(
            {"n_base_prompts": COUNT, "n_domains": COUNT, "single_prompt_domains": TEXTS}
        ),
        "methods": mapping(TEXT),
        "disparities": rows(disparity),
        # The intent x attribute models in full, beside the regression tables.
        "intent_interaction_tables": {"type": "array", "items": {"type": "object"}},
        "models_side_by_side": ref("models_side_by_side"),
        "regression": rows(
            record(
                {
                    "source": TEXT,
                    "outcome": TEXT,
                    "attribute": TEXT,
                    "reference": TEXT_OR_NULL,
                    "n_observations": COUNT,
                    "cluster": fit,
                    "gee": fit,
                },
                ("source", "outcome", "attribute", "cluster", "gee"),
            )
        ),
        "validation": record(
            {
                "human_vs_auto": rows(
                    record(
                        {"judge": TEXT, "question": TEXT, "scope": TEXT, "n": COUNT},
                        ("judge", "question", "n"),
                    )
                ),
                "inter_annotator": {"type": "object"},
                "gold_accuracy": rows({"type": "object"}),
            },
            ("human_vs_auto", "inter_annotator", "gold_accuracy"),
        ),
        "equivalence_margins": mapping(ref("equivalence_margin")),
        "equivalence": mapping(mapping(mapping(ref("equivalence")))),
        "limitations": rows(TEXT_ROW),
        "article_10": rows(
            record({"provision": TEXT, "section": TEXT, "evidence": TEXT}, ("provision",))
        ),
        "people": {"type": "object"},
        "data_statement": {"type": "object"},
    }
    return {
        "$schema": DRAFT,
        "$id": BASE_URI + FILES["report"],
        "title": "ACRB report.json",
        "description": "An audit report (docs/report.md); numbers as in docs/metrics.md. An "
        "undefined statistic is null with a `<name>_reason` beside it.",
        "type": "object",
        "properties": {
            "schema": {"enum": [AUDIT_REPORT, REFLECT_REPORT]},
            "kind": TEXT,
            "provenance": PROVENANCE,
            "reflect": REFLECT_PART_SCHEMA,
            "legal": LEGAL,
            **audit,
            **EXTENSIONS,
        },
        "required": ["schema", "provenance"],
        "allOf": [
            {
                "if": {"properties": {"schema": {"const": AUDIT_REPORT}}},
                "then": {
                    "required": [
                        "study",
                        "settings",
                        "design",
                        "rates",
                        "agreement",
                        "counts",
                        "clusters",
                        "methods",
                        "disparities",
                        "regression",
                        "validation",
                        "limitations",
                        "article_10",
                    ]
                },
            },
            {
                "if": {"properties": {"schema": {"const": REFLECT_REPORT}}},
                "then": {"required": ["kind", "reflect"]},
            },
        ],
        "$defs": DEFS,
    }


def metrics_schema() -> dict[str, Any]:
    """The study export (``export_metrics``, the metrics API): ``acrb-study-metrics/1``."""
    return {
        "$schema": DRAFT,
        "$id": BASE_URI + FILES["study-metrics"],
        "title": "ACRB study metrics export",
        "description": "The validated-metrics document of a study (docs/formats.md, "
        "docs/metrics.md). An undefined statistic is null with a `<name>_reason` beside it.",
        "type": "object",
        "properties": {
            "schema": {"const": STUDY_METRICS},
            "meta": record(
                {
                    "seed": INTEGER,
                    "n_resamples": INTEGER,
                    "confidence": NUMBER,
                    "min_pair_items": INTEGER,
                    "measures": TEXTS,
                    "methods": mapping(TEXT),
                    "counts": ref("counts"),
                    "definitions": TEXT,
                },
                ("seed", "n_resamples", "confidence", "counts"),
            ),
            "rates": ref("rates"),
            # rates_by.<source>.<dimension>.<level>: the rates of one domain, generator or mode
            "rates_by": mapping(mapping(mapping(ref("source_rates")))),
            "agreement": ref("agreement"),
            "aggregation": {"type": "object"},
            "sensitivity": {"type": "object"},
            "study": record(
                {"slug": TEXT, "name": TEXT, "mode": TEXT, "synthetic_demo": {"type": "boolean"}},
                ("slug",),
            ),
            "counts": {"type": "object"},
            "labels": record(
                {
                    "source": TEXT,
                    "n_items_adjudicated": COUNT,
                    "excluded_annotators": {"type": "array"},
                },
                ("source",),
            ),
            "excluded_items": rows(
                record(
                    {"item_id": TEXT, "reason": TEXT_OR_NULL, "excluded_at": TEXT_OR_NULL},
                    ("item_id",),
                )
            ),
            "gold_accuracy": rows({"type": "object"}),
            # equivalence_margins.<outcome>: δ, who set it and when, and its history
            "equivalence_margins": mapping(ref("equivalence_margin")),
            # equivalence.<source>.<outcome>.<attribute> (docs/metrics.md, "Equivalence within δ")
            "equivalence": mapping(mapping(mapping(ref("equivalence")))),
            "generated_at": TEXT,
            **EXTENSIONS,
        },
        "required": ["schema", "meta", "rates", "rates_by", "agreement"],
        "$defs": DEFS,
    }


def model_comparison_schema() -> dict[str, Any]:
    """The ``compare_models`` export and the comparison page's JSON: ``acrb-model-comparison/1``."""
    return {
        "$schema": DRAFT,
        "$id": BASE_URI + FILES["model-comparison"],
        "title": "ACRB models side by side",
        "description": "Rates and Δ of several models or versions, and the change between two "
        "(docs/metrics.md, 'Models side by side'). An undefined statistic is null with a "
        "`<name>_reason` beside it.",
        "type": "object",
        "properties": {
            "schema": {"const": MODEL_COMPARISON},
            "studies": rows(record({"slug": TEXT, "name": TEXT}, ("slug",))),
            "models_side_by_side": ref("models_side_by_side"),
            "generated_at": TEXT,
        },
        "required": ["schema", "studies", "models_side_by_side", "generated_at"],
        "$defs": DEFS,
    }


BUILDERS = {
    "report": report_schema,
    "study-metrics": metrics_schema,
    "model-comparison": model_comparison_schema,
}
BY_VERSION = {
    AUDIT_REPORT: "report",
    REFLECT_REPORT: "report",
    STUDY_METRICS: "study-metrics",
    MODEL_COMPARISON: "model-comparison",
}


def load_schema(name: str) -> dict[str, Any]:
    """The published schema ``name`` (a key of ``FILES``), from package data."""
    text = resources.files("scoring.report").joinpath("data", FILES[name]).read_text("utf-8")
    return json.loads(text)


def validation_errors(document: Any) -> list[str]:
    """Every way ``document`` breaks the schema its ``schema`` key names, one line each
    (``path: message``); ``[]`` when it validates."""
    import jsonschema  # only the checks need it; building a report does not

    if not isinstance(document, dict) or document.get("schema") not in BY_VERSION:
        found = document.get("schema") if isinstance(document, dict) else type(document).__name__
        return [f"$.schema: {found!r} is not one of {sorted(BY_VERSION)}"]
    schema = load_schema(BY_VERSION[document["schema"]])
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path))
    return [f"{error.json_path}: {error.message[:200]}" for error in errors]


def render(name: str) -> str:
    return json.dumps(BUILDERS[name](), indent=2, ensure_ascii=False) + "\n"


def write_schemas(package_dir: Path, docs_dir: Path = DOCS_DIR) -> list[Path]:
    written = []
    for name, file in FILES.items():
        for folder in (package_dir, docs_dir):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / file).write_text(render(name), encoding="utf-8")
            written.append(folder / file)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(__file__).resolve().parent / "data"):
        print(path, file=sys.stderr)
