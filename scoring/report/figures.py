"""Figures of the audit report and the rows behind each (Django-free; docs/report.md).

Three kinds, all drawn from the report dict: rates per attribute value with Wilson intervals
(``scoring.report.charts.rates_bar_chart``, the dashboard's chart), Δ per measure × attribute type with
its bootstrap CI (one per source), and odds ratios with CIs from both regression variants (one
per source × outcome). Every figure's data is a list of rows the CSV download writes as is.
"""

from __future__ import annotations

from scoring import plotting
from scoring.report import charts

DELTA_COLUMNS = [
    "source", "measure", "attribute", "delta", "delta_ci_low", "delta_ci_high", "max_value",
    "min_value", "permutation_p", "permutation_p_holm", "flagged", "n",
]  # fmt: skip
ODDS_COLUMNS = [
    "source", "outcome", "attribute", "reference", "value", "method", "beta", "standard_error", "odds_ratio",
    "ci_low", "ci_high", "p_value", "reason",
]  # fmt: skip


def figure_list(report: dict) -> list[dict]:
    """Every figure of the report: ``key`` (URL-safe name), ``title``, ``kind`` and parameters."""
    out = []
    for source in sorted(report["rates"]):
        for measure in charts.MEASURES:
            if report["rates"][source].get(measure):
                out.append(_spec("rates", source, measure, f"{measure} rate by value — {source}"))
        if any(row["source"] == source for row in report["disparities"]):
            out.append(_spec("delta", source, "all", f"Δ with 95% CI by measure — {source}"))
        for outcome in ("refusal", "erasure"):
            if any(t["source"] == source and t["outcome"] == outcome for t in report["regression"]):
                out.append(_spec("odds", source, outcome, f"odds ratios of {outcome} — {source}"))
    return out


def _spec(kind: str, source: str, detail: str, title: str) -> dict:
    return {"key": f"{kind}--{source}--{detail}", "kind": kind, "source": source,
            "detail": detail, "title": title}  # fmt: skip


def figure_spec(report: dict, key: str) -> dict | None:
    return next((spec for spec in figure_list(report) if spec["key"] == key), None)


def figure_rows(report: dict, spec: dict) -> tuple[list[dict], list[str]]:
    """The rows a figure draws, and their CSV columns."""
    if spec["kind"] == "rates":
        rows = charts.rate_rows(report, source=spec["source"], measure=spec["detail"])
        return rows, charts.RATE_COLUMNS
    if spec["kind"] == "delta":
        rows = [r for r in report["disparities"] if r["source"] == spec["source"]]
        return [{c: r.get(c) for c in DELTA_COLUMNS} for r in rows], DELTA_COLUMNS
    return odds_rows(report, source=spec["source"], outcome=spec["detail"]), ODDS_COLUMNS


def odds_rows(report: dict, *, source: str, outcome: str) -> list[dict]:
    rows = []
    for table in report["regression"]:
        if table["source"] != source or table["outcome"] != outcome:
            continue
        for method in ("cluster", "gee"):
            fit = table[method]
            base = {"source": source, "outcome": outcome, "attribute": table["attribute"],
                    "reference": table["reference"], "method": method}  # fmt: skip
            if not fit.get("fitted"):
                rows.append({**base, "value": None, "reason": fit.get("reason")})
            for value, coefficient in sorted(fit.get("coefficients", {}).items()):
                rows.append({**base, "value": value, **coefficient})
    return rows


def figure_image(report: dict, spec: dict, fmt: str = "svg") -> bytes:
    """The figure as SVG or PNG bytes; SVG text stays text, so inlined figures share no glyph ids."""
    with plotting.figure_rc({"svg.fonttype": "none", "svg.hashsalt": spec["key"]}):
        return _draw(report, spec, fmt)


def _draw(report: dict, spec: dict, fmt: str) -> bytes:
    if spec["kind"] == "rates":
        return charts.rates_bar_chart(
            report, source=spec["source"], measure=spec["detail"], fmt=fmt
        )
    rows, _ = figure_rows(report, spec)
    if spec["kind"] == "delta":
        return _forest(
            [(f"{r['measure']} · {r['attribute']}", r["delta"], r["delta_ci_low"],
              r["delta_ci_high"], "C3" if r["flagged"] else "C0") for r in rows],
            xlabel="Δ = max − min rate (95% cluster-bootstrap CI; red: flagged)",
            title=spec["title"], null=0.0, log=False, fmt=fmt,
        )  # fmt: skip
    marks = {"cluster": "C0", "gee": "C1"}
    points = [
        (f"{r['attribute']}: {r['value']} vs {r['reference']} ({r['method']})", r["odds_ratio"],
         r["ci_low"], r["ci_high"], marks[r["method"]])
        for r in rows if r.get("odds_ratio") is not None
    ]  # fmt: skip
    return _forest(points, xlabel="odds ratio (95% CI, log scale; blue: cluster-robust, orange: GEE)",
                   title=spec["title"], null=1.0, log=True, fmt=fmt)  # fmt: skip


def _forest(points, *, xlabel: str, title: str, null: float, log: bool, fmt: str) -> bytes:
    points = [p for p in points if p[1] is not None]
    fig = plotting.new_figure(figsize=(7.5, max(2.2, 0.24 * len(points) + 1.2)))
    ax = fig.subplots()
    if not points:
        ax.text(0.5, 0.5, "nothing defined to plot", ha="center", va="center",
                transform=ax.transAxes)  # fmt: skip
        ax.set_axis_off()
    else:
        for y, (_, value, low, high, colour) in enumerate(reversed(points)):
            low = value if low is None else low
            high = value if high is None else high
            # A line from low to high, not error bars: a percentile CI need not contain the
            # point estimate (Δ's bootstrap distribution is biased upward).
            ax.hlines(y, low, high, color=colour, linewidth=1.2)
            ax.plot([value], [y], "o", color=colour, markersize=4)
        ax.axvline(null, color="0.5", linewidth=0.8, linestyle="--")
        labels = [plotting.plain_text(p[0]) for p in reversed(points)]
        ax.set_yticks(range(len(points)), labels, fontsize=7)
        if log:
            ax.set_xscale("log")
            plotting.plain_log_ticks(ax.xaxis)
        ax.set_xlabel(plotting.plain_text(xlabel), fontsize=8)
        ax.set_title(plotting.plain_text(title), fontsize=9)
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)


def inline_svg(image: bytes) -> str:
    """An SVG document as markup to place inside HTML (without its XML prologue)."""
    text = image.decode("utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text
