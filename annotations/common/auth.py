"""The authentication backend: Django's model backend, loading the annotator with the user.

Every survey request needs both the user and their annotator profile; one joined query
instead of two is a measurable share of a request on a small server (docs/performance.md).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend

from annotations.common.compiled import CompiledQuery


class UserWithAnnotatorBackend(ModelBackend):
    def get_user(self, user_id):
        try:
            user_id = int(user_id)
        except (TypeError, ValueError):  # a session from another user model
            return None
        rows = _USER_WITH_ANNOTATOR(user_id=user_id)
        if not rows:
            return None
        return rows[0] if self.user_can_authenticate(rows[0]) else None


# Compiled once per process: every request runs it (common.compiled).
_USER_WITH_ANNOTATOR = CompiledQuery(
    lambda user_id: (
        get_user_model()._default_manager.select_related("annotator").filter(pk=user_id)
    ),
    values=("user_id",),
)
