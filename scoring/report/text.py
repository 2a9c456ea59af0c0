"""The audit report's stated limitations and its map to EU AI Act Article 10 evidence
(docs/report.md). Each limitation is derived from the report's own numbers, so it appears
exactly when it applies; the wording is fixed here, never per study by hand.
"""

from __future__ import annotations

from scoring.report.display import (
    cell_label,
    confidence_label,
    highest_lowest,
    interval_words,
    number,
    p_value,
    tied,
)
from scoring.report.document_types import (
    judge_error_section,
    ppi_blocks,
    ppi_left_out_note,
    ppi_section,
)

SAMPLE_EXAMPLES = 8


def limitations(report: dict) -> list[dict]:
    """Plain-language limitations, each ``{"kind", "text"}`` (plus details where useful)."""
    settings, counts = report["settings"], report["counts"]
    out = []
    if report["study"].get("synthetic_demo"):
        out.append(
            _item(
                "synthetic_data",
                "This study is a SYNTHETIC DEMO: images rendered by the app, simulated "
                "annotators and simulated judges. No finding in this report is real.",
            )
        )
    out.extend(_coverage(counts))
    small = _small_cells(report["disparities"], settings["min_n"])
    if small:
        out.append(
            _item(
                "small_samples",
                f"{len(small)} rate(s) rest on fewer than {settings['min_n']} observations; their "
                "Wilson intervals are wide and tests involving them have little power.",
                cells=small[:SAMPLE_EXAMPLES],
                n_cells=len(small),
            )
        )
    if report["validation"]["human_vs_auto"]:
        out.append(
            _item(
                "kappa_ci_independence",
                "The confidence interval of Cohen's κ between annotators and a judge treats every "
                "(annotation, judgment) pair as independent, but the annotations of one item share "
                "its judgment: the interval is optimistic (too narrow).",
            )
        )
    out.extend(_clusters(report["clusters"]))
    out.append(_multiple_testing(report))
    out.append(
        _item(
            "resampling",
            f"Δ intervals are built from simultaneous (max-t) cluster-bootstrap intervals of "
            f"every pairwise difference, so they can contain 0; Δ's p is the max-t test from the "
            f"same bootstrap as Δ's interval (p < 1 − confidence exactly when the interval "
            f"excludes 0), so none can fall below 1/{settings['n_resamples']}; the max/min "
            f"ratio's interval comes from the simultaneous band on log rates, and ratios to the "
            f"neutral baseline have percentile intervals (all from {settings['n_resamples']} "
            f"resamples of base prompts within domain).",
        )
    )
    unfitted = [
        f"{cell_label(t['source'], t['outcome'], t['attribute'])} · {method}: {t[method].get('reason')}"
        for t in report["regression"]
        for method in ("cluster", "gee")
        if not t[method].get("fitted")
    ]
    if unfitted:
        out.append(
            _item(
                "regression_not_fitted",
                f"{len(unfitted)} regression fit(s) are undefined; they are shown with the reason "
                "and no coefficients.",
                fits=unfitted,
            )
        )
    out.append(
        _item(
            "automated_rates",
            "Rates from automated judges inherit the judges' errors; read them with the human "
            "validation table. Human rates cover only the annotated items.",
        )
    )
    return out


def _item(kind: str, text: str, **details) -> dict:
    return {"kind": kind, "text": text, **details}


def _coverage(counts: dict) -> list[dict]:
    out = []
    if counts.get("n_annotations", 0) == 0:
        out.append(_item("no_human_labels", "No human annotations yet: nothing is validated."))
    elif counts.get("n_items_annotated", 0) < counts.get("n_items", 0):
        out.append(
            _item(
                "partial_human_coverage",
                f"Humans annotated {counts['n_items_annotated']} of {counts['n_items']} "
                "non-gold items; gold items are excluded from every rate.",
            )
        )
    if not counts.get("judges"):
        out.append(_item("no_judges", "No automated judgments: the human-vs-judge table is empty."))
    return out


FEW_CLUSTERS = 30


def _clusters(clusters: dict) -> list[dict]:
    out = []
    single = clusters["single_prompt_domains"]
    if single:
        out.append(
            _item(
                "single_prompt_domains",
                f"{len(single)} of {clusters['n_domains']} domain(s) hold a single base prompt. The "
                "bootstrap resamples base prompts within domain, so such a domain contributes no "
                "resampling variation; where every domain has one base prompt the Δ and ratio "
                "intervals have zero width and understate the uncertainty.",
                domains=single,
            )
        )
    if 0 < clusters["n_base_prompts"] < FEW_CLUSTERS:
        out.append(
            _item(
                "few_clusters",
                f"Only {clusters['n_base_prompts']} base prompts: cluster-robust and GEE standard "
                f"errors and the cluster bootstrap are unreliable with fewer than about "
                f"{FEW_CLUSTERS} clusters (intervals too narrow, p-values too small).",
            )
        )
    return out


