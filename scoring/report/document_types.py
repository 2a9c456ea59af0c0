"""The report documents as types: what ``report.json`` and the study export hold.

``AuditReport``, ``ReflectReport`` and ``StudyMetrics`` name every top-level key of the
documents, required (``Required``) as in their JSON Schemas (``scoring/report/schema.py``) or
optional; ``tests/scoring/report/test_schema.py`` fails when a type and its schema disagree. The
builders annotate what they return with these types (``dataset.audit_report``,
``bundle.reflect_document``, ``reflect.dataset.reflect_part``,
``scoring.metrics.document.metrics_document``), so a reader indexes a required key
(``report["rates"]``) and tests an optional one (``"people" in report``); it never reads through
chained ``get`` calls with empty defaults, which turn a moved key into an empty-looking section.

Below the top level: the study's design, clusters and regression fits, and the REFLECT part
(``ReflectPart``) down to its statistics' cells; the other study sections keep the dict shapes
the schema's ``$defs`` describe (docs/report.md, "The report document"). The accessors at each
type read the keys that are absent by design (a task a model did not answer, a part built
without a bootstrap, a hand-made partial document) with one explicit branch each. No Django.
"""

# No `from __future__ import annotations`: TypedDict reads Required[...] at run time to list
# its required keys (__required_keys__), which the schema test compares.
from collections.abc import Mapping
from typing import Any, Literal, Required, TypedDict

Section = dict[str, Any]
Rows = list[dict[str, Any]]


class Provenance(TypedDict, total=False):
    generated_at: Required[str]
    seed: int | None
    n_resamples: int | None
    confidence: float | None
    software: Required[dict[str, str]]
    data_fingerprint: str | None
    definitions: Required[list[str]]


class TextRow(TypedDict):
    kind: str
    text: str


class RegressionFit(TypedDict, total=False):
    """``regression[].cluster`` / ``.gee``: one fitted (or unfitted) model."""

    method: Required[str]
    fitted: Required[bool]
    coefficients: dict[str, Section]  # value -> beta, odds ratio, interval, p (or a reason)
    covariates: list[str]
    reason: str | None


def fit_coefficients(fit: RegressionFit) -> dict[str, Section]:
    """A fit's coefficients; none when the schema's optional ``coefficients`` is absent (a model
    that was never fitted)."""
    return fit["coefficients"] if "coefficients" in fit else {}


DESIGN_ROWS = ("taxonomy", "domains", "prompts", "generators", "judges")


class StudyDesign(TypedDict):
    """``design``: what was audited (``design.study_design_from_records``) and by whom. A report
    built from frames alone (``dataset.audit_report`` without a design) has empty rows."""

    taxonomy: Rows
    domains: Rows
    prompts: Rows
    generators: Rows
    judges: Rows
    annotators: Section


class Clusters(TypedDict):
    n_base_prompts: int
    n_domains: int
    single_prompt_domains: list[str]


def study_design(report: Mapping[str, Any]) -> StudyDesign:
    """The report's design with every row list present. The builder (``dataset.audit_report``)
    always writes them; a hand-made partial document (tests, notebooks) may lack the section or
    some of its rows, which then read as nothing recorded."""
    written = report["design"] if "design" in report else {}
    return {**{key: [] for key in DESIGN_ROWS}, "annotators": {}, **written}


def study_clusters(report: Mapping[str, Any]) -> Clusters:
    """The report's cluster structure; zero base prompts and domains where a hand-made partial
    document lacks the section or a key of it (the builder always writes them)."""
    written = report["clusters"] if "clusters" in report else {}
    return {"n_base_prompts": 0, "n_domains": 0, "single_prompt_domains": [], **written}


# --- sections other analyses add: ppi, judge_error, frontier, intent_interaction -------------


class JudgeBias(TypedDict, total=False):
    """``ppi.<judge>.<outcome>.judge_bias.<attribute>`` (``scoring.stats.ppi_judge_bias``):
    per value, judge-only rate − PPI rate with simultaneous intervals, and the warning."""

    per_value: dict[str, Section]
    warning: bool | None
    method: str
    largest_value: str | None
    judge_delta: float | None
    ppi_delta: float | None
    reason: str


