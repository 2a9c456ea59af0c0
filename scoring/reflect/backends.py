"""Which VLM a run asks: a backend config by name (settings) or inline (an endpoint URL).

Django-free: callers pass the ``ACRB_VLM_MODELS`` mapping. A config is a plain dict::

    {"type": "openai", "endpoint": "http://vllm:8000/v1", "model": "Qwen/Qwen2.5-VL-7B-Instruct",
     "api_key_env": "VLLM_API_KEY", "concurrency": 16, "timeout_s": 60, "max_retries": 4,
     "decoding": {"temperature": 0.0, "max_new_tokens": 16}}
    {"type": "transformers", "model": "/models/qwen2.5-vl-7b", "device": "cuda",
     "dtype": "bfloat16", "batch_size": 16}

``decoding`` (optional) holds the run's default decoding settings; everything else is the
backend section a cue judge has too, parsed and built by ``scoring.judges.registry``
(``vlm_backend_config``, ``build_vlm_backend``: one parser, one wording). Secrets never enter
a config: only the name of the environment variable that holds the key.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scoring.judges.backends.base import VLMBackend
from scoring.judges.registry import (
    VLM_BACKENDS,
    BackendConfigError,
    build_vlm_backend,
    vlm_backend_config,
)

OPENAI, TRANSFORMERS = "openai", "transformers"

__all__ = ["BackendConfigError", "ModelChoice", "build_backend", "inline_choice", "model_choice"]


@dataclass(frozen=True)
class ModelChoice:
    """A named backend config, validated: what a run records and how to build it."""

    name: str
    config: dict[str, Any]
    decoding: dict[str, Any]

    @property
    def kind(self) -> str:
        return self.config["type"]

    @property
    def local(self) -> bool:
        """A local model needs a GPU worker; an API backend is light work."""
        return VLM_BACKENDS.is_local(self.kind)


def model_choice(name: str, configured: Mapping[str, dict[str, Any]]) -> ModelChoice:
    """The backend configured under ``name`` in settings.ACRB_VLM_MODELS."""
    if name not in configured:
        known = ", ".join(sorted(configured)) or "none configured (see ACRB_BACKENDS_FILE)"
        raise BackendConfigError(f"unknown VLM model {name!r}; known: {known}")
    return _validated(name, configured[name])


def inline_choice(
    *, endpoint: str, api_model: str, concurrency: int = 16, **backend: Any
) -> ModelChoice:
    """Any OpenAI-compatible server given on the command line; named by the model id."""
    config = {
        "type": OPENAI,
        "endpoint": endpoint,
        "model": api_model,
        "concurrency": concurrency,
        **backend,
    }
    return _validated(api_model, config)


def _validated(name: str, raw: dict[str, Any]) -> ModelChoice:
    if not isinstance(raw, dict):
        raise BackendConfigError(f"VLM backend {name!r}: config must be a mapping")
    config = copy.deepcopy(raw)
    decoding = dict(config.pop("decoding", None) or {})
    return ModelChoice(name=name, config=vlm_backend_config(config, name=name), decoding=decoding)


def build_backend(choice: ModelChoice, *, concurrency: int | None = None) -> VLMBackend:
    """The backend object; ``concurrency`` overrides an API backend's request limit."""
    if concurrency is not None and choice.kind == OPENAI:
        return build_vlm_backend(choice.config, concurrency=concurrency)
    return build_vlm_backend(choice.config)


def suggested_chunk_size(choice: ModelChoice, *, concurrency: int | None = None) -> int:
    """Enough requests per backend call to keep every API slot or a few local batches busy."""
    if choice.kind == OPENAI:
        slots = concurrency or int(choice.config.get("concurrency", 8))
        return max(32, 8 * slots)
    return max(32, 4 * int(choice.config.get("batch_size", 8)))
