"""Ask a backend the planned questions, chunk by chunk, and hand each chunk's answers on.

Django-free: ``store`` (a callback) writes a chunk before the next chunk is asked, so a crash
loses at most the chunk in flight and a rerun asks only what is missing. Within a chunk the
backend does the parallelism: an API backend runs up to its ``concurrency`` requests at once,
a local model batches them (docs/reflect.md, "Speed").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from scoring.judges.backends.base import DecodingConfig, VLMBackend, VLMRequest, VLMResponse
from scoring.reflect.answer_parsing import ERROR, parse_answer
from scoring.reflect.planning import PlannedRequest, answer_options
from scoring.reflect.protocol import TaskPrompts

DEFAULT_CHUNK_SIZE = 64
# A run stops after this many transport errors in a row (docs/reflect.md, "Running"): an
# endpoint that is down fails every request, and asking hundreds more only stores errors.
MAX_CONSECUTIVE_TRANSPORT_ERRORS = 20
# What a backend's error says when the request never got an answer from the model (the
# OpenAI-compatible client's wording): a transport failure, not a problem of one request.
TRANSPORT_ERRORS = (
    "cannot reach",
    "connection failed",
    "timed out",
    "gave up after retries",
    "HTTP 401",
    "HTTP 403",
    "HTTP 404",
)


class BackendUnavailable(RuntimeError):
    """The backend cannot be reached: the pre-flight request failed, or too many requests in a
    row failed in transport. The message is one line for the user; ``stored`` answers were kept."""

    def __init__(self, message: str, *, stored: int = 0):
        super().__init__(message)
        self.stored = stored


def is_transport_error(error: str | None) -> bool:
    return bool(error) and error.startswith(TRANSPORT_ERRORS)


@dataclass(frozen=True)
class AnswerResult:
    """One stored answer: the request, exactly what was sent and what came back."""

    request: PlannedRequest
    decoding: dict[str, Any]
    raw_answer: str | None
    status: str
    value: str
    rationale: str
    error: str
    option_probs: dict[str, float] | None
    latency_s: float
    attempts: int


def run_decoding(settings: dict[str, Any] | None) -> DecodingConfig:
    """A run's decoding settings (``samples`` is the run's, not the backend's) as a config."""
    settings = {k: v for k, v in (settings or {}).items() if k != "samples"}
    settings.setdefault("logprobs", False)
    return DecodingConfig(**settings)


def request_decoding(base: DecodingConfig, request: PlannedRequest) -> DecodingConfig:
    """One sample per request; repeated samples differ by seed when a seed is set."""
    seed = None if base.seed is None else base.seed + request.sample_index
    return replace(base, n=1, seed=seed)


def vlm_request(request: PlannedRequest, base: DecodingConfig, prompts: TaskPrompts) -> VLMRequest:
    return VLMRequest(
        images=tuple(image.path for image in request.images),
        text=request.prompt,
        decoding=request_decoding(base, request),
        # Option probabilities cost a local model an extra forward pass: only when asked for.
        options=answer_options(request, prompts) if base.logprobs else None,
        request_id=request.request_key,
    )


def answer_result(request: PlannedRequest, sent: VLMRequest, response: VLMResponse) -> AnswerResult:
    if response.error is not None or response.text is None:
        status, value, rationale, raw = ERROR, "", "", None
        error = response.error or "no text in the response"
    else:
        raw = response.text
        parsed = parse_answer(request.task, request.item, raw, explain=request.explain)
        status, value, rationale, error = parsed.status, parsed.value, parsed.rationale, ""
    return AnswerResult(
        request=request,
        decoding=asdict(sent.decoding),
        raw_answer=raw,
        status=status,
        value=value,
        rationale=rationale,
        error=error,
        option_probs=response.option_probs,
        latency_s=float(response.latency_s),
        attempts=int(response.attempts),
    )


def execute_requests(
    backend: VLMBackend,
    planned: Sequence[PlannedRequest],
    *,
    prompts: TaskPrompts,
    decoding: DecodingConfig,
    store: Callable[[list[AnswerResult]], None],
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: Callable[[int], None] | None = None,
    preflight: bool = True,
    max_consecutive_errors: int | None = MAX_CONSECUTIVE_TRANSPORT_ERRORS,
) -> dict[str, int]:
    """Ask every planned request, storing chunk by chunk; counts of answers by status.

    With ``preflight`` the first request is asked alone: if it fails in transport (the
    endpoint is down, the model name is wrong), ``BackendUnavailable`` says so at once and
    nothing is stored. After ``max_consecutive_errors`` transport errors in a row the run
    stops the same way, keeping what was stored. The next chunk is already being asked (in one
    helper thread, which touches no database) while this one is stored, so the backend never
    idles during a write; a KeyboardInterrupt leaves at once, without waiting for the chunk in
    flight (the stored chunks are committed).
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be >= 1")
    counts: dict[str, int] = {}
    state = {"stored": 0, "in_a_row": 0, "last_error": ""}

    def ask(chunk: Sequence[PlannedRequest]) -> list[AnswerResult]:
        sent = [vlm_request(request, decoding, prompts) for request in chunk]
        responses = backend.generate(sent)
        if len(responses) != len(sent):
            raise RuntimeError(
                f"backend {backend.name} returned {len(responses)} responses for {len(sent)} requests"
            )
        return [answer_result(r, s, a) for r, s, a in zip(chunk, sent, responses, strict=True)]

    def keep(results: list[AnswerResult]) -> None:
        for result in results:
            counts[result.status] = counts.get(result.status, 0) + 1
        store(results)
        state["stored"] += len(results)
        if progress is not None:
            progress(len(results))

    def too_many_errors(results: list[AnswerResult]) -> bool:
        for result in results:
            if is_transport_error(result.error):
                state["in_a_row"] += 1
                state["last_error"] = result.error
            else:
                state["in_a_row"] = 0
        return max_consecutive_errors is not None and state["in_a_row"] >= max_consecutive_errors

    planned = list(planned)
    if preflight and planned:
        first = ask(planned[:1])
        if is_transport_error(first[0].error):
            error = first[0].error
            raise BackendUnavailable(
                f"{error} (the pre-flight request to {backend.name}); nothing was asked or stored"
                if error.startswith("cannot reach")
                else f"pre-flight request to {backend.name} failed: {error}; nothing was "
                "asked or stored"
            )
        keep(first)
        planned = planned[1:]
    chunks = [planned[start : start + chunk_size] for start in range(0, len(planned), chunk_size)]
    asker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reflect-ask")
    try:
        pending = asker.submit(ask, chunks[0]) if chunks else None
        for index in range(len(chunks)):
            results = pending.result()
            stop = too_many_errors(results)
            if index + 1 < len(chunks) and not stop:
                pending = asker.submit(ask, chunks[index + 1])
            keep(results)
            if stop:
                raise BackendUnavailable(
                    f"stopped after {state['in_a_row']} transport errors in a row (last: "
                    f"{state['last_error']}); {state['stored']} answers stored, errors "
                    "included; rerun the same command to ask the rest",
                    stored=state["stored"],
                )
    finally:
        # Never wait for a chunk in flight (a Ctrl-C, or the stop above): its answers are not
        # stored, and a rerun asks them again.
        asker.shutdown(wait=False, cancel_futures=True)
    return counts
