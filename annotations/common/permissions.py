"""Who may see staff pages. Shared by every app's staff views: annotations is the bottom layer
(docs/architecture.md), so scoring and generation import it from here."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied


def staff_required(view):
    @login_required
    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_staff:
            raise PermissionDenied("staff only")
        return view(request, *args, **kwargs)

    return wrapped
