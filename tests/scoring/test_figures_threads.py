"""Every figure of a study's report renders from 8 threads at once with 0 errors, also when its
labels carry mathtext characters (gunicorn's threaded workers gave HTTP 500: a mathtext
ParseException inside tight_layout, always on a log-scale odds-ratio figure)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from scoring.report.charts import rates_bar_chart
from scoring.report.dataset import audit_report
from scoring.report.figures import figure_image, figure_list
from scoring.report.roc import roc_chart
from scoring.stats.synthetic_study import synthetic_study

# Labels a study may well hold: a price, a TeX-looking name, an underscore, a caret.
AWKWARD = {"US": "US $5 budget $", "Indian": "Indian_\\alpha^2", "female": "female {50%}"}


@pytest.fixture(scope="module")
def report():
    annotations, judgments = synthetic_study(n_items=360, n_annotated_items=120, overlap=2, seed=5)
    for frame in (annotations, judgments):
        frame["attribute_value"] = frame["attribute_value"].replace(AWKWARD)
    return audit_report(
        annotations,
        judgments,
        study={"slug": "threads", "name": "Threads $ study", "synthetic_demo": True},
        n_resamples=50,
        n_permutations=50,
        seed=3,
    )


def test_all_figures_render_from_eight_threads_at_once_with_no_error(report):
    specs = figure_list(report)
    assert any(spec["kind"] == "odds" for spec in specs)
    start = threading.Barrier(8)
    roc = [
        {
            "label": "gen $1",
            "points": [{"fpr": 0, "tpr": 0}, {"fpr": 0.5, "tpr": 0.8}, {"fpr": 1, "tpr": 1}],
        }
    ]

    def render_all(worker: int) -> list[str]:
        start.wait()
        errors = []
        fmt = ("svg", "png")[worker // 2 % 2]
        # Each thread starts at a different figure, so different kinds overlap in time. Even
        # threads take the report's path (figure_image); odd ones draw the dashboard's rate
        # charts and the ROC chart directly, beside them.
        for spec in specs[worker % len(specs) :] + specs[: worker % len(specs)]:
            try:
                if worker % 2 == 0:
                    image = figure_image(report, spec, fmt)
                elif spec["kind"] == "rates":
                    image = rates_bar_chart(
                        report, source=spec["source"], measure=spec["detail"], fmt=fmt
                    )
                else:
                    image = roc_chart(roc, title="ROC $ threshold", fmt=fmt)
                assert image.startswith(b"\x89PNG" if fmt == "png" else b"<?xml")
            except Exception as exc:  # noqa: BLE001 - the test counts every kind of failure
                errors.append(f"{spec['key']}.{fmt}: {type(exc).__name__}: {exc}")
        return errors

    with ThreadPoolExecutor(max_workers=8) as pool:
        errors = [e for found in pool.map(render_all, range(8)) for e in found]
    assert errors == []


def test_dollar_signs_in_labels_are_drawn_as_text(report):
    spec = next(s for s in figure_list(report) if s["kind"] == "odds")
    svg = figure_image(report, spec, "svg").decode()
    assert "US $5 budget $" in svg
