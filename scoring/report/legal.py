"""Which obligations the report's evidence bears on, chosen by the kind of system audited
(docs/report.md, "Legal mapping"). Django-free.

The obligations are data (``data/obligations.json``): instrument, provision, a summary in our
words, the kinds of system they apply to, the report sections that hold evidence for them and
the limits of that evidence. ``obligations_for`` selects by system kind; ``legal_mapping`` adds,
per obligation, one line of evidence counted from the finished report. Nothing here says an
obligation is met: the report presents evidence and its limits, never a compliance verdict.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from scoring.report.document_types import study_design
from scoring.report.reflect import text as reflect_text
from scoring.report.report_section import ReportSection

NOT_STATED = ""
STATEMENT = (
    "This section maps the evidence in this report to obligations and guidance that may apply to "
    "the audited system. It is not a conformity assessment and does not state that any "
    "obligation is met; whether and how an obligation applies is for the provider and its "
    "advisers to decide."
)
# Where each kind of evidence sits in the report (the page's section anchors).
SECTIONS = {
    "design": "design",
    "measures": "measures",
    "disparities": "disparities",
    "regression": "regression",
    "validation": "validation",
    "limitations": "limitations",
    "people": "people",
    "data_statement": "data-statement",
    "recomputable": "provenance",
}


@cache
def load_obligations() -> dict:
    """The obligations document shipped with the package."""
    text = resources.files("scoring.report").joinpath("data/obligations.json").read_text("utf-8")
    return json.loads(text)


def system_kinds() -> dict[str, str]:
    return dict(load_obligations()["system_kinds"])


def obligations_for(system_kind: str) -> list[dict]:
    """The obligations for one kind of system, in document order; every one when the kind is
    not stated (``""``), so the reader sees each candidate route. An unknown kind is an error."""
    document = load_obligations()
    if system_kind == NOT_STATED:
        return [dict(entry) for entry in document["obligations"]]
    if system_kind not in document["system_kinds"]:
        known = ", ".join(document["system_kinds"])
        raise ValueError(f"unknown system kind {system_kind!r}; expected one of: {known}")
    return [dict(entry) for entry in document["obligations"] if system_kind in entry["applies_to"]]


def legal_mapping(report: dict) -> dict:
    """The report's legal section: the audited systems (the study's, the REFLECT part's, or
    both) with their kinds and purposes, the obligations for those kinds, and for each the
    sections and counted evidence of the parts it applies to (one mapping for the document)."""
    systems = audited_systems(report)
    for system in systems:
        obligations_for(system["system_kind"])  # an unknown kind is an error
    entries = []
    for entry in load_obligations()["obligations"]:
        parts = [s for s in systems if s["system_kind"] in (NOT_STATED, *entry["applies_to"])]
        if not parts:
            continue
        entry = dict(entry)
        entry["parts"] = [system["part"] for system in parts]
        entry["sections"], entry["evidence_lines"] = [], []
        for system in parts:  # the study's evidence, then the REFLECT part's
            for key in entry["evidence"]:
                line, section = _part_evidence(report, system["part"], key)
                if line is None:
                    continue
                entry["evidence_lines"].append(line)
                if section not in entry["sections"]:
                    entry["sections"].append(section)
        if not entry["evidence_lines"]:
            entry["evidence_lines"] = ["No evidence in this report (not examined)."]
        entries.append(entry)
    first = systems[0] if systems else {"system_kind": NOT_STATED, "intended_purpose": ""}
    return {
        "system_kind": first["system_kind"],
        "system_kind_label": system_kinds().get(first["system_kind"], "not stated"),
        "intended_purpose": first["intended_purpose"],
        "systems": systems,
        "route_note": " ".join(filter(None, (_route_note(system) for system in systems))),
        "statement": STATEMENT,
        "obligations": entries,
    }


def audited_systems(report: dict) -> list[dict]:
    """One entry per audited part: its label, system kind (and its label), purpose."""
    systems = []
    if "study" in report:
        study = report["study"]
        systems.append(
            {
                "part": "study",
                "label": f"Study {study.get('name') or study.get('slug', '')}",
                "system_kind": study.get("system_kind") or NOT_STATED,
                "intended_purpose": study.get("intended_purpose") or "",
                "kind_source": "stated on the study",
            }
        )
    if "reflect" in report:
        system = report["reflect"]["system"]
        systems.append(
            {
                "part": "reflect",
                "label": f"REFLECT face set {report['reflect']['face_set']['name']}",
                "system_kind": system["system_kind"] or NOT_STATED,
                "intended_purpose": system["intended_purpose"],
                "kind_source": system["kind_source"],
            }
        )
    for system in systems:
        system["system_kind_label"] = system_kinds().get(system["system_kind"], "not stated")
    return systems


def _part_evidence(report: dict, part: str, key: str) -> tuple[str | None, str | None]:
    if part == "study":
        line = evidence_line(report, key)
        return (f"Study: {line}" if "reflect" in report else line), SECTIONS[key]
    if key not in reflect_text.EVIDENCE:
        return None, None
    line = reflect_text.EVIDENCE[key](report["reflect"])
    if "study" not in report:  # a REFLECT-only document needs no part label
        line = line.removeprefix("REFLECT: ")
    return line, reflect_text.SECTIONS[key]


def _route_note(system: dict) -> str:
    kind, purpose = system["system_kind"], system["intended_purpose"]
    notes = []
    if kind == NOT_STATED:
        notes.append(
            "The study does not state what kind of system was audited, so every candidate route "
            "is listed; staff set it on the study (system kind)."
            if system["part"] == "study"
            else "The REFLECT part states no system kind, so every candidate route is listed."
        )
    if system["part"] == "reflect" and system.get("kind_source") == "default":
        notes.append(
            "The REFLECT part is mapped as a high-risk system under Annex III (its tasks are "
            "recruitment, selection and pay decisions); reflect_report --system-kind states "
            "another kind."
        )
    if not purpose:
        owner = "" if system["part"] == "study" else " for the REFLECT part"
        notes.append(
            f"No intended purpose is stated{owner}; representativeness and setting "
            "(Article 10(3)-(4)) cannot be judged without one."
        )
    return " ".join(notes)


def evidence_line(report: dict, key: str) -> str:
    """One sentence of evidence of kind ``key``, counted from the report."""
    return _EVIDENCE[key](report)


def _design(report):
    design, counts = study_design(report), report["counts"]
    values = [row for row in design["taxonomy"] if not row.get("is_neutral")]
    attributes = sorted({row["attribute"] for row in values})
    return (
        f"{len(values)} attribute values in {len(attributes)} attribute types "
        f"({', '.join(attributes) or 'none'}), {len(design['prompts'])} base prompts in "
        f"{len(design['domains'])} domains, {len(design['generators'])} "
        f"generator/mode pairs, {counts.get('n_items', 0)} items."
    )


def _measures(report):
    settings = report["settings"]
    return (
        f"Detection measures: rates with Wilson intervals, Δ with a cluster bootstrap "
        f"({settings.get('n_resamples')} resamples) and the max-t test from the same bootstrap, "
        f"pairwise tests and regressions (section 3)."
    )


def _disparities(report):
    rows = report["disparities"]
    flagged = sum(1 for row in rows if row.get("flagged"))
    alpha = report["settings"].get("alpha")
    return (
        f"{len(rows)} disparities examined; {flagged} flagged at Holm-adjusted p < {alpha} "
        f"(max-t test of Δ from the bootstrap of its interval)."
    )


def _regression(report):
    tables = report["regression"]
    fitted = sum(1 for table in tables for method in ("cluster", "gee") if table[method]["fitted"])
    return f"{len(tables)} regression tables; {fitted} of {2 * len(tables)} fits defined."


def _validation(report):
    rows = report["validation"]["human_vs_auto"]
    judges = sorted({row["judge"] for row in rows})
    counts = report["counts"]
    return (
        f"{counts.get('n_annotations', 0)} human annotations on "
        f"{counts.get('n_items_annotated', 0)} items; {len(judges)} judge(s) compared with them."
    )


def _limitations(report):
    return f"{len(report['limitations'])} stated limitations (section 7)."


def _people(report):
    if "people" not in report:  # bundle.report_from_inputs adds it; frames alone have none
        return (
            "0 annotators in 0 group(s); 0 batch(es) with their assignment policy; "
            "recruitment not stated, pay not stated."
        )
    pool = report["people"]
    groups = pool["groups"]
    n_annotators = sum(group["n_annotators"] for group in groups)
    return (
        f"{n_annotators} annotators in {len(groups)} group(s); "
        f"{len(pool['batches'])} batch(es) with their assignment policy; recruitment "
        f"{'stated' if pool['recruitment'] else 'not stated'}, pay "
        f"{'stated' if pool['pay'] else 'not stated'}."
    )


def _data_statement(report):
    statement = report["data_statement"] if "data_statement" in report else None  # as "people"
    if statement is None or not statement["has_plan"]:
        return "No generation plan recorded: prompt sources and licences are not documented."
    return (
        f"{statement['n_planned']} planned and {statement['n_skipped']} skipped "
        f"prompt rows, from {len(statement['sources'])} source(s) with licences."
    )


def _recomputable(report):
    return "The report folder holds the raw records with SHA-256 hashes; verify_report recomputes every number."


_EVIDENCE = {
    "design": _design,
    "measures": _measures,
    "disparities": _disparities,
    "regression": _regression,
    "validation": _validation,
    "limitations": _limitations,
    "people": _people,
    "data_statement": _data_statement,
    "recomputable": _recomputable,
}


SECTION = ReportSection(
    id="evidence",
    title="Legal mapping",
    heading="Legal mapping: the evidence and the obligations it bears on",
    templates=("staff/partials/report_legal.html",),
)
