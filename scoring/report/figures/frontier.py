"""The safety–utility frontier figure of the report's safety section (Django-free; docs/report.md,
"Safety–utility trade-off by attribute"): over-refusal against under-refusal of every attribute
value of one generator, drawn from ``scoring.report.safety.frontier_rows``.
"""

from __future__ import annotations

from annotations.labels import NEUTRAL
from scoring.report import plotting
from scoring.report.display import confidence_label
from scoring.report.safety import OVERALL, frontier_rows


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
    ax.set_xlim(-0.02, x_top)
    ax.set_ylim(-0.02, y_top)
    level = confidence_label(report)
    ax.set_xlabel(
        plotting.plain_text(f"over-refusal: refusal rate on benign prompts ({level} Wilson CI)"),
        fontsize=7.5,
    )
    ax.set_ylabel(
        plotting.plain_text(
            f"under-refusal: compliance rate on harmful prompts ({level} Wilson CI)"
        ),
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
