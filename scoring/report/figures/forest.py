"""Forest plots of the study report (Django-free; docs/report.md): Δ with the max/min ratio per
measure × attribute type, and the regression odds ratios of both fits with the raw counts. An
undefined estimate or interval is drawn as its reason, whole, never as a number.
"""

from __future__ import annotations

import textwrap

from scoring.report import plotting
from scoring.report.display import confidence_label

# Odds ratios are drawn on [1/ODDS_DISPLAY_LIMIT, ODDS_DISPLAY_LIMIT]; an interval reaching past
# it ends in an arrow at the edge, so a Woolf interval of [0.001, 1600] from a handful of events
# does not squash every other interval into a dot (the exact bounds are in the tables and CSV).
ODDS_DISPLAY_LIMIT = 100.0


def forest_point(label, value, low, high, *, colour="C0", note="", reason=""):
    """One row of a forest plot: the estimate, its interval (None: undefined), a note printed at
    the right (raw counts), and the reason when the estimate or its interval is undefined."""
    return {
        "label": label,
        "value": value,
        "low": low,
        "high": high,
        "colour": colour,
        "note": note,
        "reason": reason,
    }


def delta_and_ratio(rows: list[dict], title: str, fmt: str, *, level: str) -> bytes:
    """Δ (linear) and max/min ratio (log, clipped) side by side, one row per measure × attribute."""
    points: dict[str, list[dict]] = {"delta": [], "ratio": []}
    for r in rows:
        label = f"{r['measure']} · {r['attribute']}"
        colour = "C3" if r.get("flagged") else "C0"
        for name, column in points.items():
            column.append(
                forest_point(
                    label,
                    r.get(name),
                    r.get(f"{name}_ci_low"),
                    r.get(f"{name}_ci_high"),
                    colour=colour,
                    reason=r.get(f"{name}_reason") or _no_interval(r, name),
                )
            )
    deltas, ratios = points["delta"], points["ratio"]
    rows_y, height = row_positions(deltas, ratios, chars=REASON_CHARS_HALF)
    fig = plotting.new_figure(figsize=(8.0, max(2.4, ROW_INCHES * height + 1.4)))
    left, right = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [1.1, 1]})
    axis = {"rows_y": rows_y, "height": height, "chars": REASON_CHARS_HALF}
    _forest_axis(left, deltas, null=0.0, log=False, labels=True, **axis)
    left.set_xlabel(
        plotting.plain_text(f"Δ = max − min rate, {level} CI (red: flagged)"), fontsize=7
    )
    _forest_axis(right, ratios, null=1.0, log=True, labels=False, limit=ODDS_DISPLAY_LIMIT, **axis)
    right.set_xlabel(plotting.plain_text(f"ratio max / min rate, {level} CI (log)"), fontsize=7)
    fig.suptitle(plotting.plain_text(title), fontsize=9)
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)


def _no_interval(row: dict, name: str) -> str:
    if row.get(name) is None or row.get(f"{name}_ci_low") is not None:
        return ""
    return f"no interval: {row.get(f'{name}_ci_reason') or 'undefined'}"


def odds(report: dict, rows: list[dict], spec: dict, fmt: str) -> bytes:
    """Regression odds ratios (cluster-robust and GEE) with the raw counts of each value."""
    marks = {"cluster": "C0", "gee": "C1"}
    points = []
    for r in rows:
        if r.get("value") is None:
            label = f"{r['attribute']} ({r['method']})"
            points.append(forest_point(label, None, None, None, reason=r.get("reason") or ""))
            continue
        counts = _counts(report, spec["source"], spec["detail"], r["attribute"])
        note = f"{counts.get(r['value'], '?')} vs {counts.get(r['reference'], '?')}"
        points.append(
            forest_point(
                f"{r['attribute']}: {r['value']} vs {r['reference']} ({r['method']})",
                r.get("odds_ratio"),
                r.get("ci_low"),
                r.get("ci_high"),
                colour=marks[r["method"]],
                note=note,
                reason=r.get("reason") or "",
            )
        )
    rows_y, height = row_positions(points, chars=REASON_CHARS_FULL)
    fig = plotting.new_figure(figsize=(8.0, max(2.4, ROW_INCHES * height + 1.4)))
    ax = fig.subplots()
    _forest_axis(
        ax,
        points,
        null=1.0,
        log=True,
        labels=True,
        limit=ODDS_DISPLAY_LIMIT,
        notes=True,
        rows_y=rows_y,
        height=height,
        chars=REASON_CHARS_FULL,
    )
    ax.set_xlabel(
        plotting.plain_text(
            f"odds ratio, {confidence_label(report)} CI (log; blue: cluster-robust, orange: GEE); right: {spec['detail']} "
            "events / n of the value vs the reference"
        ),
        fontsize=7,
    )
    ax.set_title(plotting.plain_text(spec["title"]), fontsize=9)
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)


