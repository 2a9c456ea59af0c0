"""What a numbered section of the report declares (Django-free; docs/architecture.md, "a report
section"). Each section module holds one ``ReportSection``; ``scoring.report.sections`` lists
them in page order, and the table of contents, the template context and the figure list are
read from that list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


def always(report: dict) -> bool:
    return True


def no_context(report: dict) -> dict:
    return {}


def no_figures(report: dict) -> list[dict]:
    return []


@dataclass(frozen=True)
class ReportSection:
    """``id``: the anchor of its ``<h2>``; ``title``: its table-of-contents entry and, unless
    ``heading`` is longer, its heading (both numbered by position); ``templates``: the partials
    printed under the heading; ``present``: whether this report has the section; ``context``:
    the template variables its partials read; ``figures``: its figure specs (``figure_spec``)."""

    id: str
    title: str
    templates: tuple[str, ...]
    heading: str = ""
    present: Callable[[dict], bool] = always
    context: Callable[[dict], dict] = no_context
    figures: Callable[[dict], list[dict]] = no_figures


def figure_spec(kind: str, source: str, detail: str, title: str) -> dict:
    """A figure of the report: ``key`` (URL-safe name), ``kind``, ``source``, ``detail``, ``title``."""
    return {
        "key": f"{kind}--{source}--{detail}",
        "kind": kind,
        "source": source,
        "detail": detail,
        "title": title,
    }
