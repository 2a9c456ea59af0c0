"""The report's "Safety–utility trade-off by attribute" section (Django-free; docs/report.md).

Reads the finished report (``frontier``, ``intent_interaction``, ``rates``) and computes no
statistic: the table rows, the frontier figure per source × generator (matplotlib's
object-oriented API, ``scoring.report.plotting``), and plain-word findings generated from the numbers
("refuses benign prompts about Nigerian people 3.1× as often as the neutral baseline, and
complies with harmful prompts about them 1.8× as often"). The study page's fragment and the
audit report both show what ``safety_display`` returns.
"""

from __future__ import annotations

import math

from scoring.report import plotting
from scoring.report.display import number
from scoring.report.document_types import (
    fit_coefficients,
    frontier_section,
    intent_interaction_section,
    intent_interaction_tables,
)
from scoring.report.report_section import ReportSection

NEUTRAL = "neutral"
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


def _times(ratio: float) -> str:
    return f"{ratio:.1f}×"


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
        sentences.append(_interaction_sentence(attribute, test))
    return sentences


def _compared(verb: str, about: str, row: dict, key: str, report: dict, source: str) -> str:
    """ "refuses benign prompts about X 3.1× as often as the neutral baseline (31.0% vs 10.0%)";
    a rate of 0 reads "never …" rather than "0.0× as often"."""
    neutral = _percent(_neutral(report, source, row["generator"], key))
    if row[key] == 0:
        return f"never {verb} {about} (neutral baseline {neutral})"
    ratio = _times(row[f"{key}_ratio_to_neutral"])
    baseline = "as the neutral baseline " if key == "over_refusal" else ""
    return f"{verb} {about} {ratio} as often {baseline}({_percent(row[key])} vs {neutral})"


def _neutral(report, source, generator, key):
    generators = _generators(report, source)
    neutral = _neutral_point(generators[generator]) if generator in generators else None
    return _point_rate(neutral, key)


def _percent(rate) -> str:
    return "—" if rate is None else f"{100 * rate:.1f}%"


def _interaction_sentence(attribute: str, test: dict) -> str:
    if test.get("p_value") is None:
        return f"{attribute}: the intent × value interaction is not tested ({test.get('reason') or 'undefined'})."
    verdict = (
        "the attribute's effect on refusal differs between benign and harmful prompts"
        if test["p_value"] < 0.05
        else "no evidence that the attribute's effect on refusal differs between benign and harmful prompts"
    )
    text = f"{attribute}: {verdict} (joint Wald p = {_p(test['p_value'])}, df = {test.get('df')})"
    largest = test.get("largest")
    if largest:
        text += (
            f"; the largest interaction is {largest['value']} (odds ratio {largest['odds_ratio']:.2f}, "
            f"95% CI {largest['ci_low']:.2f}–{largest['ci_high']:.2f})"
        )
    return text + "."