class PpiOutcome(TypedDict, total=False):
    """``ppi.<judge>.<outcome>`` (``scoring.stats.ppi_study.judge_outcome_ppi``): estimate
    blocks per attribute (and value). ``vs_neutral`` has no entry for the neutral baseline. The
    builder writes every key; the schema requires none, so read them through ``ppi_blocks``."""

    rates: dict[str, dict[str, Section]]
    delta: dict[str, Section | None]
    vs_neutral: dict[str, dict[str, Section]]
    judge_bias: dict[str, JudgeBias | None]
    ratio_vs_neutral: dict[str, dict[str, Section]]
    rates_by_generator: dict[str, Section]
    # Human labels left out as not a probability sample of their cells (issue 30): how many,
    # per batch, and the sentence the pages print (null when none is left out).
    n_labels_not_probability_sample: int
    not_probability_sample: list[Section]
    not_probability_sample_reason: str | None


def ppi_left_out_note(outcome: PpiOutcome) -> str | None:
    """The sentence naming the human labels the outcome's estimates left out; None where none
    was left out or the document predates the key."""
    if "not_probability_sample_reason" not in outcome:
        return None
    return outcome["not_probability_sample_reason"]


def ppi_blocks(
    outcome: PpiOutcome, name: Literal["rates", "delta", "vs_neutral", "judge_bias"]
) -> dict[str, Any]:
    """An outcome's blocks per attribute under ``name``; none where a hand-made partial document
    lacks the key."""
    return outcome[name] if name in outcome else {}


class JudgeErrorTest(TypedDict, total=False):
    """``judge_error.<judge>.<outcome>.<attribute>`` (``scoring.stats.judge_error``): the
    judge's error per value, the FNR and FPR tests across values (``fnr_test``, ``fpr_test``),
    the flag they make (``p_value``, ``p_holm``, ``differential``; null with a reason) and its
    ``power`` (``min_detectable_fnr_difference``, ``min_detectable_fpr_difference``, …)."""

    per_value: Required[dict[str, Section] | None]
    fnr_test: Section
    fpr_test: Section
    p_value: float | None
    p_holm: float | None
    differential: bool | None
    test: str | None
    n: int
    reason: str | None
    differential_reason: str | None
    power: Section


PpiSection = dict[str, dict[str, PpiOutcome]]  # judge -> outcome
JudgeErrorSection = dict[str, dict[str, dict[str, JudgeErrorTest]]]  # judge -> outcome -> attribute
# source -> generator -> attribute -> value -> point (``overall``/``all`` and the neutral baseline
# among the attributes; docs/metrics.md, "Safety–utility trade-off")
FrontierSection = dict[str, dict[str, dict[str, dict[str, Section]]]]
IntentInteractionSection = dict[str, dict[str, Section]]  # source -> attribute -> joint test


class _Extensions(TypedDict, total=False):
    """Sections other analyses add (optional, typed in the schema's ``$defs``). The builders
    (``scoring.stats.study_metrics``, ``dataset.audit_report``) always write them; a REFLECT-only
    document and a document from before them have none, read through the accessors below."""

    ppi: PpiSection
    judge_error: JudgeErrorSection
    frontier: FrontierSection
    intent_interaction: IntentInteractionSection


def ppi_section(report: Mapping[str, Any]) -> PpiSection:
    """Prediction-powered estimates per judge; no judge when the document has no ``ppi``."""
    return report["ppi"] if "ppi" in report else {}


def judge_error_section(report: Mapping[str, Any]) -> JudgeErrorSection:
    """The judges' error tests per judge; no judge when the document has no ``judge_error``."""
    return report["judge_error"] if "judge_error" in report else {}


def frontier_section(report: Mapping[str, Any]) -> FrontierSection:
    """The safety–utility points per source; no source when the document has no ``frontier``."""
    return report["frontier"] if "frontier" in report else {}


def intent_interaction_section(report: Mapping[str, Any]) -> IntentInteractionSection:
    """The intent × value joint tests per source; none when the document has no
    ``intent_interaction``."""
    return report["intent_interaction"] if "intent_interaction" in report else {}


def intent_interaction_tables(report: Mapping[str, Any]) -> Rows:
    """The interaction fits (both methods) of the report; none in a document without them (the
    study export and a REFLECT-only document hold only the summary, or nothing)."""
    return report["intent_interaction_tables"] if "intent_interaction_tables" in report else []


def judge_error_per_value(test: JudgeErrorTest) -> dict[str, Section]:
    """A test's error rates per value; none where the schema's nullable ``per_value`` is null."""
    per_value = test["per_value"]
    return {} if per_value is None else per_value


# --- the REFLECT part: report["reflect"] (acrb-reflect-part/1) --------------------------------

Interval = list[float | None]  # [low, high]
ByGroup = dict[str, float | None]  # a group label ("Asian", "female", "Asian|female") -> value
ByKind = dict[str, ByGroup]  # "race" | "gender" | "race_gender" -> groups
IntervalsByKind = dict[str, dict[str, Interval | None]]