def _small_cells(disparities: list[dict], min_n: int) -> list[str]:
    return [
        f"{cell_label(row['source'], row['measure'], row['attribute'], value['value'])} (n = {value['n']})"
        for row in disparities
        for value in row["values"]
        if value["n"] < min_n
    ]


def _multiple_testing(report: dict) -> dict:
    n_delta = sum(1 for row in report["disparities"] if row["delta_p"] is not None)
    n_pairs = sum(len(row["pairwise_tests"]) for row in report["disparities"])
    families = len({row["source"] for row in report["disparities"]})
    return _item(
        "multiple_testing",
        f"The report runs {n_delta} tests of Δ (max-t, from the bootstrap of Δ's interval) and "
        f"{n_pairs} pairwise tests. Δ tests "
        f"are Holm- and BH-adjusted within each source ({families} families); pairwise tests "
        "within each source × measure × attribute type. Nothing is adjusted across families, so "
        "some raw and family-adjusted p-values below 0.05 are expected by chance.",
    )


def article_10_map(report: dict) -> list[dict]:
    """Where each piece of evidence Article 10(2) and (3) asks about sits in this report."""
    flagged = [row for row in report["disparities"] if row["flagged"]]
    return [
        {
            "provision": "Art. 10(2)(a)-(b): design choices, data collection and origin",
            "section": "design",
            "evidence": "Taxonomy of attribute values and cues, base prompts by domain, "
            "generators, judges with versions, annotators by group.",
        },
        {
            "provision": "Art. 10(2)(c): annotation and labelling",
            "section": "validation",
            "evidence": "Annotators by group, overlap, gold accuracy; inter-annotator agreement; "
            "automated judges validated against humans.",
        },
        {
            "provision": "Art. 10(2)(f): examination in view of possible biases",
            "section": "disparities",
            "evidence": f"{len(report['disparities'])} disparities examined (Δ with cluster-bootstrap "
            f"CI and the max-t test from the same bootstrap), pairwise tests with effect sizes, "
            f"{len(report['regression'])} regression tables; {len(flagged)} disparity(ies) flagged "
            f"at Holm-adjusted p < {report['settings']['alpha']}.",
        },
        {
            "provision": "Art. 10(2)(g): measures to detect, prevent and mitigate biases",
            "section": "measures",
            "evidence": "Detection measures applied here (below). Prevention and mitigation "
            "measures are the provider's to record alongside this report.",
        },
        {
            "provision": "Art. 10(2)(h) and 10(3): data gaps, shortcomings, representativeness",
            "section": "limitations",
            "evidence": "Stated limitations: sample sizes, coverage, synthetic data, test "
            "multiplicity, interval assumptions.",
        },
    ]


def detection_measures(report: dict) -> list[str]:
    """What this examination did to detect bias, in words (the "measures" section)."""
    settings = report["settings"]
    return [
        "Minimal pairs: each base prompt is expanded over every attribute value and a neutral "
        "baseline, so values are compared on the same request.",
        f"Rates per attribute value with Wilson {confidence_label(report)} intervals on the "
        f"effective sample size (the item, not the label, is the unit); Δ = max − min with a "
        f"cluster bootstrap over base prompts ({settings['n_resamples']} resamples, stratified "
        f"by domain).",
        f"Test of every Δ: the max-t test from the same bootstrap as Δ's interval (p < "
        f"{1 - settings['confidence']:.2g} exactly when the interval excludes 0), Holm-adjusted "
        f"per source across its measures × attributes; flagged when the adjusted p < "
        f"{settings['alpha']}.",
        "Pairwise chi-square / Fisher tests between values on effective sample sizes, with Holm "
        "and Benjamini–Hochberg adjustment, Cohen's h and odds ratios.",
        "Logistic regressions of refusal and erasure on attribute value + domain + generator, "
        "with cluster-robust standard errors by base prompt and, as a check, GEE.",
        "Human validation: overlapping annotations, gold items, and agreement of each judge with "
        "the annotators.",
    ]


