"""The REST API's pagination: DRF's limit/offset, bounded so no query string reaches the
database as a number it cannot hold (``?limit=999…`` was a 500; docs/deployment.md#security)."""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination

# Far past any study; small enough for every database's LIMIT / OFFSET.
LARGEST_OFFSET = 2**62


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = 10_000

    def get_offset(self, request):
        return min(super().get_offset(request), LARGEST_OFFSET)
