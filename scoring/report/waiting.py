"""The answer to a request for a slow file (``scoring.report.tasks.FileState``): the file once
made; until then a page that says since when it is being made and asks again by itself, with
htmx polling, or a refresh without JavaScript (docs/report.md, "Fresh figures and slow files")."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from scoring.report.tasks import FileState, PageDocuments

POLL_S = 2


def file_response_or_wait(
    request, state: FileState, *, filename: str, content_type: str, what: str
) -> HttpResponse:
    if state.data is not None and not request.htmx:
        response = HttpResponse(state.data, content_type=content_type)
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
    if state.data is not None:  # htmx's poll: the browser fetches the file itself
        response = HttpResponse(status=204)
        response["HX-Redirect"] = request.path
        return response
    if state.error is not None and not request.htmx:
        return HttpResponse(state.error, status=503, content_type="text/plain")
    waited = (
        None
        if state.making_since is None
        else max(0, int((timezone.now() - state.making_since).total_seconds()))
    )
    context = {"what": what, "error": state.error, "waited_s": waited, "poll_s": POLL_S}
    template = "report/file_wait.html"
    # 202: accepted, not made yet; htmx swaps only 2xx answers, so the fragment is a 200.
    if request.htmx:
        return render(request, f"{template}#status", context)
    return render(request, template, context, status=202)


def computing_response(request, *, study, documents: PageDocuments, target: str, what: str):
    """While a study's documents have never been computed: a placeholder that polls (htmx), or
    a page that refreshes itself (without JavaScript)."""
    context = {"study": study, "target": target, "what": what, "since": documents.computing_since}
    template = "scoring/computing.html"
    if request.htmx:
        return render(request, f"{template}#computing", context)
    return render(request, template, context, status=202)
