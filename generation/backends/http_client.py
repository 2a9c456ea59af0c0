"""HTTP with retries: 429, 5xx, timeouts and dropped connections are retried with
exponential backoff (honouring ``Retry-After``); every other answer is returned as is,
so the provider module can read a refusal out of it."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import requests

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MAX_BACKOFF_S = 60.0


@dataclass(frozen=True)
class HttpOutcome:
    status: int | None  # None when no HTTP answer came back at all
    body: Any  # parsed JSON, or None
    text: str
    attempts: int
    latency_s: float
    error: str = ""  # "timeout", "connection", "rate_limited", "server_error", ...

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def request_with_retries(
    session: requests.Session,
    method: str,
    url: str,
    *,
    timeout_s: float,
    max_retries: int,
    backoff_s: float,
    sleep: Callable[[float], None] = time.sleep,
    **kwargs: Any,
) -> HttpOutcome:
    started = time.perf_counter()
    attempt = 0
    while True:
        attempt += 1
        status, body, text, error, retry_after = _attempt(session, method, url, timeout_s, kwargs)
        retryable = error in ("timeout", "connection") or status in RETRY_STATUSES
        if not retryable or attempt > max_retries:
            if retryable and status is not None:
                error = "rate_limited" if status == 429 else "server_error"
            elapsed = time.perf_counter() - started
            return HttpOutcome(status, body, text, attempt, round(elapsed, 4), error)
        delay = retry_after if retry_after is not None else backoff_s * 2 ** (attempt - 1)
        sleep(min(delay, MAX_BACKOFF_S))


def _attempt(session, method, url, timeout_s, kwargs):
    try:
        response = session.request(method, url, timeout=timeout_s, **kwargs)
    except requests.Timeout:
        return None, None, "", "timeout", None
    except requests.ConnectionError:
        return None, None, "", "connection", None
    try:
        body = response.json()
    except ValueError:
        body = None
    return response.status_code, body, response.text[:2000], "", _retry_after(response)


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to exponential backoff


def map_concurrently(function: Callable, items: list, max_concurrency: int) -> list:
    """``[function(item) for item in items]`` with at most ``max_concurrency`` in flight,
    results in input order."""
    if max_concurrency <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=max_concurrency) as pool:
        return list(pool.map(function, items))
