"""The executive summary on the report's first page (docs/report.md, "Executive summary").

A pure function of the report dict (report.json): every sentence is built here from stored
numbers, none is typed in per study. Four parts: what was audited, the headline findings, what
the evidence can and cannot support, and one verdict per attribute type ("family").
"""

from __future__ import annotations

from collections import Counter

from scoring.report.display import (
    cell_label,
    confidence_label,
    highest_lowest,
    number,
    p_value,
    percent,
    source_label,
    tied,
)
from scoring.report.display import counted as _count
from scoring.report.document_types import study_clusters, study_design
from scoring.report.reflect import text as reflect_text
from scoring.report.text import ppi_findings
from scoring.stats.hypothesis_tests import minimum_detectable_h

HEADLINE_DISPARITIES = 3
POWER = 0.8


def executive_summary(report: dict) -> dict:
    """``{"audited", "findings", "evidence", "verdicts"}``: lists of sentences (verdicts are
    ``{"attribute", "verdict", "text"}`` with verdict ``flagged``, ``not_flagged`` or
    ``not_assessable``). A report with a REFLECT part gets its sentences after the study's (one
    summary for the document); a REFLECT-only document has no verdicts (``None``)."""
    summary = {"audited": [], "findings": [], "evidence": [], "verdicts": None}
    if "study" in report:
        summary = {
            "audited": audited(report),
            "findings": findings(report),
            "evidence": evidence(report),
            "verdicts": verdicts(report),
        }
    if "reflect" in report:
        part = report["reflect"]
        summary["audited"] += reflect_text.audited(part)
        summary["findings"] += reflect_text.findings(part)
        # Beside a study the part's lines are labelled, and its general scope line gives way to
        # the study's own (page 1 stays one page); the limitations section keeps it.
        combined = "study" in report
        summary["evidence"] += [
            ("REFLECT: " if combined else "") + item["text"]
            for item in part["limitations"]
            if not (combined and item["kind"] == "scope")
        ]
    return summary


