"""Fixtures of the Django app, loaded by tests/conftest.py as a plugin where pytest-django is
installed: a small study with real image files, annotators, logged-in clients, eager Celery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from acrb_web.celery import app as celery_app


@pytest.fixture(autouse=True)
def _media_in_tmp(request, tmp_path):
    """Media and uploads of each test go to its own folder (Django-free tests skip this)."""
    if not request.config.pluginmanager.hasplugin("django"):
        return
    settings = request.getfixturevalue("settings")
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": str(tmp_path),
        }
    }
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher"
    ]  # speed only; tests need no strength
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()


@pytest.fixture(autouse=True)
def _eager_celery():
    """Tasks run in-process unless a test starts a real worker (tests/test_worker.py)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


def write_image(path: Path, colour=(120, 80, 40), size=(32, 32)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)
    return path


def manifest_line(
    item_id: str,
    *,
    image: str | None = None,
    attribute="culture",
    value="Korean",
    base="bp1",
    **extra,
) -> dict:
    line = {
        "item_id": item_id,
        "image": image,
        "mode": "t2i",
        "generator": "gen-a",
        "prompt": f"a {value} person cooking",
        "base_prompt_id": base,
        "domain": "food",
        "attribute": attribute,
        "attribute_value": value,
        "cue": f"{value} markers",
    }
    line.update(extra)
    return line


def write_manifest(folder: Path, lines: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def make_manifest(tmp_path):
    """Write n items with real PNGs (culture values cycling) and return the manifest path."""

    def build(n=6, values=("Korean", "Nigerian", "US"), judgments=True, folder="bundle"):
        root = tmp_path / folder
        lines = []
        for i in range(n):
            value = values[i % len(values)]
            write_image(root / "img" / f"{i}.png", colour=(i * 20 % 255, 100, 150))
            extra = {}
            if judgments:
                extra["judgments"] = [
                    {
                        "judge": "vlm-a@1",
                        "hard_refusal": i % 5 == 0,
                        "cue": None if i % 5 == 0 else "retained",
                        "confidence": 0.9,
                    }
                ]
            lines.append(
                manifest_line(
                    f"item-{i}",
                    image=f"img/{i}.png",
                    value=value,
                    base=f"bp{i // len(values)}",
                    **extra,
                )
            )
        return write_manifest(root, lines)

    return build


@pytest.fixture
def study(db):
    from annotations import services

    return services.study_create(
        name="Test study", slug="test-study", overlap_k=2, min_seconds_per_item=0.0
    )


@pytest.fixture
def imported_study(study, make_manifest):
    from annotations.imports import importers

    importers.items_import(study=study, manifest=make_manifest())
    return study


@pytest.fixture
def annotators(db):
    from annotations import services

    return [
        services.annotator_create(username=f"ann{i}", group=group, password="pw-for-tests-1")
        for i, group in enumerate(["Korean", "Nigerian", "US", ""])
    ]


@pytest.fixture
def batch(imported_study, annotators):
    from annotations import services

    return services.batch_create(
        request=services.batch_request_build(
            study=imported_study,
            name="b1",
            policy="k_overlap",
            annotators=annotators[:2],
            overlap_k=2,
            seed=1,
        )
    )


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user(
        username="staff", password="pw-for-tests-1", is_staff=True
    )


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


def client_for(annotator, client_class=None):
    from django.test import Client

    c = (client_class or Client)()
    c.force_login(annotator.user)
    return c
