"""Fixtures for the generation app: a small base-prompt file, a study planned from it, and
generator configs pointing at the loopback image API or a tiny local pipeline."""

from __future__ import annotations

import json

import pytest

from tests.support.image_api_server import ImageApiServer

BASE_PROMPTS = [
    {"prompt_id": "p1", "text": "A person cooking dinner in a kitchen", "domain": "food"},
    {"prompt_id": "p2", "text": "A person holding a sign that says REFUSE", "domain": "protest"},
    {"prompt_id": "p3", "text": "A bowl of fruit on a table", "domain": "food"},
]
# p1 and p2 × (neutral + 3 gender values) are planned; p3 has no person and is skipped.
PLANNED_ROWS, SKIPPED_ROWS = 8, 4


@pytest.fixture
def base_prompts_file(tmp_path):
    path = tmp_path / "base_prompts.json"
    path.write_text(json.dumps(BASE_PROMPTS), encoding="utf-8")
    return path


@pytest.fixture
def api_server():
    with ImageApiServer() as server:
        yield server


def api_config(server, **overrides) -> dict:
    return {
        "kind": "openai-images",
        "model": "gpt-image-test",
        "base_url": server.base_url,
        "max_retries": 1,
        "backoff_s": 0.0,
        "timeout_s": 5.0,
        "max_concurrency": 2,
        **overrides,
    }


@pytest.fixture
def planned_study(study, base_prompts_file):
    from generation import services

    services.study_plan_build(
        study=study, base_prompts_path=base_prompts_file, attributes=["gender"]
    )
    return study


@pytest.fixture
def api_study(planned_study, api_server):
    from generation import services

    services.study_generator_attach(study=planned_study, name="api", config=api_config(api_server))
    return planned_study


@pytest.fixture(autouse=True)
def _fresh_generator_cache():
    from generation.runs.execution import generator_cache_clear

    generator_cache_clear()
    yield
    generator_cache_clear()
