"""The study page's design-validation fragment and its button (docs/annotation.md, "Staff
pages"). Thin: authenticate, read ``selectors`` / start through ``tasks``, render."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotations.common.permissions import staff_required
from annotations.models import Study
from scoring.design_validity import selectors, tasks
from scoring.stats.validity.core import QUICK_REPLICATIONS
from scoring.stats.validity.design_verdict import check_rows
from scoring.stats.validity.study_design import DEFAULT_SEED

TEMPLATE = "scoring/design_validity.html"


def _render(request, study: Study, *, status: int = 200):
    state = selectors.design_validation_state(study=study)
    result = state["latest"].params.get("result") if state["latest"] else None
    context = {
        "study": study,
        "open_job": state["open"],
        "latest": state["latest"],
        "result": result,
        "rows": check_rows(result) if result else [],
        "replications": QUICK_REPLICATIONS,
    }
    template = f"{TEMPLATE}#validity" if request.htmx else TEMPLATE
    return render(request, template, context, status=status)


@staff_required
@require_GET
def design_validity(request, slug: str):
    """The last result, the open job's progress (polled every second while it runs) and the
    button: a fragment for htmx (the study page loads it), a page without."""
    return _render(request, get_object_or_404(Study, slug=slug))


@staff_required
@require_POST
def design_validity_start(request, slug: str):
    """Queue a validation at the quick settings; while one is open, a click starts nothing."""
    study = get_object_or_404(Study, slug=slug)
    tasks.design_validation_enqueue(
        study=study, replications=QUICK_REPLICATIONS, seed=DEFAULT_SEED, created_by=request.user
    )
    if request.htmx:
        return _render(request, study)
    return redirect("design_validity:design_validity", slug=study.slug)
