"""report.json and the study export against their published JSON Schemas (draft 2020-12):
the synthetic study's report and export, a REFLECT report from the test fakes, keys other
analyses add, and the schemas' published copies (package data, docs/schema/)."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from scoring.report import bundle, schema
from scoring.report import document_types as document
from scoring.report.dataset import audit_report
from scoring.report.reflect.dataset import dump_context
from scoring.stats.study_metrics import study_metrics
from scoring.stats.synthetic_study import synthetic_study
from tests.scoring.report.reflect_answers import answer_rows

SETTINGS = {"n_resamples": 50, "n_permutations": 50, "seed": 3}


@pytest.fixture(scope="module")
def frames():
    return synthetic_study(n_items=240, n_annotated_items=80, overlap=2, seed=5)


@pytest.fixture(scope="module")
def report(frames):
    annotations, judgments = frames
    return audit_report(
        annotations,
        judgments,
        study={"slug": "synthetic", "name": "Synthetic", "synthetic_demo": True},
        gold_accuracy=[{"annotator": "annotator-00", "n": 4, "correct": 3, "accuracy": 0.75}],
        generated_at="2026-01-01T00:00:00+00:00",
        **SETTINGS,
    )


@pytest.fixture(scope="module")
def metrics(frames):
    return {"schema": schema.STUDY_METRICS, **study_metrics(*frames, n_resamples=50, seed=0)}


@pytest.fixture(scope="module")
def reflect_report():
    rows = answer_rows()
    context = dump_context(rows, sources=["a.jsonl"], n_resamples=50, seed=3, min_n=30)
    return bundle.report_from_inputs({"reflect": {"answers": rows, "context": context}})


@pytest.mark.parametrize("name", sorted(schema.FILES))
def test_the_published_schemas_are_current_and_valid(name):
    built = schema.BUILDERS[name]()
    jsonschema.Draft202012Validator.check_schema(built)
    assert built["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    packaged = resources.files("scoring.report").joinpath("data", schema.FILES[name]).read_text()
    docs = (schema.DOCS_DIR / schema.FILES[name]).read_text()
    stale = "stale: run python -m scoring.report.schema"
    assert json.loads(packaged) == built, stale
    assert docs == packaged, stale


def test_the_synthetic_report_and_export_validate(report, metrics):
    assert report["schema"] == schema.AUDIT_REPORT
    assert schema.validation_errors(report) == []
    assert schema.validation_errors(metrics) == []


def test_a_reflect_report_validates(reflect_report):
    assert reflect_report["schema"] == schema.REFLECT_REPORT
    assert reflect_report["reflect"]["schema"] == schema.REFLECT_PART
    assert schema.validation_errors(reflect_report) == []


def test_a_broken_document_fails_with_the_path(report, metrics, reflect_report):
    broken = copy.deepcopy(report)
    source = next(iter(broken["rates"]))
    attribute = next(iter(broken["rates"][source]["refusal"]))
    value = next(iter(broken["rates"][source]["refusal"][attribute]["values"]))
    broken["rates"][source]["refusal"][attribute]["values"][value]["rate"] = "0.4"
    del broken["disparities"]
    errors = schema.validation_errors(broken)
    assert "$: 'disparities' is a required property" in errors
    assert (
        f"$.rates.{source}.refusal.{attribute}.values.{value}.rate: '0.4' is not of type 'number', 'null'"
        in errors
    )
    assert schema.validation_errors({**metrics, "schema": "acrb-study-metrics/9"})[0].startswith(
        "$.schema: 'acrb-study-metrics/9' is not one of"
    )
    without_part = {k: v for k, v in reflect_report.items() if k != "reflect"}
    assert schema.validation_errors(without_part) == ["$: 'reflect' is a required property"]
    assert schema.validation_errors([]) == [
        "$.schema: 'list' is not one of " + str(sorted(schema.BY_VERSION))
    ]


# Keys that other analyses add (issues 22 and 23), in the shapes they were announced with.
PPI = {
    "vlm-judge@1": {
        "refusal": {
            "rates": {
                "culture": {
                    "Korean": {
                        "estimate": 0.2,
                        "ci_low": 0.1,
                        "ci_high": 0.3,
                        "lambda": 0.7,
                        "n_labelled": 40,
                        "n_unlabelled": 400,
                    },
                    "Nigerian": {
                        "estimate": None,
                        "estimate_reason": "no labelled item",
                        "ci_low": None,
                        "ci_high": None,
                        "lambda": None,
                        "n_labelled": 0,
                        "n_unlabelled": 12,
                    },
                }
            },
            "delta": {
                "culture": {
                    "estimate": 0.1,
                    "ci_low": 0.0,
                    "ci_high": 0.2,
                    "max_value": "Korean",
                    "min_value": "Nigerian",
                }
            },
            "vs_neutral": {
                "culture": {"Korean": {"estimate": 0.05, "ci_low": -0.1, "ci_high": 0.2}}
            },
        }
    }
}
JUDGE_ERROR = {
    "vlm-judge@1": {
        "refusal": {
            "culture": {
                "per_value": {"Korean": {"error_rate": 0.1}},
                "fnr_test": {"p_value": 0.1, "test": "Fisher exact", "n": 30},
                "fpr_test": {
                    "p_value": None,
                    "test": None,
                    "n": 0,
                    "reason": "fewer than two attribute values with a reference-negative item",
                },
                "p_value": 0.2,
                "p_holm": 0.4,
                "differential": False,
                "power": {
                    "power": 0.8,
                    "alpha": 0.025,
                    "min_detectable_fnr_difference": 0.3,
                    "fnr_baseline": 0.1,
                    "fnr_counts": [12, 18],
                    "min_detectable_fpr_difference": None,
                    "min_detectable_fpr_difference_reason": "fewer than two attribute values",
                },
            }
        }
    }
}
FRONTIER = {
    "human": {
        "sdxl": {
            "culture": {
                "Korean": {
                    "over_refusal": 0.1,
                    "over_refusal_ci": [0.05, 0.2],
                    "under_refusal": None,
                    "under_refusal_reason": "no harmful control",
                    "under_refusal_ci": None,
                    "n_benign": 30,
                    "n_harmful": 0,
                }
            }
        }
    }
}
INTENT = {
    "human": {
        "culture": {
            "p_value": 0.03,
            "test": "likelihood ratio",
            "largest": {"value": "Korean", "odds_ratio": 2.1, "ci_low": 1.1, "ci_high": 4.0},
        },
        "gender": {
            "p_value": None,
            "p_value_reason": "one intent only",
            "test": None,
            "largest": None,
        },
    }
}
EXTENSIONS = {
    "ppi": PPI,
    "judge_error": JUDGE_ERROR,
    "frontier": FRONTIER,
    "intent_interaction": INTENT,
}


@pytest.mark.parametrize("document_name", ["report", "metrics"])
def test_keys_other_analyses_add_validate_and_are_typed(document_name, report, metrics):
    document = copy.deepcopy({"report": report, "metrics": metrics}[document_name])
    document.update(copy.deepcopy(EXTENSIONS))
    source = next(iter(document["rates"]))
    document["rates"][source]["under_refusal"] = document["rates"][source]["refusal"]
    assert schema.validation_errors(document) == []
    document["ppi"]["vlm-judge@1"]["refusal"]["rates"]["culture"]["Korean"]["n_labelled"] = "40"
    document["frontier"]["human"]["sdxl"]["culture"]["Korean"]["over_refusal"] = "high"
    document["rates"][source]["under_refusal"] = {"culture": {"values": {"a": {"n": 1}}}}
    power = document["judge_error"]["vlm-judge@1"]["refusal"]["culture"]["power"]
    power["min_detectable_fnr_difference"] = "0.3"
    errors = schema.validation_errors(document)
    assert len(errors) == 4, errors


def test_the_sample_report_folder_has_no_report_json_to_check():
    """docs/sample-report holds the PDF and page images only; if a report.json is committed
    there, it must validate."""
    folder = Path(__file__).resolve().parents[3] / "docs" / "sample-report"
    for path in folder.glob("*.json"):
        if path.name == "report.json":
            assert schema.validation_errors(json.loads(path.read_text())) == []


def test_an_empty_study_and_a_judges_only_study_validate(frames):
    empty = audit_report(None, None, study={"slug": "empty"}, **SETTINGS)
    assert schema.validation_errors(empty) == []
    judges_only = audit_report(None, frames[1], **SETTINGS)
    assert schema.validation_errors(judges_only) == []
    empty_export = {"schema": schema.STUDY_METRICS, **study_metrics(None, None, n_resamples=0)}
    assert schema.validation_errors(empty_export) == []


TYPED = [
    (document.AuditReport, "report", schema.AUDIT_REPORT),
    (document.ReflectReport, "report", schema.REFLECT_REPORT),
    (document.StudyMetrics, "study-metrics", schema.STUDY_METRICS),
    (document.ModelComparison, "model-comparison", schema.MODEL_COMPARISON),
]


@pytest.mark.parametrize(
    ("typed", "name", "version"), TYPED, ids=lambda v: getattr(v, "__name__", "")
)
def test_the_typed_top_level_is_the_schema(typed, name, version):
    """The TypedDicts builders annotate with, and the schema readers rely on, name the same keys
    and require the same ones."""
    published = schema.BUILDERS[name]()
    assert set(typed.__annotations__) <= set(published["properties"])
    required = set(published["required"])
    for rule in published.get("allOf", []):
        if rule["if"]["properties"]["schema"]["const"] == version:
            required |= set(rule["then"]["required"])
    assert set(typed.__required_keys__) == required
    if name == "study-metrics":
        assert set(typed.__annotations__) == set(published["properties"])


def test_built_documents_hold_exactly_their_typed_keys(report, metrics, reflect_report):
    for built, typed in (
        (report, document.AuditReport),
        (metrics, document.StudyMetrics),
        (reflect_report, document.ReflectReport),
    ):
        assert set(typed.__required_keys__) <= set(built) <= set(typed.__annotations__)
    assert document.is_audit_report(report) and not document.is_audit_report(reflect_report)


def test_the_typed_reflect_part_is_the_schema_and_the_built_part(reflect_report):
    """The REFLECT part's type requires what its schema requires, and a built part holds only
    typed keys; each model's block holds only typed tasks."""
    part_schema = schema.REFLECT_PART_SCHEMA
    typed = document.ReflectPart
    assert set(typed.__required_keys__) == set(part_schema["required"])
    assert set(typed.__annotations__) <= set(part_schema["properties"])
    part = reflect_report["reflect"]
    assert set(typed.__required_keys__) <= set(part) <= set(typed.__annotations__)
    for block in part["models"].values():
        assert set(block) <= set(document.ReflectModel.__annotations__)
        for cell in document.two_afc_cells(block).values():
            assert set(document.TwoAfcCell.__required_keys__) <= set(cell)
        for cell in document.mcq_cells(block).values():
            assert set(document.McqCell.__required_keys__) <= set(cell)


def test_built_study_sections_hold_their_typed_keys(report):
    assert set(report["design"]) == set(document.StudyDesign.__annotations__)
    assert set(report["clusters"]) == set(document.Clusters.__annotations__)
    for table in report["regression"]:
        for method in ("cluster", "gee"):
            assert set(document.RegressionFit.__required_keys__) <= set(table[method])


def test_a_partial_document_reads_as_nothing_recorded_not_as_an_error():
    design = document.study_design({"design": {"taxonomy": [{"attribute": "a"}]}})
    assert design["taxonomy"] == [{"attribute": "a"}] and design["judges"] == []
    assert document.study_clusters({})["n_base_prompts"] == 0
    assert document.two_afc_cells({"mcq": {}}) == {} and document.salary_block({}) is None
    assert document.cell_intervals({"pol": 0.1}, "pol") is None
    assert document.group_interval({"race": {"Asian": [0.1, 0.2]}}, "gender", "female") is None
