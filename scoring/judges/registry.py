"""Build a judge by name from a plain config dict (settings, a database row, a CLI flag).

Every config has ``kind``, ``name`` (stored with each judgment) and ``version``; the other
keys belong to the kind::

    {"kind": "hard_refusal", "name": "hard_refusal", "version": "1",
     "clip": {"architecture": "ViT-B-32", "pretrained": "openai", "cache_dir": "/models/clip",
              "device": "cuda", "batch_size": 128},          # or null: rules only
     "clip_tau": 0.25, "clip_tau_by_generator": {"sdxl": 0.27},
     "blank_std_max": 4.0, "refusal_phrases": ["..."]}        # any HardRefusalConfig field

    {"kind": "cue_vlm", "name": "qwen2.5-vl-7b", "version": "1",
     "backend": {"type": "transformers", "model": "Qwen/Qwen2.5-VL-7B-Instruct",
                 "device": "cuda", "dtype": "bfloat16", "batch_size": 8},
     # or {"type": "openai", "endpoint": "http://vllm:8000/v1", "model": "...",
     #     "api_key_env": "VLLM_API_KEY", "concurrency": 16, "timeout_s": 60, "max_retries": 4}
     "decoding": {"temperature": 0.0, "max_new_tokens": 16}, "score_options": true}

    {"kind": "cue_clip", "name": "clip_cue", "version": "1", "clip": {...}, "threshold": 0.5}

    {"kind": "ensemble", "name": "cue_ensemble", "version": "1", "min_confidence": 0.6,
     "min_valid_votes": 2, "members": [{...}, {...}]}

Heavy models are cached per process by the loaders, so building a judge per task is cheap
after the first. ``device`` overrides every device in the config (a worker's ``--device``);
``cache`` wraps every non-ensemble judge in a :class:`CachedJudge`.

Two registries, in the one shape every kind of backend has
(``generation/backends/registry.py``): ``JUDGES`` by ``kind`` and ``VLM_BACKENDS`` by
``type``. A ``backend`` section — a cue judge's here, a REFLECT model's in
``scoring/reflect/backends.py`` — is parsed by :func:`vlm_backend_config`, the one parser of
that shape, and built by :func:`build_vlm_backend`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generation.backends.registry import (
    BackendConfigError,
    Entry,
    Registry,
    config_values,
    dataclass_keys,
)
from scoring.judges.backends.base import VLMBackend
from scoring.judges.backends.openai_compat import OpenAICompatBackend, OpenAICompatConfig
from scoring.judges.backends.scripted import ScriptedVLMBackend, ScriptedVLMConfig
from scoring.judges.backends.transformers_vlm import TransformersVLMBackend, TransformersVLMConfig
from scoring.judges.cache import CachedJudge, CacheStore
from scoring.judges.records import Judge

_COMMON = ("kind", "name", "version")

__all__ = [
    "JUDGES",
    "VLM_BACKENDS",
    "BackendConfigError",
    "build_vlm_backend",
    "configured_batch_size",
    "load_judge",
    "runs_a_local_model",
    "vlm_backend_config",
]


def load_judge(
    config: dict[str, Any], *, device: str | None = None, cache: CacheStore | None = None
) -> Judge:
    config = copy.deepcopy(config)
    kind = config.get("kind")
    builder = JUDGES.builder(kind)
    if not config.get("name"):
        raise BackendConfigError("a judge config needs a 'name'")
    if device is not None:
        _override_device(config, device)
    judge = builder(config, device, cache)
    if cache is not None and kind != "ensemble":
        judge = CachedJudge(judge, cache)
    return judge


def runs_a_local_model(config: dict[str, Any]) -> bool:
    """True when the judge loads a model in the worker (CLIP, a transformers VLM), False when
    it only calls an HTTP API or applies rules; the former run on the GPU queue."""
    kind = config.get("kind")
    if kind == "ensemble":
        return any(runs_a_local_model(member) for member in config.get("members", []))
    if kind == "cue_vlm":
        return _is_local_section(config.get("backend") or {})
    if kind == "hard_refusal":
        return bool(config.get("clip"))
    return True


def configured_batch_size(config: dict[str, Any]) -> int:
    """The largest model batch a config asks for — its ``batch_size``, or the model config's
    default when it names none — read without loading anything, so a queued job never cuts its
    tasks smaller than the model's batch. API-backed and rules-only judges: 1."""
    from scoring.judges.clip import ClipConfig  # lazily, as the builders below

    if config.get("kind") == "ensemble":
        return max((configured_batch_size(m) for m in config.get("members", [])), default=1)
    defaults = {"clip": ClipConfig, "backend": TransformersVLMConfig}
    sizes = [
        int(section.get("batch_size", defaults[key].__dataclass_fields__["batch_size"].default))
        for key in defaults
        if _is_local_section(section := config.get(key))
    ]
    return max([1, *sizes])


def _is_local_section(section: Any) -> bool:
    """A ``clip`` or ``backend`` section that loads a model in the worker (not an HTTP API)."""
    if not isinstance(section, dict):
        return False
    kind = section.get("type", "transformers")  # a ``clip`` section has no type: local
    return kind not in VLM_BACKENDS or VLM_BACKENDS.is_local(kind)


