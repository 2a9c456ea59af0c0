"""Any OpenAI-compatible chat-completions endpoint (hosted APIs, vLLM, SGLang, Ollama).

Images travel as base64 data URLs in the standard ``image_url`` content parts, several per
request where the question shows several (source and edit, both faces of a 2AFC pair), up to
``max_images_per_request`` (match the server's ``--limit-mm-per-prompt``). A question with
fixed answers asks the server to constrain the answer to them (vLLM's
``structured_outputs: {"choice": [...]}``); a server that rejects the field is asked again
without it, and from then on only strict parsing stands between the reply and a label. Requests run
concurrently up to a limit; 429, 5xx, timeouts and dropped connections are retried with
exponential backoff (``Retry-After`` honoured); a reply that does not have the expected shape
is recorded as an error on that request, never raised.
"""

from __future__ import annotations

import functools
import math
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from scoring.judges.backends.base import (
    VLMRequest,
    VLMResponse,
    normalise_option_probs,
)
from scoring.judges.images import ImageSource, image_data_url

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class MalformedReply(ValueError):
    """The server answered 200 but not with a chat completion we can read."""


@dataclass(frozen=True)
class OpenAICompatConfig:
    endpoint: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_base_s: float = 1.0
    backoff_max_s: float = 30.0
    concurrency: int = 8
    top_logprobs: int = 5
    supports_logprobs: bool = True
    extra_body: dict[str, Any] | None = None
    # vLLM's --limit-mm-per-prompt: a request with more images fails locally, not at the server.
    max_images_per_request: int | None = None
    # Constrain answers to the request's options (vLLM ≥ 0.10 "structured_outputs"; SGLang
    # takes the same "choice" through its own guided-decoding field: set extra_body there).
    structured_outputs: bool = True

    @property
    def url(self) -> str:
        base = self.endpoint.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"


class OpenAICompatBackend:
    """``generate`` sends every request, up to ``concurrency`` at a time, in input order."""

    def __init__(self, config: OpenAICompatConfig, *, sleep: Callable[[float], None] = time.sleep):
        if config.concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.config = config
        self.name = f"openai:{config.model}"
        # A refused connection is retried only once the endpoint has answered (a restart in the
        # middle of a run); before that it fails at once, so a wrong address fails in a second.
        self._reached = False
        self.version = config.model
        self._sleep = sleep
        self._local = threading.local()
        self._api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
        # Turned off for good the first time the server rejects the field (see module doc).
        self.structured_outputs = config.structured_outputs
        if config.max_images_per_request is not None and config.max_images_per_request < 1:
            raise ValueError("max_images_per_request must be >= 1")

    def generate(self, requests_: Sequence[VLMRequest]) -> list[VLMResponse]:
        if len(requests_) <= 1 or self.config.concurrency == 1:
            return [self._generate_one(r) for r in requests_]
        workers = min(self.config.concurrency, len(requests_))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="vlm-api") as pool:
            return list(pool.map(self._generate_one, requests_))

    def request_body(self, request: VLMRequest) -> dict[str, Any]:
        decoding = request.decoding
        limit = self.config.max_images_per_request
        if limit is not None and len(request.images) > limit:
            raise ValueError(
                f"{len(request.images)} images in one request, over max_images_per_request={limit}"
            )
        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": data_url(image)}} for image in request.images
        ]
        content.append({"type": "text", "text": request.text})
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "temperature": decoding.temperature,
            "max_tokens": decoding.max_new_tokens,
        }
        if decoding.n > 1:
            body["n"] = decoding.n
        if decoding.top_p is not None:
            body["top_p"] = decoding.top_p
        if decoding.seed is not None:
            body["seed"] = decoding.seed
        if decoding.logprobs and self.config.supports_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = self.config.top_logprobs
        if request.options and self.structured_outputs:
            body["structured_outputs"] = {"choice": list(request.options)}
        body.update(self.config.extra_body or {})
        return body

    def _session(self) -> requests.Session:
        # requests.Session is not documented as thread-safe: one per worker thread.
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        return session

    def _generate_one(self, request: VLMRequest) -> VLMResponse:
        started = time.perf_counter()
        try:
            body = self.request_body(request)
        except Exception as exc:  # noqa: BLE001 - e.g. an unreadable image: that request's error
            return _failed(request, f"could not build request: {exc}", started, attempts=0)
        reply, attempts, error = self._post_with_retries(body)
        if error is not None and "structured_outputs" in body and _rejects_structured(error):
            self.structured_outputs = False
            body.pop("structured_outputs")
            reply, more, error = self._post_with_retries(body)
            attempts += more
        if error is not None:
            return _failed(request, error, started, attempts)
        try:
            response = parse_chat_completion(reply, options=request.options)
        except MalformedReply as exc:
            return _failed(request, f"malformed reply: {exc}", started, attempts)
        response.latency_s = time.perf_counter() - started
        response.attempts = attempts
        response.request_id = request.request_id
        return response

    def _post_with_retries(self, body: dict[str, Any]) -> tuple[Any, int, str | None]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        error, retry_after = "no attempt made", None
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                self._sleep(self._backoff_s(attempt, retry_after))
                retry_after = None
            try:
                reply = self._session().post(
                    self.config.url, json=body, headers=headers, timeout=self.config.timeout_s
                )
            except requests.Timeout:
                error = f"timed out after {self.config.timeout_s}s"
                continue
            except requests.ConnectionError as exc:
                error = (
                    f"cannot reach {self.config.endpoint.rstrip('/')}: {_connection_reason(exc)}"
                )
                if not self._reached:  # never answered: a wrong address or a server that is down
                    return None, attempt + 1, error
                continue
            self._reached = True
            if reply.status_code == 200:
                try:
                    return reply.json(), attempt + 1, None
                except ValueError:
                    return None, attempt + 1, f"malformed reply: not JSON: {reply.text[:200]!r}"
            error = f"HTTP {reply.status_code}: {reply.text[:300]}"
            if reply.status_code not in RETRYABLE_STATUS:
                return None, attempt + 1, error
            retry_after = _retry_after_s(reply)
        return None, self.config.max_retries + 1, f"gave up after retries: {error}"

    def _backoff_s(self, attempt: int, retry_after: float | None) -> float:
        delay = self.config.backoff_base_s * 2 ** (attempt - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, self.config.backoff_max_s)