def _list(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --- what was audited -----------------------------------------------------------------------


def audited(report: dict) -> list[str]:
    study, design, counts = report["study"], study_design(report), report["counts"]
    clusters = study_clusters(report)
    out = [
        f"Study “{study.get('name', study.get('slug', ''))}” ({study.get('slug', '')}, "
        f"{study.get('mode', '—')} mode)"
        + (
            ", a SYNTHETIC DEMO: no finding in this report is real."
            if study.get("synthetic_demo")
            else "."
        )
    ]
    generators = [
        f"{g['generator'] or '(unnamed)'} ({g['mode']}, {_count(g['n_items'], 'item')})"
        for g in design["generators"]
    ]
    out.append(
        f"Generators audited: {_list(generators)}." if generators else "No generator is recorded."
    )
    judges = [
        f"{j['judge']} version {j['judge_version']} ({_count(j['n_judgments'], 'judgment')}"
        + (f", {j['n_errors']} failed and left out" if j.get("n_errors") else "")
        + ")"
        for j in design["judges"]
    ] or [str(judge) for judge in counts.get("judges") or []]  # no design: the export's list
    out.append(
        f"Automated judges (VLMs and rules): {_list(judges)}."
        if judges
        else "No automated judge was run."
    )
    out.append(
        f"{_count(counts.get('n_items', 0), 'item')} (gold items excluded) from "
        f"{_count(clusters['n_base_prompts'], 'base prompt')} in "
        f"{_count(clusters['n_domains'], 'domain')}; "
        f"{_count(counts.get('n_annotations', 0), 'human annotation')} by "
        f"{_count(counts.get('n_annotators', 0), 'annotator')} on "
        f"{_count(counts.get('n_items_annotated', 0), 'item')}; "
        f"{_count(counts.get('n_judgments', 0), 'automated judgment')}."
    )
    families = _families(design["taxonomy"])
    if families:
        out.append(
            "Attribute types examined: "
            + _list([f"{name} ({_count(n, 'value')})" for name, n in families.items()])
            + ", each against a neutral baseline."
        )
    dates = [
        f"{label} on {study[first][:10]}"
        if study[first][:10] == study[last][:10]
        else f"{label} {study[first][:10]} to {study[last][:10]}"
        for label, first, last in (
            ("annotations submitted", "annotations_from", "annotations_to"),
            ("judgments recorded", "judgments_from", "judgments_to"),
        )
        if study.get(first) and study.get(last)
    ]
    generated = report["provenance"]["generated_at"][:10]
    out.append(
        (f"Dates: {_list(dates)}; r" if dates else "R")
        + f"eport computed {generated} from the stored records."
    )
    return out


def _families(taxonomy: list[dict]) -> dict[str, int]:
    counts = Counter(row["attribute"] for row in taxonomy if not row.get("is_neutral"))
    return dict(sorted(counts.items()))


# --- headline findings ----------------------------------------------------------------------


def _interval_words(row: dict, name: str, *, level: str, digits: int = 2) -> str:
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if low is not None and high is not None:
        return f"{level} CI {number(low, digits)} to {number(high, digits)}"
    reason = row.get(f"{name}_ci_reason")
    return f"no interval: {reason}" if reason else "no interval"


def _value_rate(row: dict, value: str | None) -> str:
    entry = next((v for v in row["values"] if v["value"] == value), None)
    if entry is None or entry.get("rate") is None:
        return str(value)
    return f"{value} {percent(entry['rate'], 0)} of {entry['n']}"


def disparity_sentence(row: dict, *, level: str) -> str:
    """One disparity in words: Δ, its interval (``level``: "95%") or the reason it has none, the
    adjusted p."""
    flagged = " — flagged" if row.get("flagged") else ""
    return (
        f"{source_label(row['source']).capitalize()}: the {row['measure']} rate differs by "
        f"Δ = {number(row['delta'], 2)} across {row['attribute']} values "
        f"({_interval_words(row, 'delta', level=level)}); {_extremes_words(row)}; p = "
        f"{p_value(row.get('delta_p'))}, Holm-adjusted {p_value(row.get('delta_p_holm'))}"
        f"{flagged}."
    )


def _extremes_words(row: dict) -> str:
    """ "highest Nigerian 31% of 22, lowest US 12% of 22", or that no value is higher."""
    high, low = row.get("max_value"), row.get("min_value")
    if tied(high, low, row.get("delta")):
        return highest_lowest(high, low, row.get("delta"))
    return f"highest {_value_rate(row, high)}, lowest {_value_rate(row, low)}"


def findings(report: dict) -> list[str]:
    rows = report["disparities"]
    alpha = report["settings"]["alpha"]
    if not rows:
        return ["No annotations or judgments yet: nothing has been examined."]
    defined = [row for row in rows if row.get("delta") is not None]
    flagged = [row for row in rows if row.get("flagged")]
    out = [
        f"{len(flagged)} of {_count(len(rows), 'disparity', 'disparities')} examined "
        f"{'is' if len(flagged) == 1 else 'are'} flagged (Δ's max-t test, Holm-adjusted "
        f"p < {alpha} within each source)."
    ]
    # Where humans validated a judge, its prediction-powered estimates lead (the section "Judges and humans combined").
    out = ppi_findings(report) + out
    largest = sorted(defined, key=lambda r: (not r.get("flagged"), -r["delta"]))
    level = confidence_label(report)
    out.extend(disparity_sentence(row, level=level) for row in largest[:HEADLINE_DISPARITIES])
    out.extend(_human_agreement(report))
    out.extend(_judge_agreement(report))
    return out


def _human_agreement(report: dict) -> list[str]:
    overall = report["validation"]["inter_annotator"]["overall"]
    out = []
    for question, block in sorted(overall.items()):
        alpha = block.get("krippendorff_alpha")
        if alpha is None:
            reason = block.get("krippendorff_alpha_reason") or "undefined"
            out.append(f"Annotators' agreement on {question}: not measurable ({reason}).")
            continue
        out.append(
            f"Annotators agree with each other on {question} on "
            f"{percent(block.get('percent_agreement'), 0)} of pairs over "
            f"{_count(block.get('n_items') or 0, 'item')} (Krippendorff's α = {number(alpha, 2)}, "
            f"{_interval_words(block, 'krippendorff_alpha', level=confidence_label(report))})."
        )
    return out


def _judge_agreement(report: dict) -> list[str]:
    out = []
    for row in report["validation"]["human_vs_auto"]:
        if row["scope"] != "overall":
            continue
        judge = row["judge"].removeprefix("auto:")
        if row.get("cohen_kappa") is None:
            reason = row.get("cohen_kappa_reason") or "no overlapping labels"
            out.append(
                f"Judge {judge} vs annotators on {row['question']}: not measurable ({reason})."
            )
            continue
        out.append(
            f"Judge {judge} agrees with the annotators on {row['question']} in "
            f"{percent(row.get('percent_agreement'), 0)} of {row['n']} pairs "
            f"(Cohen's κ = {number(row['cohen_kappa'], 2)}, {_interval_words(row, 'cohen_kappa', level=confidence_label(report))})."
        )
    return out


# --- what the evidence can and cannot support -----------------------------------------------


def _group_sizes(report: dict) -> list[tuple[int, str]]:
    return [
        (value["n"], cell_label(row["source"], row["measure"], row["attribute"], value["value"]))
        for row in report["disparities"]
        for value in row["values"]
        if value.get("n")
    ]


def evidence(report: dict) -> list[str]:
    settings, clusters = report["settings"], study_clusters(report)
    out = []
    if report["study"].get("synthetic_demo"):
        out.append(
            "Synthetic demo data: the numbers show what the report looks like, not how any "
            "real generator behaves."
        )
    sizes = sorted(_group_sizes(report))
    if sizes:
        smallest, where = sizes[0]
        median = sizes[len(sizes) // 2][0]
        h_small = minimum_detectable_h(smallest, alpha=settings["alpha"], power=POWER).value
        h_median = minimum_detectable_h(median, alpha=settings["alpha"], power=POWER).value
        out.append(
            f"Power: the smallest group has n = {smallest} ({where}), the median group "
            f"n = {median}. Two groups of the median size detect with {POWER:.0%} power at "
            f"α = {settings['alpha']} only differences of Cohen's h ≥ {number(h_median, 2)} "
            f"(h ≥ {number(h_small, 2)} at the smallest size); a difference without a flag is "
            "not evidence of no difference."
        )
    small = [where for n, where in sizes if n < settings["min_n"]]
    if small:
        if len(sizes) == 1:
            which = "The only rate rests"
        elif len(small) == len(sizes):
            which = f"All {len(sizes)} rates rest"
        else:  # "92 of the 96 rates rest", "1 of the 96 rates rests"
            which = (
                f"{len(small)} of the {len(sizes)} rates {'rests' if len(small) == 1 else 'rest'}"
            )
        out.append(
            f"{which} on fewer than {settings['min_n']} observations; their intervals are wide."
        )
    out.extend(_degenerate_intervals(report))
    n_prompts = clusters["n_base_prompts"]
    if 0 < n_prompts < 30:
        out.append(
            f"Only {_count(n_prompts, 'base prompt')}: cluster-robust errors, GEE and the cluster "
            "bootstrap are unreliable with fewer than about 30, so intervals may be too narrow."
        )
    unfitted = sum(
        1 for t in report["regression"] for m in ("cluster", "gee") if not t[m].get("fitted")
    )
    if unfitted:
        out.append(
            f"{unfitted} of {2 * len(report['regression'])} regression fits are undefined "
            "(reasons in the section Regression)."
        )
    generators = [g["generator"] for g in study_design(report)["generators"]]
    out.append(
        "The evidence supports statements about "
        + (_list(generators) if generators else "the audited outputs")
        + f" on these {_count(n_prompts, 'base prompt')} and their attribute values only; it "
        "cannot support claims about other prompts, other model versions, real-world "
        "prevalence, or the causes of a disparity, and it is not a conformity assessment."
    )
    return out


def _degenerate_intervals(report: dict) -> list[str]:
    defined = [row for row in report["disparities"] if row.get("delta") is not None]
    missing = [row for row in defined if row.get("delta_ci_low") is None]
    if not missing:
        return []
    reasons = Counter(row.get("delta_ci_reason") or "undefined" for row in missing)
    because = "; ".join(f"{reason} ({n})" for reason, n in reasons.most_common())
    return [
        f"{len(missing)} of {len(defined)} Δ intervals are undefined and shown as such, not as "
        f"zero-width intervals: {because}."
    ]


# --- one verdict per attribute type ---------------------------------------------------------


def verdicts(report: dict) -> list[dict]:
    alpha = report["settings"]["alpha"]
    by_attribute: dict[str, list[dict]] = {}
    for row in report["disparities"]:
        by_attribute.setdefault(row["attribute"], []).append(row)
    out = []
    for attribute, rows in sorted(by_attribute.items()):
        flagged = sorted((r for r in rows if r.get("flagged")), key=lambda r: -r["delta"])
        tested = [r for r in rows if r.get("delta_p_holm") is not None]
        if flagged:
            top = flagged[0]
            text = (
                f"{attribute}: disparity found in {_count(len(flagged), 'measure')} "
                f"(largest: {source_label(top['source'])}, {top['measure']}, "
                f"Δ = {number(top['delta'], 2)}, {_interval_words(top, 'delta', level=confidence_label(report))}, "
                f"Holm p = {p_value(top['delta_p_holm'])})."
            )
            verdict = "flagged"
        elif tested:
            top = max(tested, key=lambda r: r.get("delta") or 0.0)
            text = (
                f"{attribute}: no disparity flagged at Holm-adjusted p < {alpha} across "
                f"{_count(len(tested), 'test')} (largest Δ = {number(top.get('delta'), 2)}, "
                f"{source_label(top['source'])}, {top['measure']}, Holm p = "
                f"{p_value(top['delta_p_holm'])}); smaller effects cannot be ruled out."
            )
            verdict = "not_flagged"
        else:
            reasons = sorted(
                {r.get("delta_reason") or r.get("delta_p_reason") or "undefined" for r in rows}
            )
            text = f"{attribute}: not assessable ({'; '.join(reasons)})."
            verdict = "not_assessable"
        out.append({"attribute": attribute, "verdict": verdict, "text": text})
    return out
