"""The generator interface: requests in, results out, refusals as data.

``generation.backends.registry.load_generator(config)`` builds a generator by its ``kind``
(the kinds are that registry's); ``generate`` never
raises for a refusal or a provider failure: each request gets exactly one
``GenerationResult`` whose ``status`` is ``ok``, ``refused`` or ``error``.
``error`` means "no answer about the content" (network, rate limit after all
retries, out of memory) and can be retried; ``refused`` is the audit signal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

OK, REFUSED, ERROR = "ok", "refused", "error"


class BackendConfigError(ValueError):
    """A backend config that cannot be built; the message is one line, fit for a user. Here,
    below the registry and the backends, so a backend can raise it without importing the
    registry that builds it."""


@dataclass(frozen=True)
class GenerationRequest:
    """One image to make. ``request_id`` is the caller's idempotency key (e.g. plan id +
    generator + seed); ``source_image`` (path or encoded bytes) makes it an edit."""

    request_id: str
    prompt: str
    seed: int = 0
    source_image: str | Path | bytes | None = None
    negative_prompt: str = ""
    steps: int | None = None
    guidance: float | None = None
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class GenerationResult:
    request_id: str
    status: str  # ok / refused / error
    generator: str
    model: str
    prompt: str
    seed: int
    image: bytes | None = field(default=None, repr=False)
    mime_type: str = ""
    content_sha256: str = ""
    refusal_reason: str = ""  # nsfw_content_detected, content_policy_violation, empty_result ...
    refusal_message: str = ""
    error: str = ""
    steps: int | None = None
    guidance: float | None = None
    width: int | None = None
    height: int | None = None
    attempts: int = 1
    http_status: int | None = None
    latency_s: float = 0.0
    extra: dict = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        return self.status == REFUSED

    def to_record(self) -> dict:
        """Everything but the image bytes: for JSON lines or a database row."""
        record = asdict(self)
        record.pop("image")
        return record


@dataclass(frozen=True)
class GeneratorConfig:
    """How to build a generator: by name and location, never by code edits."""

    name: str
    kind: str
    model: str  # hub id, local folder, or the provider's model name
    device: str = "auto"  # auto / cpu / cuda / cuda:1 / mps
    dtype: str = "auto"  # auto / fp32 / fp16 / bf16
    batch_size: int = 4
    steps: int = 30
    guidance: float = 7.0
    width: int = 512
    height: int = 512
    safety_checker: bool = True  # keep the pipeline's checker: its flag is the local refusal
    edit_pipeline: str = "auto"  # auto / img2img / instruct-pix2pix
    strength: float = 0.75  # img2img
    image_guidance: float = 1.5  # instruct-pix2pix
    base_url: str = ""
    api_key_env: str = ""  # name of the environment variable holding the key
    timeout_s: float = 120.0
    max_retries: int = 4
    backoff_s: float = 2.0
    max_concurrency: int = 2
    options: dict[str, Any] = field(default_factory=dict)  # passed to from_pretrained / the API


class Generator(Protocol):
    config: GeneratorConfig

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]: ...

    def close(self) -> None: ...


def content_sha256(data: bytes | None) -> str:
    return hashlib.sha256(data).hexdigest() if data else ""


def read_source_image(source: str | Path | bytes) -> bytes:
    return source if isinstance(source, bytes) else Path(source).read_bytes()


def result_for(
    request: GenerationRequest, config: GeneratorConfig, status: str, **values: Any
) -> GenerationResult:
    """A result carrying the request's identity and the generator's name and model."""
    image = values.get("image")
    if image is not None and "content_sha256" not in values:
        values["content_sha256"] = content_sha256(image)
    return GenerationResult(
        request_id=request.request_id,
        status=status,
        generator=config.name,
        model=config.model,
        prompt=request.prompt,
        seed=request.seed,
        **values,
    )