def _connection_reason(exc: requests.ConnectionError) -> str:
    """A few words for why a connection failed, without requests' and urllib3's object reprs."""
    seen, cause = set(), exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "host name not found"
        if isinstance(cause, ssl.SSLError):
            return f"TLS error ({cause.reason or 'handshake failed'})"
        if isinstance(cause, TimeoutError):
            return "connection timed out"
        cause = cause.__cause__ or cause.__context__ or _wrapped_reason(cause)
    text = str(exc)
    if "NameResolutionError" in text or "Name or service not known" in text:
        return "host name not found"
    if "Connection refused" in text:
        return "connection refused"
    return "connection failed"


def _wrapped_reason(exc: BaseException) -> BaseException | None:
    # urllib3's MaxRetryError keeps the underlying error in .reason, requests' in .args[0].
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        return reason
    first = exc.args[0] if getattr(exc, "args", None) else None
    return first if isinstance(first, BaseException) else None


def data_url(image: ImageSource) -> str:
    """``image_data_url``, memoised for files: a REFLECT face or an I2I source image appears
    in many requests and is read and checked once (keyed by path, size and modification time,
    so a rewritten file is read again)."""
    if isinstance(image, str | Path):
        status = os.stat(image)  # a missing file: that request's error, as before
        return _shared_file_data_url(str(image), status.st_size, status.st_mtime_ns)
    return image_data_url(image)


@functools.lru_cache(maxsize=128)
def _file_data_url(path: str, size: int, mtime_ns: int) -> str:
    return image_data_url(path)


_KEY_LOCKS_GUARD = threading.Lock()


@functools.lru_cache(maxsize=1024)
def _key_lock(key: tuple) -> threading.Lock:
    return threading.Lock()


def _shared_file_data_url(path: str, size: int, mtime_ns: int) -> str:
    """The file's data URL, read once even when many request threads ask for it at the same
    moment (lru_cache alone lets each concurrent miss read the file)."""
    with _KEY_LOCKS_GUARD:
        lock = _key_lock((path, size, mtime_ns))
    with lock:
        return _file_data_url(path, size, mtime_ns)


def _rejects_structured(error: str) -> bool:
    """A 400/422 naming the field: the server does not know structured outputs."""
    return error.startswith(("HTTP 400", "HTTP 422")) and "structured_outputs" in error


def _retry_after_s(reply: requests.Response) -> float | None:
    value = reply.headers.get("Retry-After")
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


def _failed(request: VLMRequest, error: str, started: float, attempts: int) -> VLMResponse:
    return VLMResponse(
        error=error,
        latency_s=time.perf_counter() - started,
        attempts=attempts,
        request_id=request.request_id,
    )


def parse_chat_completion(reply: Any, *, options: Sequence[str] | None = None) -> VLMResponse:
    """Read texts (one per choice) and, when present, the first answer token's logprobs."""
    if not isinstance(reply, dict):
        raise MalformedReply(f"expected a JSON object, got {type(reply).__name__}")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("no 'choices' list")
    texts = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise MalformedReply("a choice has no message.content string")
        texts.append(content)
    token_logprobs = _first_choice_logprobs(choices[0])
    option_probs = option_probs_from_logprobs(token_logprobs, options) if options else None
    return VLMResponse(texts=texts, option_probs=option_probs, token_logprobs=token_logprobs)


def _first_choice_logprobs(choice: dict[str, Any]) -> list[dict[str, Any]] | None:
    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    return [entry for entry in content if isinstance(entry, dict) and "token" in entry]


def option_probs_from_logprobs(
    token_logprobs: list[dict[str, Any]] | None, options: Sequence[str]
) -> dict[str, float] | None:
    """Probabilities of the options from the first non-blank answer token's top logprobs.

    A candidate token counts for an option when it is a non-empty, case-insensitive prefix of
    exactly that one option (``"ret"`` → retained); tokens that match none or several options
    are ignored. The result is renormalised over the options; None when nothing matched.
    """
    if not token_logprobs:
        return None
    first = next((t for t in token_logprobs if str(t.get("token", "")).strip()), None)
    if first is None:
        return None
    candidates = {str(first["token"]): first.get("logprob")}
    for alternative in first.get("top_logprobs") or []:
        if isinstance(alternative, dict) and "token" in alternative:
            candidates.setdefault(str(alternative["token"]), alternative.get("logprob"))
    raw = dict.fromkeys(options, 0.0)
    for token, logprob in candidates.items():
        stem = token.strip().strip("\"'*").lower()
        matches = [o for o in options if stem and o.lower().startswith(stem)]
        if len(matches) == 1 and isinstance(logprob, int | float) and math.isfinite(logprob):
            raw[matches[0]] += math.exp(logprob)
    return normalise_option_probs(raw)