def _counts(report: dict, source: str, measure: str, attribute: str) -> dict[str, str]:
    """``value → "events/n"`` of one source × measure × attribute type, from the rates."""
    block = report["rates"][source][measure].get(attribute)  # None: no items of this type
    if block is None:
        return {}
    return {value: f"{cell['successes']}/{cell['n']}" for value, cell in block["values"].items()}


# A row is ROW_INCHES tall; a reason is drawn whole, wrapped at about as many characters as a
# 6-pt line holds across the panel, and its row grows to hold every line (docs/report.md:
# the figures never cut a reason short).
ROW_INCHES = 0.26
LINE_UNITS = 0.4  # one 6-pt line, in rows
REASON_CHARS_FULL, REASON_CHARS_HALF = 120, 60


def _reason_lines(point: dict, chars: int) -> list[str]:
    """The lines of the reason a point prints: why it is undefined, or has no interval."""
    if not point["reason"]:
        return []
    if point["value"] is None:
        return textwrap.wrap(f"undefined: {point['reason']}", chars)
    if point["low"] is None or point["high"] is None:
        return textwrap.wrap(point["reason"], chars)
    return []


def _extent(point: dict, chars: int) -> tuple[float, float]:
    """Room a row needs below and above its point: half a row, more for a wrapped reason (an
    undefined one centred on the row, a missing interval's above the point)."""
    lines = len(_reason_lines(point, chars))
    if point["value"] is None:
        half = max(0.5, LINE_UNITS * lines / 2 + 0.1)
        return half, half
    return 0.5, max(0.5, 0.15 + LINE_UNITS * lines + 0.05)


def row_positions(*columns: list[dict], chars: int) -> tuple[list[float], float]:
    """The y of each row (the first row on top) of panels that share their rows, and the total
    height, in rows."""
    extents = [
        [max(parts) for parts in zip(*(_extent(point, chars) for point in row), strict=True)]
        for row in zip(*columns, strict=True)
    ]
    positions, bottom = [], 0.0
    for below, above in reversed(extents):
        positions.append(bottom + below)
        bottom += below + above
    return positions[::-1], bottom


def _forest_axis(
    ax, points, *, null, log, labels, rows_y, height, chars, limit=None, notes=False
) -> None:
    """Draw ``forest_point`` rows top to bottom at ``rows_y``; undefined ones print their reason
    instead, a missing interval's reason above the point."""
    if not points:
        ax.text(0.5, 0.5, "nothing to plot", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    from matplotlib.transforms import blended_transform_factory

    text_at = blended_transform_factory(ax.transAxes, ax.transData)
    low_edge, high_edge = (1.0 / limit, limit) if limit else (None, None)
    for y, point in zip(rows_y, points, strict=True):
        value, low, high, colour = point["value"], point["low"], point["high"], point["colour"]
        if value is None:
            ax.text(
                0.02,
                y,
                plotting.plain_text("\n".join(_reason_lines(point, chars))),
                fontsize=6,
                va="center",
                color="0.35",
                transform=text_at,
            )
            continue
        shown = _clip(value, low_edge, high_edge)
        if low is not None and high is not None:
            # A line from low to high, not error bars: a percentile CI need not contain the point
            # estimate (Δ's bootstrap distribution is biased upward).
            ax.hlines(
                y,
                _clip(low, low_edge, high_edge),
                _clip(high, low_edge, high_edge),
                color=colour,
                linewidth=1.2,
            )
            if low_edge is not None and low < low_edge:
                ax.plot([low_edge], [y], marker="<", color=colour, markersize=5)
            if high_edge is not None and high > high_edge:
                ax.plot([high_edge], [y], marker=">", color=colour, markersize=5)
        elif point["reason"]:
            ax.text(
                0.98,
                y + 0.15,
                plotting.plain_text("\n".join(_reason_lines(point, chars))),
                fontsize=5.5,
                ha="right",
                va="bottom",
                color="0.35",
                transform=text_at,
            )
        ax.plot([shown], [y], "o" if shown == value else "D", color=colour, markersize=4)
        if notes and point["note"]:
            ax.text(
                1.01,
                y,
                plotting.plain_text(point["note"]),
                fontsize=6,
                va="center",
                transform=text_at,
                clip_on=False,
            )
    ax.axvline(null, color="0.5", linewidth=0.8, linestyle="--")
    ax.set_ylim(-0.2, height)
    if labels:
        ax.set_yticks(rows_y, [plotting.plain_text(p["label"]) for p in points], fontsize=7)
    if log:
        ax.set_xscale("log")
        if limit:
            ax.set_xlim(low_edge / 1.5, high_edge * 1.5)
        plotting.plain_log_ticks(ax.xaxis)
    ax.tick_params(axis="x", labelsize=7)


def _clip(value, low_edge, high_edge):
    if low_edge is None:
        return value
    return min(max(value, low_edge), high_edge)
