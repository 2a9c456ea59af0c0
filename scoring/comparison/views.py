"""The staff page "Compare models" and its JSON (docs/report.md, "Models side by side").

Thin: validate the choices, read ``selectors``, format with ``scoring.report.side_by_side``.
"""

from __future__ import annotations

import json

from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotations.common.http import download_response
from annotations.common.permissions import staff_required
from scoring.comparison import selectors
from scoring.comparison.forms import ComparisonForm
from scoring.report.side_by_side import side_by_side_display


@staff_required
@require_GET
def compare_models(request):
    """Choose studies (or one study's generators), two of them to compare and a label source;
    the page shows one source, ``?format=json`` downloads every source."""
    form = ComparisonForm(request.GET if "studies" in request.GET else None)
    context = {"form": form, "inputs": None, "tables": [], "document": None}
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        as_json = request.GET.get("format") == "json"
        try:
            inputs = selectors.comparison_inputs(studies=list(data["studies"]))
            context["inputs"] = inputs
            source = data["source"] or selectors.default_source(inputs)
            document = selectors.comparison_document(
                inputs,
                baseline=data["baseline"] or None,
                candidate=data["candidate"] or None,
                sources=None if as_json or source is None else [source],
            )
        except selectors.ComparisonError as error:
            form.add_error(None, str(error))
        else:
            if as_json:
                body = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False)
                return download_response(body, "model-comparison.json", "application/json")
            section = document["models_side_by_side"]
            context.update(
                document=document,
                section=section,
                source=source,
                tables=side_by_side_display(section),
            )
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "scoring/compare_models.html", context, status=status)