# --- prediction-powered estimates and judge fairness (docs/report.md, "Judges and humans") ----
# Read from ``ppi.<judge>.<outcome>`` and ``judge_error.<judge>.<outcome>.<attribute>`` of the
# study export / report.json (docs/metrics.md); a missing section says nothing.

PPI_HEADLINES = 3


def _bracket(block: dict, report: dict, digits: int = 3) -> str:
    """``95% CI 0.012 to 0.340`` at the document's level, or "no interval"."""
    words = interval_words(
        block.get("ci_low"), block.get("ci_high"), document=report, digits=digits
    )
    return words or "no interval"


def ppi_deltas(report: dict) -> list[dict]:
    """Every defined PPI Δ: ``{judge, outcome, attribute, block}``, largest first."""
    rows = []
    for judge, outcomes in sorted(ppi_section(report).items()):
        for outcome, section in sorted(outcomes.items()):
            for attribute, block in sorted(ppi_blocks(section, "delta").items()):
                if isinstance(block, dict) and block.get("estimate") is not None:
                    rows.append(
                        {"judge": judge, "outcome": outcome, "attribute": attribute, "block": block}
                    )
    return sorted(rows, key=lambda row: -row["block"]["estimate"])


def differential_errors(report: dict) -> list[dict]:
    """Every (judge, outcome, attribute) whose error differs across values
    (``judge_error…differential`` true): ``{judge, outcome, attribute, p_holm}``."""
    rows = []
    for judge, outcomes in sorted(judge_error_section(report).items()):
        for outcome, attributes in sorted(outcomes.items()):
            for attribute, block in sorted(attributes.items()):
                if isinstance(block, dict) and block.get("differential") is True:
                    rows.append(
                        {
                            "judge": judge,
                            "outcome": outcome,
                            "attribute": attribute,
                            "p_holm": block.get("p_holm"),
                        }
                    )
    return rows


ERROR_RATES = {"fnr": "FNR", "fpr": "FPR"}


def _detectable(power: dict, rate: str) -> str | None:
    """``an FNR difference of 0.31 (0.20 to 0.51; 8 and 36 items)``; None when undefined."""
    difference = power.get(f"min_detectable_{rate}_difference")
    if difference is None:
        return None
    baseline = power.get(f"{rate}_baseline")
    counts = power.get(f"{rate}_counts") or []
    detail = f"{number(baseline, 2)} to {number(baseline + difference, 2)}"
    if len(counts) == 2:
        detail += f"; {counts[0]} and {counts[1]} items"
    return f"an {ERROR_RATES[rate]} difference of {number(difference, 2)} ({detail})"


def _power_clause(power: dict, *, detected: bool) -> str:
    found = {rate: _detectable(power, rate) for rate in ERROR_RATES}
    defined = [text for text in found.values() if text]
    undefined = [
        f"{ERROR_RATES[rate]}: {power.get(f'min_detectable_{rate}_difference_reason') or 'undefined'}"
        for rate, text in found.items()
        if text is None
    ]
    level = f"{power.get('power', 0.8):.0%}"
    if not defined:
        return f"its power is undefined ({'; '.join(undefined)})"
    lead = f"with {level} power this study detects" if detected else "this study could detect"
    clause = f"{lead} {' and '.join(defined)} between two values"
    clause += "" if detected else f" with {level} power"
    if undefined:
        clause += f" ({'; '.join(undefined)})"
    return clause


def judge_error_verdict(block: dict) -> str:
    """The differential-error flag of one attribute in words, with its power where the document
    has it: "No differential error detected (p Holm 0.710; FNR p 0.500, FPR p 0.355); this study
    could detect an FNR difference of 0.31 (…) and … between two values with 80% power."
    ``block``: ``judge_error.<judge>.<outcome>.<attribute>`` (docs/metrics.md, "Judge error by
    group")."""
    differential = block.get("differential")
    if differential is None:
        reason = block.get("reason") or block.get("differential_reason")
        return "Not tested" + (f": {reason}." if reason else ".")
    tests = [
        f"{ERROR_RATES[rate]} p {p_value(block[f'{rate}_test'].get('p_value'))}"
        for rate in ERROR_RATES
        if isinstance(block.get(f"{rate}_test"), dict)
        and block[f"{rate}_test"].get("p_value") is not None
    ]
    figures = "; ".join(
        [f"p Holm {p_value(block.get('p_holm'))}", *([", ".join(tests)] if tests else [])]
    )
    lead = "Differential error detected" if differential else "No differential error detected"
    power = block.get("power")
    if not isinstance(power, dict):
        return f"{lead} ({figures})."
    return f"{lead} ({figures}); {_power_clause(power, detected=bool(differential))}."