class FaceSetCounts(TypedDict, total=False):
    occupations: Required[int]
    templates: Required[int]
    # From the face set's records; absent when the answers were read from dump files.
    images_by_variant: dict[str, int]
    images_rejected: int
    biographies: int
    biographies_accepted: int


class ReflectFaceSet(TypedDict):
    name: str
    slug: str
    description: str
    counts: FaceSetCounts


class ReflectSystem(TypedDict):
    system_kind: str
    intended_purpose: str
    kind_source: str


class TaskProgress(TypedDict):
    planned: int
    answered: int
    errors: int


class ReflectRun(TypedDict):
    """One VLM run over the face set (``scoring.reflect.reports.run_summaries``)."""

    run_id: int
    model: str
    model_name: str
    backend: dict[str, Any]
    decoding: dict[str, Any] | None
    prompt_version: str
    explain: bool
    progress: dict[str, TaskProgress]


class ReflectSettings(TypedDict):
    n_resamples: int
    seed: int
    min_n: int
    confidence: float


class AnswerCounts(TypedDict):
    n_answers: int
    by_status: dict[str, int]
    by_model: dict[str, dict[str, int]]
    answered_from: str | None
    answered_to: str | None


class WinMatrix(TypedDict):
    groups: list[str]
    cells: list[list[float | None]]


class TwoAfcCell(TypedDict, total=False):
    """``models.<model>.2afc.<scenario>`` (docs/metrics.md, "REFLECT"). A ``<name>_ci`` key is
    absent when the part was built without a bootstrap (0 resamples); the all-trials rates have
    no ``race_gender`` kind."""

    attempted: Required[int]
    kept: Required[int]
    discarded_invalid: Required[int]
    discarded_refusal: Required[int]
    discarded_inconsistent: Required[int]
    discard_rate: Required[float | None]
    pol: Required[float | None]
    ext: Required[float | None]
    first_position_rate: Required[float | None]
    first_position_rate_ci: Required[Interval]
    win_rate: Required[ByKind]
    win_rate_all_trials: Required[ByKind]
    win_matrix: Required[WinMatrix]
    pol_ci: Interval
    ext_ci: Interval
    win_rate_ci: IntervalsByKind
    win_rate_all_trials_ci: IntervalsByKind


class McqCell(TypedDict, total=False):
    """``models.<model>.mcq.<question>``; ``jsd_ci`` and ``mean_gap_ci`` absent as the 2AFC
    cell's ``_ci`` keys."""

    attempted: Required[int]
    valid: Required[int]
    refusals: Required[int]
    invalid: Required[int]
    jsd: Required[ByKind]
    mean_gap: Required[ByKind]
    jsd_ci: IntervalsByKind
    mean_gap_ci: IntervalsByKind


class SalaryBlock(TypedDict, total=False):
    """``models.<model>.salary``: gaps per occupation (and ``all``) -> kind -> group."""

    attempted: Required[int]
    valid: Required[int]
    refusals: Required[int]
    gap_mean: Required[dict[str, ByKind]]
    gap_median: Required[dict[str, ByKind]]
    ols: Required[dict[str, Section]]
    gap_mean_ci: dict[str, IntervalsByKind]
    gap_median_ci: dict[str, IntervalsByKind]


# A model's block holds a task's key only when the model answered that task ("2afc" is no
# identifier, hence the functional form).
ReflectModel = TypedDict(
    "ReflectModel",
    {
        "bootstrap": Section,
        "2afc": dict[str, TwoAfcCell],
        "mcq": dict[str, McqCell],
        "salary": SalaryBlock,
        "variants": Section,
        "source_gender_split": Section,
    },
    total=False,
)


class ReflectStatistics(TypedDict, total=False):
    """The statistics of REFLECT answers (``reflect.dataset.full_report``; the REFLECT page's
    stored report): what the REFLECT tables and figures read. ``discard_table`` and
    ``spearman`` are absent when there are no 2AFC answers (``spearman`` also with fewer than
    two models)."""

    models: Required[dict[str, ReflectModel]]
    report_version: int
    discard_table: dict[str, Section]
    spearman: dict[str, dict[str, Section]]


class ReflectPart(ReflectStatistics, total=False):
    """``acrb-reflect-part/1``: ``reflect_part``'s document, under ``report["reflect"]``."""

    schema: Required[Literal["acrb-reflect-part/1"]]
    face_set: Required[ReflectFaceSet]
    system: Required[ReflectSystem]
    runs: Required[list[ReflectRun]]
    settings: Required[ReflectSettings]
    answers: Required[AnswerCounts]
    limitations: Required[list[TextRow]]