def _override_device(config: dict[str, Any], device: str) -> None:
    for key in ("clip", "backend"):
        if _is_local_section(config.get(key)):
            config[key]["device"] = device


def _settings(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in _COMMON}


# The builders import their judge only when one is built: CLIP and VLM judges load torch,
# open_clip or transformers, which a web process that only reads configs must not pay for,
# nor need installed.


def _build_hard_refusal(
    config: dict[str, Any], device: str | None, cache: CacheStore | None
) -> Judge:
    from scoring.judges.hard_refusal import HardRefusalConfig, HardRefusalJudge

    settings = HardRefusalConfig.from_dict(_settings(config))
    return HardRefusalJudge(settings, name=config["name"], version=str(config.get("version", "1")))


def _build_cue_vlm(config: dict[str, Any], device: str | None, cache: CacheStore | None) -> Judge:
    from scoring.judges.backends.base import DecodingConfig
    from scoring.judges.cue_judge import CUE_QUESTION, CueJudge

    backend = vlm_backend_config(config.get("backend"), name=config["name"])
    return CueJudge(
        build_vlm_backend(backend),
        name=config["name"],
        version=config.get("version"),
        template=config.get("template", CUE_QUESTION),
        decoding=DecodingConfig.from_dict(config.get("decoding")),
        score_options=config.get("score_options", True),
        counterbalance=config.get("counterbalance", True),
    )


# --- VLM backends (a cue judge's ``backend``, a REFLECT model) ------------------------------

_VLM_REQUIRED = {"openai": ("endpoint", "model"), "transformers": ("model",), "scripted": ()}


def vlm_backend_config(raw: Any, *, name: str | None = None) -> dict[str, Any]:
    """The one parser of a ``{"type": "openai" | "transformers" | "scripted", ...}`` section: a registered
    type, the backend's own keys only, the required ones set, and no secret (the API key comes
    from the environment variable ``api_key_env`` names). ``name`` (the judge or model) goes
    into every message. Returns a copy, ``type`` included."""
    where = f"VLM backend {name!r}" if name else "VLM backend config"
    if not isinstance(raw, dict):
        raise BackendConfigError(f"{where}: config must be a mapping, not {type(raw).__name__}")
    kind = raw.get("type")
    config_class = VLM_BACKENDS.builder(kind).config_class
    if any("key" in key and key != "api_key_env" for key in raw):
        raise BackendConfigError(
            f"{where}: put the API key in an environment variable named by api_key_env"
        )
    return config_values(
        raw,
        what="VLM backend",
        name=name,
        known=("type", *dataclass_keys(config_class)),
        required=_VLM_REQUIRED[kind],
    )


def build_vlm_backend(config: dict[str, Any], **overrides: Any) -> VLMBackend:
    """The backend a parsed section names; ``overrides`` replace its settings (a run's
    ``concurrency``)."""
    settings = {k: v for k, v in config.items() if k != "type"} | overrides
    return VLM_BACKENDS.builder(config["type"]).build(settings)


@dataclass(frozen=True)
class _VLMBuilder:
    backend_class: type
    config_class: type

    def build(self, settings: dict[str, Any]) -> VLMBackend:
        return self.backend_class(self.config_class(**settings))


VLM_BACKENDS: Registry[_VLMBuilder] = Registry(
    "backend type",
    {
        "openai": Entry(_VLMBuilder(OpenAICompatBackend, OpenAICompatConfig), local=False),
        "transformers": Entry(
            _VLMBuilder(TransformersVLMBackend, TransformersVLMConfig), local=True
        ),
        # Demos and tests: deterministic answers with a documented bias, no model
        # (scoring/judges/backends/scripted.py).
        "scripted": Entry(_VLMBuilder(ScriptedVLMBackend, ScriptedVLMConfig), local=False),
    },
)


def _build_cue_clip(config: dict[str, Any], device: str | None, cache: CacheStore | None) -> Judge:
    from scoring.judges.backends.clip_zero_shot import ClipZeroShotCueJudge
    from scoring.judges.clip import ClipConfig

    settings = _settings(config)
    clip = ClipConfig.from_dict(settings.pop("clip"))
    return ClipZeroShotCueJudge(
        clip, name=config["name"], version=str(config.get("version", "1")), **settings
    )


def _build_ensemble(config: dict[str, Any], device: str | None, cache: CacheStore | None) -> Judge:
    from scoring.judges.ensemble import EnsembleJudge

    settings = _settings(config)
    members = [
        load_judge(member, device=device, cache=cache) for member in settings.pop("members", [])
    ]
    return EnsembleJudge(
        members, name=config["name"], version=str(config.get("version", "1")), **settings
    )


JudgeBuilder = Callable[[dict[str, Any], str | None, CacheStore | None], Judge]
JUDGES: Registry[JudgeBuilder] = Registry(
    "judge kind",
    {
        "hard_refusal": Entry(_build_hard_refusal),
        "cue_vlm": Entry(_build_cue_vlm),
        "cue_clip": Entry(_build_cue_clip),
        "ensemble": Entry(_build_ensemble),
    },
)