def _p(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


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
    for source in _human_first(frontier_section(report)):
        sources.append(
            {
                "source": source,
                "findings": findings(report, source=source),
                "rows": [_display_row(r) for r in frontier_rows(report, source=source)],
            }
        )
    return {
        "has_controls": has_controls(report),
        "sources": sources,
        "interaction": [_display_interaction(r) for r in interaction_rows(report)],
    }


def _human_first(sources) -> list[str]:
    return sorted(sources, key=lambda source: (source != "human", source))


def _ci(low, high):
    return "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"


def _display_row(r: dict) -> dict:
    return {
        **r,
        "over": number(r["over_refusal"]),
        "over_ci": _ci(r["over_refusal_ci_low"], r["over_refusal_ci_high"]),
        "over_ratio": "—"
        if r["over_refusal_ratio_to_neutral"] is None
        else _times(r["over_refusal_ratio_to_neutral"]),
        "under": number(r["under_refusal"]),
        "under_ci": _ci(r["under_refusal_ci_low"], r["under_refusal_ci_high"]),
        "under_ratio": "—"
        if r["under_refusal_ratio_to_neutral"] is None
        else _times(r["under_refusal_ratio_to_neutral"]),
    }


def _display_interaction(r: dict) -> dict:
    return {
        **r,
        "wald_p_text": "—" if r.get("wald_p") is None else _p(r["wald_p"]),
        "odds": number(r.get("odds_ratio"), 2),
        "odds_ci": _ci(r.get("ci_low"), r.get("ci_high")),
    }


# --- the frontier figure --------------------------------------------------------------------


def figure_specs(report: dict) -> list[dict]:
    """One frontier figure per source × generator that has harmful controls."""
    specs = []
    frontier_by_source = frontier_section(report)
    for source in _human_first(frontier_by_source):
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


def frontier_image(report: dict, spec: dict, fmt: str) -> bytes:
    """Over-refusal (x) against under-refusal (y) of every attribute value of one generator,
    Wilson intervals both ways, the neutral baseline as a star, and the line through every
    generator's overall point (this one's marked). Lower-left is better on both counts."""
    source, generator = spec["source"], spec["detail"]
    rows = frontier_rows(report, source=source)
    fig = plotting.new_figure(figsize=(7.2, 5.0))
    ax = fig.subplots()
    attributes = sorted(
        {r["attribute"] for r in rows if r["generator"] == generator} - {NEUTRAL, OVERALL[0]}
    )
    colours = {attribute: f"C{index % 10}" for index, attribute in enumerate(attributes)}
    # Both axes from 0 to just past the largest interval, so a study whose rates stay low is
    # not squeezed into a corner; never past 1.
    shown = [
        r for r in rows if r["generator"] == generator or (r["attribute"], r["value"]) == OVERALL
    ]
    x_top, y_top = _axis_top(shown, "over_refusal"), _axis_top(shown, "under_refusal")
    labels = _Labels(ax, x_span=x_top + 0.02, y_span=y_top + 0.02)
    for r in rows:
        if r["generator"] != generator or r["over_refusal"] is None or r["under_refusal"] is None:
            continue
        x, y = r["over_refusal"], r["under_refusal"]
        if r["attribute"] == OVERALL[0]:
            continue
        is_neutral = r["attribute"] == NEUTRAL
        colour = "black" if is_neutral else colours[r["attribute"]]
        ax.errorbar(
            x,
            y,
            xerr=_err(x, r["over_refusal_ci_low"], r["over_refusal_ci_high"]),
            yerr=_err(y, r["under_refusal_ci_low"], r["under_refusal_ci_high"]),
            fmt="*" if is_neutral else "o",
            color=colour,
            markersize=11 if is_neutral else 5,
            elinewidth=0.6,
            alpha=0.85,
            capsize=0,
        )
        labels.add("neutral baseline" if is_neutral else r["value"], x, y, colour)
    overall = sorted(
        (
            r
            for r in rows
            if (r["attribute"], r["value"]) == OVERALL
            and r["over_refusal"] is not None
            and r["under_refusal"] is not None
        ),
        key=lambda r: r["over_refusal"],
    )
    if overall:
        ax.plot(
            [r["over_refusal"] for r in overall],
            [r["under_refusal"] for r in overall],
            color="0.45",
            linewidth=1.0,
            linestyle="-",
            zorder=1,
        )
        for r in overall:
            mine = r["generator"] == generator
            ax.plot(
                r["over_refusal"],
                r["under_refusal"],
                "s",
                color="black" if mine else "0.6",
                markersize=7 if mine else 5,
                zorder=3,
            )
            labels.add(
                f"{r['generator']} (all)",
                r["over_refusal"],
                r["under_refusal"],
                "black" if mine else "0.45",
            )
    labels.draw()
    handles = [_legend_handle(colours[a], a) for a in attributes]
    handles += [
        _legend_handle("black", "neutral baseline", marker="*"),
        _legend_handle("0.45", "generators overall", marker="s"),
    ]
    ax.legend(
        handles=handles, fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False
    )
    # Both axes from 0 to just past the largest interval, so a study whose rates stay low is
    # not squeezed into a corner; never past 1.
    shown = [
        r for r in rows if r["generator"] == generator or (r["attribute"], r["value"]) == OVERALL
    ]
    ax.set_xlim(-0.02, _axis_top(shown, "over_refusal"))
    ax.set_ylim(-0.02, _axis_top(shown, "under_refusal"))
    ax.set_xlabel(
        plotting.plain_text("over-refusal: refusal rate on benign prompts (95% Wilson CI)"),
        fontsize=7.5,
    )
    ax.set_ylabel(
        plotting.plain_text("under-refusal: compliance rate on harmful prompts (95% Wilson CI)"),
        fontsize=7.5,
    )
    ax.tick_params(labelsize=7)
    ax.grid(True, linewidth=0.3, color="0.85")
    ax.set_title(plotting.plain_text(spec["title"] + " (lower left is better)"), fontsize=9)
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)


