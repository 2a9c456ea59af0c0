"""Figures drawn from a metrics document (Django-free): rates with CI error bars.

matplotlib is imported inside the functions so the web app starts without loading it; figures
are drawn without pyplot (``scoring.report.plotting``: safe in threaded views).
"""

from __future__ import annotations

import textwrap

from scoring.report import plotting
from scoring.report.display import confidence_label

MEASURES = ("refusal", "erasure", "substitution", "combined")
TITLE_CHARS = 90  # a 12-pt title line across the plot of an 11-inch figure
# n counts labels; n_items the items behind them, n_effective what the interval rests on.
RATE_COLUMNS = [
    *("source", "measure", "attribute", "value"),
    *("n", "n_items", "n_effective", "rate", "ci_low", "ci_high"),
]


def rate_rows(metrics: dict, *, source: str, measure: str) -> list[dict]:
    """Flatten ``rates.<source>.<measure>.<attribute>.values.<value>`` into table rows."""
    by_attribute = metrics["rates"][source][measure]
    rows = []
    for attribute in sorted(by_attribute):
        for value, cell in sorted(by_attribute[attribute]["values"].items()):
            rows.append(
                {
                    "source": source,
                    "measure": measure,
                    "attribute": attribute,
                    "value": value,
                    "n": cell.get("n"),
                    "n_items": cell.get("n_items"),
                    "n_effective": cell.get("n_effective"),
                    "rate": cell.get("rate"),
                    "ci_low": cell.get("ci_low"),
                    "ci_high": cell.get("ci_high"),
                }
            )
    return rows


def rates_bar_chart(metrics: dict, *, source: str, measure: str, fmt: str = "svg") -> bytes:
    """A bar per attribute value (grouped by attribute) with its interval as an error bar, at
    the document's confidence level."""
    return interval_bar_chart(
        rate_rows(metrics, source=source, measure=measure),
        title=f"{measure} rate by attribute value — {source}",
        ylabel=f"{measure} rate ({confidence_label(metrics)} CI)",
        empty="no defined rates yet",
        fmt=fmt,
    )


def interval_bar_chart(
    rows: list[dict],
    *,
    title: str,
    ylabel: str,
    empty: str = "no defined values",
    ylim: tuple[float, float] | None = (0.0, 1.0),
    reference: float | None = None,
    fmt: str = "svg",
) -> bytes:
    """A bar per row (``value`` its label, ``rate`` its height, ``ci_low``/``ci_high`` its
    interval as an error bar), coloured by ``attribute``; rows without a value are left out.
    ``ylim=None`` scales to the data; ``reference`` draws a dashed line (e.g. 0.5, 0)."""
    rows = [r for r in rows if r["rate"] is not None]
    # Drawn for a full-width slot (about 1,200 px): 11-pt labels stay legible when scaled.
    fig = plotting.new_figure(figsize=(max(11.0, 0.4 * len(rows) + 3), 4.2))
    ax = fig.subplots()
    if not rows:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    else:
        _draw_bars(ax, rows, ylim=ylim)
        if reference is not None:
            ax.axhline(reference, color="0.4", linewidth=0.8, linestyle="--")
        ax.set_ylabel(plotting.plain_text(ylabel), fontsize=11)
        # A long title (the paper's Figure 4 views) wraps instead of running off the figure.
        ax.set_title(plotting.plain_text(textwrap.fill(title, TITLE_CHARS)), fontsize=12)
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)


def _draw_bars(ax, rows, *, ylim=(0.0, 1.0)):
    attributes = sorted({r["attribute"] for r in rows})
    palette = {a: f"C{i % 10}" for i, a in enumerate(attributes)}
    x = range(len(rows))
    rates = [r["rate"] for r in rows]
    # Whiskers only for an interval that contains the estimate: a percentile bootstrap interval
    # need not (the tables print it as computed), and a negative whisker cannot be drawn.
    spans = [_whisker(r) for r in rows]
    lower, upper = [low for low, _ in spans], [high for _, high in spans]
    ax.bar(x, rates, color=[palette[r["attribute"]] for r in rows], yerr=[lower, upper], capsize=3)
    labels = [plotting.plain_text(r["value"]) for r in rows]
    ax.set_xticks(list(x), labels, rotation=30, ha="right", fontsize=11)
    ax.tick_params(axis="y", labelsize=11)
    if ylim is not None:
        ax.set_ylim(*ylim)
    handles = [matplotlib_patch(palette[a], plotting.plain_text(a)) for a in attributes]
    # Outside the axes, to the right: inside, bars reaching 1.0 (win rates, say) sit under it.
    ax.legend(handles=handles, fontsize=10, loc="upper left", bbox_to_anchor=(1.005, 1.0))


def _whisker(row: dict) -> tuple[float, float]:
    rate, low, high = row["rate"], row["ci_low"], row["ci_high"]
    if low is None or high is None or not low <= rate <= high:
        return 0.0, 0.0
    return rate - low, high - rate


def matplotlib_patch(color, label):
    from matplotlib.patches import Patch

    return Patch(color=color, label=label)
