"""HTTP helpers shared by every app's staff views (annotations is the bottom layer)."""

from __future__ import annotations

from django.http import HttpResponse


def download_response(body: str | bytes, filename: str, content_type: str) -> HttpResponse:
    """``body`` as a file download named ``filename``."""
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
