"""The report's "Safety–utility trade-off by attribute" section (Django-free; docs/report.md).

Reads the finished report (``frontier``, ``intent_interaction``, ``rates``) and computes no
statistic: the table rows, plain-word findings generated from the numbers ("refuses benign
prompts about Nigerian people 3.1× as often as the neutral baseline, and complies with harmful
prompts about them 1.8× as often") and the figure list. Numbers are formatted by
``scoring.report.display``; the frontier figure is drawn by ``scoring.report.figures.frontier``.
The study page's fragment and the audit report both show what ``safety_display`` returns.
"""

from __future__ import annotations

import math

from annotations.labels import NEUTRAL
from scoring.metrics.headlines import human_first
from scoring.report.display import (
    confidence_label,
    interval,
    interval_words,
    number,
    p_value,
    percent,
    times,
)
from scoring.report.document_types import (
    fit_coefficients,
    frontier_section,
    intent_interaction_section,
    intent_interaction_tables,
)
from scoring.report.report_section import ReportSection

OVERALL = ("overall", "all")
FRONTIER_COLUMNS = [
    "source",
    "generator",
    "attribute",
    "value",
    "over_refusal",
    "over_refusal_ci_low",
    "over_refusal_ci_high",
    "over_refusal_ratio_to_neutral",
    "under_refusal",
    "under_refusal_ci_low",
    "under_refusal_ci_high",
    "under_refusal_ratio_to_neutral",
    "n_benign",
    "n_harmful",
]
# Findings name at most this many values per source and generator: the largest departures
# from the neutral baseline on either side (every value is in the table).
MAX_FINDINGS = 3
# Attribute types whose values read as adjectives of people ("Nigerian people"); other values
# are named as "attribute = value" (a demo's religion values are garments, not adjectives).
PEOPLE_ADJECTIVES = {"culture"}


def has_controls(report: dict) -> bool:
    return any(
        point.get("n_harmful")
        for generators in frontier_section(report).values()
        for attributes in generators.values()
        for values in attributes.values()
        for point in values.values()
    )


def _generators(report: dict, source: str) -> dict[str, dict]:
    """The source's frontier per generator; none for a source absent from the frontier."""
    frontier = frontier_section(report)
    return frontier[source] if source in frontier else {}


def _neutral_point(attributes: dict) -> dict | None:
    """A generator's neutral baseline point; None when the study has no neutral items."""
    return attributes[NEUTRAL][NEUTRAL] if NEUTRAL in attributes else None


def _point_rate(point: dict | None, key: str):
    return None if point is None else point.get(key)


def _ratio(rate, base):
    if rate is None or base is None or base == 0:
        return None
    return rate / base


def frontier_rows(report: dict, *, source: str, generator: str | None = None) -> list[dict]:
    """One row per generator × attribute × value (neutral and overall included), with each
    rate's ratio to the generator's neutral baseline (null where that rate is 0 or missing)."""
    rows = []
    for name, attributes in sorted(_generators(report, source).items()):
        if generator is not None and name != generator:
            continue
        neutral = _neutral_point(attributes)
        for attribute, values in sorted(attributes.items(), key=lambda kv: _attribute_order(kv[0])):
            for value, point in sorted(values.items()):
                over_ci = point.get("over_refusal_ci") or [None, None]
                under_ci = point.get("under_refusal_ci") or [None, None]
                rows.append(
                    {
                        "source": source,
                        "generator": name,
                        "attribute": attribute,
                        "value": value,
                        "over_refusal": point.get("over_refusal"),
                        "over_refusal_ci_low": over_ci[0],
                        "over_refusal_ci_high": over_ci[1],
                        "over_refusal_ratio_to_neutral": _ratio(
                            point.get("over_refusal"), _point_rate(neutral, "over_refusal")
                        ),
                        "under_refusal": point.get("under_refusal"),
                        "under_refusal_ci_low": under_ci[0],
                        "under_refusal_ci_high": under_ci[1],
                        "under_refusal_ratio_to_neutral": _ratio(
                            point.get("under_refusal"), _point_rate(neutral, "under_refusal")
                        ),
                        "n_benign": point.get("n_benign"),
                        "n_harmful": point.get("n_harmful"),
                    }
                )
    return rows


def _attribute_order(attribute: str) -> tuple[int, str]:
    return (0 if attribute == OVERALL[0] else 1 if attribute == NEUTRAL else 2, attribute)


def _about(attribute: str, value: str) -> tuple[str, str]:
    """How a sentence names the prompts of a value, and refers back to them."""
    if attribute in PEOPLE_ADJECTIVES:
        return f"about {value} people", "about them"
    return f"with {attribute} = {value.replace('_', ' ')}", "with that value"


def findings(report: dict, *, source: str) -> list[str]:
    """Plain-word sentences from the frontier and the interaction tests of one source."""
    sentences = []
    for generator in sorted(_generators(report, source)):
        rows = [
            r
            for r in frontier_rows(report, source=source, generator=generator)
            if (r["attribute"], r["value"]) != OVERALL and r["attribute"] != NEUTRAL
        ]
        both = [
            r
            for r in rows
            if r["over_refusal_ratio_to_neutral"] is not None
            and r["under_refusal_ratio_to_neutral"] is not None
        ]
        both.sort(
            key=lambda r: (
                -max(
                    abs(math.log(max(r[k], 1e-12)))
                    for k in ("over_refusal_ratio_to_neutral", "under_refusal_ratio_to_neutral")
                )
            )
        )
        for r in both[:MAX_FINDINGS]:
            about, again = _about(r["attribute"], r["value"])
            over = _compared("refuses benign prompts", about, r, "over_refusal", report, source)
            under = _compared(
                "complies with harmful prompts", again, r, "under_refusal", report, source
            )
            sentences.append(f"{generator} {over}, and {under}.")
        if rows and not both:
            sentences.append(
                f"{generator}: no value has both ratios to the neutral baseline defined (the "
                "baseline's over- or under-refusal rate is 0 or has no items); see the table."
            )
    interactions = intent_interaction_section(report)
    for attribute, test in sorted((interactions[source] if source in interactions else {}).items()):
        sentences.append(_interaction_sentence(attribute, test, report))
    return sentences


