"""The authentication backend: Django's model backend, loading the annotator with the user.

Every survey request needs both the user and their annotator profile; one joined query
instead of two is a measurable share of a request on a small server (docs/performance.md).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class UserWithAnnotatorBackend(ModelBackend):
    def get_user(self, user_id):
        user_model = get_user_model()
        try:
            user = user_model._default_manager.select_related("annotator").get(pk=user_id)
        except user_model.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None