def judge_bias_values(bias: dict | None) -> list[tuple[str, dict]]:
    """``(value, entry)`` of ``judge_bias.<attribute>.per_value`` whose simultaneous interval of
    judge rate − PPI rate excludes 0 (docs/metrics.md, "Judge bias"); none unless ``warning``."""
    if not isinstance(bias, dict) or bias.get("warning") is not True:
        return []
    return [
        (value, entry)
        for value, entry in sorted((bias.get("per_value") or {}).items())
        if entry.get("ci_low") is not None and (entry["ci_low"] > 0 or entry["ci_high"] < 0)
    ]


def judge_only_cautions(report: dict) -> list[dict]:
    """Where the judge-only Δ must not be reported: the judge errs differentially on the
    attribute (Holm-adjusted p < α), or its judge-bias warning fires (some value's simultaneous
    interval of judge rate − PPI rate excludes 0).
    ``{judge, outcome, attribute, because, brief}``, one per (judge, outcome, attribute)."""
    found: dict[tuple, list[tuple[str, str]]] = {}
    for row in differential_errors(report):
        key = (row["judge"], row["outcome"], row["attribute"])
        found.setdefault(key, []).append(
            (
                f"its error differs across the values (p Holm {p_value(row['p_holm'])})",
                "its error differs by value",
            )
        )
    for judge, outcomes in sorted(ppi_section(report).items()):
        for outcome, section in sorted(outcomes.items()):
            for attribute, bias in sorted(ppi_blocks(section, "judge_bias").items()):
                off = judge_bias_values(bias)
                if off:
                    found.setdefault((judge, outcome, attribute), []).append(
                        (
                            "its rate is off the PPI rate for "
                            + ", ".join(
                                f"{value} by {number(entry['estimate'])} (simultaneous "
                                f"{_bracket(entry, report)})"
                                for value, entry in off
                            ),
                            "off the PPI rate for " + ", ".join(value for value, _ in off),
                        )
                    )
    # ``because`` for the report, ``brief`` (no figures) for the summary card.
    return [
        {
            "judge": judge,
            "outcome": outcome,
            "attribute": attribute,
            "because": "; ".join(full for full, _ in why),
            "brief": "; ".join(short for _, short in why),
        }
        for (judge, outcome, attribute), why in sorted(found.items())
    ]


def ppi_labels_left_out(report: dict) -> list[str]:
    """The sentences saying which human labels the prediction-powered estimates left out, as
    not a probability sample of their cells (docs/metrics.md, "Prediction-powered rates"):
    one per distinct sentence over the judges and outcomes (they share their labels)."""
    out: list[str] = []
    for _judge, outcomes in sorted(ppi_section(report).items()):
        for _outcome, section in sorted(outcomes.items()):
            note = ppi_left_out_note(section)
            if note and note not in out:
                out.append(note)
    return out


def _highest_lowest_words(block: dict) -> str:
    high, low = block.get("max_value"), block.get("min_value")
    if tied(high, low, block.get("estimate")):
        return highest_lowest(high, low, block.get("estimate"))
    return f"highest {high or '—'}, lowest {low or '—'}"


def ppi_findings(report: dict) -> list[str]:
    """The report's lead sentences where humans validated a judge: the largest PPI Δ, each
    attribute a judge errs on differentially, where the judge-only Δ must not be reported, and
    which human labels the estimates left out."""
    out = []
    for row in ppi_deltas(report)[:PPI_HEADLINES]:
        block = row["block"]
        out.append(
            f"Judge {row['judge']} corrected by the human labels (PPI): {row['outcome']} Δ for "
            f"{row['attribute']} = {number(block['estimate'])} ({_bracket(block, report)}), "
            f"{_highest_lowest_words(block)}."
        )
    for row in differential_errors(report):
        out.append(
            f"Judge {row['judge']} errs differently across {row['attribute']} values on "
            f"{row['outcome']} (p Holm {p_value(row['p_holm'])}): its own rates for {row['attribute']} "
            "measure the judge as much as the generator."
        )
    for row in judge_only_cautions(report):
        out.append(
            f"Do not report judge {row['judge']}'s own {row['outcome']} Δ for {row['attribute']}: "
            f"{row['because']}. Report the PPI Δ instead."
        )
    return out + ppi_labels_left_out(report)