def two_afc_cells(model: ReflectModel) -> dict[str, TwoAfcCell]:
    """The model's 2AFC scenarios; none when it answered no 2AFC item (no ``2afc`` key then)."""
    return model["2afc"] if "2afc" in model else {}


def mcq_cells(model: ReflectModel) -> dict[str, McqCell]:
    """The model's MCQ questions; none when it answered no MCQ item."""
    return model["mcq"] if "mcq" in model else {}


def salary_block(model: ReflectModel) -> SalaryBlock | None:
    """The model's salary statistics; None when it answered no salary item."""
    return model["salary"] if "salary" in model else None


def cell_intervals(cell: Mapping[str, Any], name: str) -> Any:
    """A cell's ``<name>_ci``; None when the part was built without a bootstrap (no ``_ci``
    keys then)."""
    key = f"{name}_ci"
    return cell[key] if key in cell else None


def group_interval(intervals: IntervalsByKind | None, kind: str, group: str) -> Interval | None:
    """A group's ``[low, high]`` from a ``<name>_ci`` mapping; None when there is no bootstrap
    (``intervals`` None: the key is absent), the kind has no intervals or the group none."""
    if intervals is None or kind not in intervals:
        return None
    return intervals[kind].get(group)


class AuditReport(_Extensions, total=False):
    """``acrb-audit-report/2``: a study's report (with a REFLECT part under ``reflect``)."""

    schema: Required[Literal["acrb-audit-report/2"]]
    study: Required[Section]
    settings: Required[Section]
    design: Required[StudyDesign]
    rates: Required[Section]
    agreement: Required[Section]
    counts: Required[Section]
    clusters: Required[Clusters]
    methods: Required[dict[str, str]]
    disparities: Required[Rows]
    regression: Required[Rows]
    intent_interaction_tables: Rows
    models_side_by_side: Section
    validation: Required[Section]
    provenance: Required[Provenance]
    equivalence_margins: Section
    equivalence: Section
    limitations: Required[list[TextRow]]
    article_10: Required[Rows]
    # Added by bundle.report_from_inputs (the folder, the page, the command):
    people: Section
    data_statement: Section
    reflect: ReflectPart
    legal: Section
    kind: str


class ReflectReport(_Extensions, total=False):
    """``acrb-reflect-report/1``: a REFLECT-only document."""

    schema: Required[Literal["acrb-reflect-report/1"]]
    kind: Required[Literal["reflect"]]
    provenance: Required[Provenance]
    reflect: Required[ReflectPart]
    legal: Section


class StudyMetrics(_Extensions, total=False):
    """``acrb-study-metrics/1``: the study export (``export_metrics``, the metrics API)."""

    schema: Required[Literal["acrb-study-metrics/1"]]
    meta: Required[Section]
    rates: Required[Section]
    rates_by: Required[Section]
    agreement: Required[Section]
    aggregation: Section
    sensitivity: Section
    study: Section
    counts: Section
    labels: Section
    excluded_items: Rows
    gold_accuracy: Rows
    equivalence_margins: Section
    equivalence: Section
    generated_at: str


class ModelComparison(TypedDict):
    """``acrb-model-comparison/1``: models side by side (``compare_models``, the comparison page)."""

    schema: Literal["acrb-model-comparison/1"]
    studies: Rows
    models_side_by_side: Section
    generated_at: str


Report = AuditReport | ReflectReport

__all__ = [
    "AnswerCounts",
    "AuditReport",
    "Clusters",
    "McqCell",
    "ModelComparison",
    "Provenance",
    "ReflectModel",
    "ReflectPart",
    "ReflectReport",
    "Report",
    "StudyMetrics",
    "SalaryBlock",
    "StudyDesign",
    "TextRow",
    "ReflectStatistics",
    "RegressionFit",
    "TwoAfcCell",
    "cell_intervals",
    "fit_coefficients",
    "group_interval",
    "FrontierSection",
    "IntentInteractionSection",
    "JudgeErrorSection",
    "JudgeErrorTest",
    "PpiOutcome",
    "PpiSection",
    "frontier_section",
    "intent_interaction_section",
    "intent_interaction_tables",
    "is_audit_report",
    "judge_error_per_value",
    "judge_error_section",
    "ppi_blocks",
    "ppi_section",
    "study_clusters",
    "study_design",
    "mcq_cells",
    "salary_block",
    "two_afc_cells",
]


def is_audit_report(report: Report) -> bool:
    """A study's report, not a REFLECT-only document: ``study`` is required in the one and absent
    from the other (legal.py tells the parts apart the same way)."""
    return "study" in report
