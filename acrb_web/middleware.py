"""No 500 on any input (docs/deployment.md#security).

``HostileInputMiddleware`` answers what a request cannot mean: an id in the URL past the
database's 64-bit integers is a 404 before any view runs, and a value the database refuses
for its type or range wherever it came from (a form id of 30 digits, a NUL byte: sqlite3's
OverflowError, PostgreSQL's DataError) is a 400 with one line, logged as one line.
"""

from __future__ import annotations

from django.db import DataError
from django.http import Http404, HttpResponseBadRequest

LARGEST_ID = 2**63 - 1


class HostileInputMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        for value in (*view_args, *view_kwargs.values()):
            if isinstance(value, int) and not -LARGEST_ID <= value <= LARGEST_ID:
                raise Http404("no such object")
        return None

    def process_exception(self, request, exception):
        # Django logs the 400 itself, as one line (acrb_web.logging).
        if isinstance(exception, (OverflowError, DataError)):
            return HttpResponseBadRequest("A value in the request is out of range or not allowed.")
        return None
