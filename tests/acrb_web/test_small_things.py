"""Issue 21 §1.8: admin plurals and /favicon.ico."""

import re

import pytest
from django.apps import apps


def test_every_model_has_an_english_plural_in_the_admin():
    wrong = []
    for model in apps.get_models():
        singular, plural = str(model._meta.verbose_name), str(model._meta.verbose_name_plural)
        if re.search(r"[^aeiou]y$", singular) and plural == singular + "s":  # biographys
            wrong.append(plural)
        if re.search(r"(ch|sh|s|x|z)$", singular) and plural == singular + "s":  # batchs
            wrong.append(plural)
    assert not wrong


@pytest.mark.django_db
def test_favicon_is_served(client):
    response = client.get("/favicon.ico", follow=False)
    assert response.status_code == 301 and response["Location"].endswith("favicon.ico")
