"""What the HTTP image-API backends share: the session, the key, concurrency, and the
mapping from an HTTP outcome to a result when no image came back."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Sequence
from functools import partial

import requests

from generation.backends.base import (
    ERROR,
    OK,
    REFUSED,
    GenerationRequest,
    GenerationResult,
    GeneratorConfig,
    result_for,
)
from generation.backends.http_client import HttpOutcome, map_concurrently, request_with_retries

# Words providers use when a request is blocked for content (OpenAI's safety system,
# Google's Responsible AI filters); matched on error messages of 4xx answers.
POLICY_MESSAGE = re.compile(
    r"safety|content policy|policy violation|moderation|responsible ai|sensitive|prohibited|blocked",
    re.IGNORECASE,
)


class ApiBackend:
    default_base_url = ""

    def __init__(
        self, config: GeneratorConfig, *, session: requests.Session | None = None, sleep=None
    ):
        self.config = config
        self.base_url = (config.base_url or self.default_base_url).rstrip("/")
        self.api_key = os.environ.get(config.api_key_env, "") if config.api_key_env else ""
        self.session = session or requests.Session()
        self._retry = partial(
            request_with_retries,
            self.session,
            timeout_s=config.timeout_s,
            max_retries=config.max_retries,
            backoff_s=config.backoff_s,
            **({"sleep": sleep} if sleep else {}),
        )

    def generate(self, requests_: Sequence[GenerationRequest]) -> list[GenerationResult]:
        return map_concurrently(self._generate_one, list(requests_), self.config.max_concurrency)

    def close(self) -> None:
        self.session.close()

    def _generate_one(self, request: GenerationRequest) -> GenerationResult:
        raise NotImplementedError

    def size_for(self, request: GenerationRequest) -> tuple[int, int]:
        width = request.width if request.width is not None else self.config.width
        height = request.height if request.height is not None else self.config.height
        return width, height

    def image_result(self, request, outcome: HttpOutcome, encoded: str, mime_type: str, **extra):
        image = base64.b64decode(encoded)
        width, height = _image_size(image)
        return result_for(
            request,
            self.config,
            OK,
            image=image,
            mime_type=mime_type or "image/png",
            width=width,
            height=height,
            **_http_fields(outcome),
            extra=extra,
        )

    def refusal_result(self, request, outcome: HttpOutcome, reason: str, message: str, **extra):
        return result_for(
            request,
            self.config,
            REFUSED,
            refusal_reason=reason,
            refusal_message=message[:1000],
            **_http_fields(outcome),
            extra=extra,
        )

    def failure_result(self, request, outcome: HttpOutcome) -> GenerationResult:
        """No image and no content refusal: an error the caller may retry later."""
        error = outcome.error or f"http_{outcome.status}"
        detail = f"{error}: {outcome.text[:300]}" if outcome.text else error
        return result_for(request, self.config, ERROR, error=detail, **_http_fields(outcome))


def _http_fields(outcome: HttpOutcome) -> dict:
    return {
        "attempts": outcome.attempts,
        "http_status": outcome.status,
        "latency_s": outcome.latency_s,
    }


def _image_size(image: bytes) -> tuple[int | None, int | None]:
    import io

    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(image)) as opened:
            return opened.width, opened.height
    except (UnidentifiedImageError, OSError):
        return None, None


def error_message(body) -> tuple[str, str]:
    """(code, message) from the common ``{"error": {"code", "message"}}`` shapes."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        code = str(error.get("code") or error.get("type") or error.get("status") or "")
        return code, str(error.get("message") or "")
    if isinstance(error, str):
        return "", error
    return "", ""
