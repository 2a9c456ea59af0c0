"""The ROC curve of a refusal-threshold calibration as a figure or table rows (Django-free).

Points are ``{"fpr", "tpr", "threshold"}`` dicts as ``scoring.judges.calibration`` returns
them; matplotlib is imported inside the function so the web app starts without loading it; drawn
without pyplot (``scoring.report.plotting``).
"""

from __future__ import annotations

from scoring.report import plotting

ROC_COLUMNS = ["generator", "fpr", "tpr", "threshold"]


def roc_rows(curves: list[dict]) -> list[dict]:
    """One row per point: ``curves`` are ``{"label", "points"}`` dicts."""
    return [
        {"generator": curve["label"], **{key: point.get(key) for key in ROC_COLUMNS[1:]}}
        for curve in curves
        for point in curve["points"]
    ]


def roc_chart(curves: list[dict], *, title: str = "ROC", fmt: str = "svg") -> bytes:
    """Each curve (``label``, ``points``, optional ``legend`` text and ``chosen``: the chosen
    point's fpr/tpr) on one chart, with the chance diagonal."""
    fig = plotting.new_figure(figsize=(4.8, 4.4))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], linestyle=":", color="grey", linewidth=1, label="chance")
    for index, curve in enumerate(curves):
        colour = f"C{index % 10}"
        points = curve["points"]
        ax.plot(
            [p["fpr"] for p in points],
            [p["tpr"] for p in points],
            color=colour,
            marker=".",
            label=plotting.plain_text(curve.get("legend", curve["label"])),
        )
        chosen = curve.get("chosen")
        if chosen:
            ax.plot([chosen["fpr"]], [chosen["tpr"]], marker="o", color=colour)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("false-positive rate")
    ax.set_ylabel("true-positive rate (recall)")
    ax.set_title(plotting.plain_text(title), fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return plotting.figure_bytes(fig, fmt)