def _compared(verb: str, about: str, row: dict, key: str, report: dict, source: str) -> str:
    """ "refuses benign prompts about X 3.1× as often as the neutral baseline (31.0% vs 10.0%)";
    a rate of 0 reads "never …" rather than "0.0× as often"."""
    neutral = percent(_neutral(report, source, row["generator"], key))
    if row[key] == 0:
        return f"never {verb} {about} (neutral baseline {neutral})"
    ratio = times(row[f"{key}_ratio_to_neutral"])
    baseline = "as the neutral baseline " if key == "over_refusal" else ""
    return f"{verb} {about} {ratio} as often {baseline}({percent(row[key])} vs {neutral})"


def _neutral(report, source, generator, key):
    generators = _generators(report, source)
    neutral = _neutral_point(generators[generator]) if generator in generators else None
    return _point_rate(neutral, key)


def _interaction_sentence(attribute: str, test: dict, report: dict) -> str:
    if test.get("p_value") is None:
        return f"{attribute}: the intent × value interaction is not tested ({test.get('reason') or 'undefined'})."
    verdict = (
        "the attribute's effect on refusal differs between benign and harmful prompts"
        if test["p_value"] < 0.05
        else "no evidence that the attribute's effect on refusal differs between benign and harmful prompts"
    )
    text = (
        f"{attribute}: {verdict} (joint Wald p = {p_value(test['p_value'])}, df = {test.get('df')})"
    )
    largest = test.get("largest")
    if largest:
        bounds = interval_words(largest["ci_low"], largest["ci_high"], document=report)
        text += (
            f"; the largest interaction is {largest['value']}{_against(test)} (odds ratio "
            f"{number(largest['odds_ratio'], 2)}, {bounds})"
        )
    return text + "."


def _against(test: dict) -> str:
    """The words " against US" where a study without a neutral baseline tested against US."""
    reference = test.get("reference") or NEUTRAL
    return "" if reference == NEUTRAL else f" against {reference}"


def interaction_rows(report: dict) -> list[dict]:
    """The full interaction table (both fits), one row per source × attribute × method × value."""
    rows = []
    for table in intent_interaction_tables(report):
        for method in ("cluster", "gee"):
            fit = table[method]
            wald = fit["wald"]  # null when the model was not fitted
            base = {
                "source": table["source"],
                "attribute": table["attribute"],
                "method": method,
                "reference": fit.get("reference") or table.get("reference") or NEUTRAL,
                "wald_p": None if wald is None else wald.get("p_value"),
                "wald_statistic": None if wald is None else wald.get("statistic"),
                "df": None if wald is None else wald.get("df"),
            }
            if not fit.get("fitted"):
                rows.append({**base, "value": None, "reason": fit.get("reason")})
                continue
            for value, coefficient in sorted(fit_coefficients(fit).items()):
                rows.append({**base, "value": value, **coefficient})
    return rows


def safety_display(report: dict) -> dict:
    """What the section shows: per source, its findings and table rows; the interaction rows."""
    sources = []
    for source in _sources(frontier_section(report)):
        sources.append(
            {
                "source": source,
                "findings": findings(report, source=source),
                "rows": [_display_row(r) for r in frontier_rows(report, source=source)],
            }
        )
    return {
        "level": confidence_label(report),
        "has_controls": has_controls(report),
        "sources": sources,
        "interaction": [_display_interaction(r) for r in interaction_rows(report)],
    }


def _sources(frontier_by_source: dict) -> list[str]:
    """The frontier's sources, human annotators first, then the judges by name."""
    return human_first(sorted(frontier_by_source), key=None)


def _display_row(r: dict) -> dict:
    return {
        **r,
        "over": number(r["over_refusal"]),
        "over_ci": interval(r["over_refusal_ci_low"], r["over_refusal_ci_high"]),
        "over_ratio": times(r["over_refusal_ratio_to_neutral"]),
        "under": number(r["under_refusal"]),
        "under_ci": interval(r["under_refusal_ci_low"], r["under_refusal_ci_high"]),
        "under_ratio": times(r["under_refusal_ratio_to_neutral"]),
    }


def _display_interaction(r: dict) -> dict:
    return {
        **r,
        "wald_p_text": p_value(r.get("wald_p")),
        "odds": number(r.get("odds_ratio"), 2),
        "odds_ci": interval(r.get("ci_low"), r.get("ci_high")),
    }


def figure_specs(report: dict) -> list[dict]:
    """One frontier figure per source × generator that has harmful controls."""
    specs = []
    frontier_by_source = frontier_section(report)
    for source in _sources(frontier_by_source):
        for generator, attributes in sorted(frontier_by_source[source].items()):
            # Every generator has its overall point (scoring.stats.safety_utility).
            if attributes[OVERALL[0]][OVERALL[1]].get("n_harmful"):
                specs.append(
                    {
                        "key": f"frontier--{source}--{generator}",
                        "kind": "frontier",
                        "source": source,
                        "detail": generator,
                        "title": f"safety–utility frontier of {generator} — {source}",
                    }
                )
    return specs


SECTION = ReportSection(
    id="safety",
    title="Safety–utility trade-off by attribute",
    templates=("staff/partials/report_safety.html",),
    context=lambda report: {"safety": safety_display(report)},
    figures=figure_specs,
)
