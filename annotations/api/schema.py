"""The OpenAPI schema view (/api/schema/), made one request at a time per process.

drf-spectacular loads its extensions lazily, on the first schema it generates, and that loading
is not thread-safe: in a fresh worker, concurrent first requests met a half-loaded extension
(``AttributeError: 'NoneType' object has no attribute 'startswith'``) and answered 500. A lock
around generation costs nothing that matters (staff only, rarely asked for) and closes the race
for every request after the first too.
"""

from __future__ import annotations

import threading

from drf_spectacular.views import SpectacularAPIView

_GENERATING = threading.Lock()


class SchemaView(SpectacularAPIView):
    def get(self, request, *args, **kwargs):
        with _GENERATING:
            return super().get(request, *args, **kwargs)