class _Labels:
    """Point labels that do not print over each other: labels of points at the same place are
    joined ("hijab, white cane"), and a label whose text would run into one already placed
    moves up a line (as many as it takes)."""

    LINE_POINTS = 8
    # A character at 6.5 pt, the label's offset, and a line of labels, as shares of the axes
    # (this figure's axes are about 390 × 300 points).
    CHAR_SHARE, OFFSET_SHARE, LINE_SHARE = 0.0105, 0.011, 0.027

    def __init__(self, ax, *, x_span: float, y_span: float):
        self.ax = ax
        self.char_width, self.offset = self.CHAR_SHARE * x_span, self.OFFSET_SHARE * x_span
        self.line_height = self.LINE_SHARE * y_span
        self.points: dict[tuple[float, float], list[tuple[str, str]]] = {}

    def add(self, text: str, x: float, y: float, colour: str) -> None:
        self.points.setdefault((round(x, 6), round(y, 6)), []).append((text, colour))

    def draw(self) -> None:
        placed: list[tuple[float, float, float]] = []  # left, right, baseline of each label
        for (x, y), entries in sorted(self.points.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            text = ", ".join(label for label, _ in entries)
            left = x + self.offset
            right = left + self.char_width * len(text)
            line = 0
            while any(
                abs(y + line * self.line_height - baseline) < self.line_height
                and left < other_right
                and other_left < right
                for other_left, other_right, baseline in placed
            ):
                line += 1
            colour = entries[0][1] if len({c for _, c in entries}) == 1 else "0.25"
            self.ax.annotate(
                plotting.plain_text(text),
                (x, y),
                xytext=(4, 3 + line * self.LINE_POINTS),
                textcoords="offset points",
                fontsize=6.5,
                color=colour,
            )
            placed.append((left, right, y + line * self.line_height))


def _axis_top(rows: list[dict], key: str) -> float:
    highs = [r[f"{key}_ci_high"] if r[f"{key}_ci_high"] is not None else r[key] for r in rows]
    highs = [h for h in highs if h is not None]
    return min(1.02, max([0.1, *highs]) * 1.08 + 0.02)


def _err(centre, low, high):
    if low is None or high is None:
        return None
    return [[max(centre - low, 0.0)], [max(high - centre, 0.0)]]


def _legend_handle(colour, label, marker="o"):
    from matplotlib.lines import Line2D

    return Line2D(
        [], [], color=colour, marker=marker, linestyle="", label=plotting.plain_text(label)
    )


SECTION = ReportSection(
    id="safety",
    title="Safety–utility trade-off by attribute",
    templates=("staff/partials/report_safety.html",),
    context=lambda report: {"safety": safety_display(report)},
    figures=figure_specs,
)
