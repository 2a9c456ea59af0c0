"""A loopback server speaking OpenAI chat-completions, with scripted behaviours.

The answer rule is pluggable: any callable ``(request_json) -> reply``, where a reply is a
dict (sent as a 200 JSON body) or a :class:`Reply` for anything else (another status, a raw
malformed body, a delay, headers). Helpers build the common rules::

    with OpenAIServer(answer_with("retained")) as server:
        backend = OpenAICompatBackend(OpenAICompatConfig(endpoint=server.base_url, model="m"))

    OpenAIServer(scripted([Reply(status=429), completion("erased")]))  # 429, then success

``server.requests`` keeps every request body received, in arrival order.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list → JSON; str/bytes → sent raw (for malformed replies)
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


AnswerRule = Callable[[dict[str, Any]], "Reply | dict[str, Any]"]


def completion(
    text: str | list[str],
    *,
    model: str = "loopback",
    top_logprobs: dict[str, float] | None = None,
) -> dict[str, Any]:
    """A well-formed chat completion; ``top_logprobs`` maps first-token → probability."""
    texts = [text] if isinstance(text, str) else list(text)
    choices = []
    for index, content in enumerate(texts):
        choice: dict[str, Any] = {
            "index": index,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }
        if top_logprobs is not None:
            alternatives = [
                {"token": token, "logprob": math.log(p)} for token, p in top_logprobs.items()
            ]
            first_token = content.split()[0] if content.split() else content
            chosen = top_logprobs.get(first_token, max(top_logprobs.values()))
            choice["logprobs"] = {
                "content": [
                    {
                        "token": first_token,
                        "logprob": math.log(chosen),
                        "top_logprobs": alternatives,
                    }
                ]
            }
        choices.append(choice)
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": choices,
    }


def answer_with(text: str, **kwargs: Any) -> AnswerRule:
    """Always the same answer (``n`` copies when the request asks for ``n``)."""
    return lambda request: completion([text] * int(request.get("n", 1)), **kwargs)


def scripted(
    replies: Iterable[Reply | dict[str, Any]], then: AnswerRule | None = None
) -> AnswerRule:
    """Replies in order, one per request; afterwards ``then`` (or the last reply again)."""
    queue = list(replies)
    lock = threading.Lock()
    last: list[Reply | dict[str, Any]] = queue[-1:]

    def rule(request: dict[str, Any]) -> Reply | dict[str, Any]:
        with lock:
            if queue:
                return queue.pop(0)
        return then(request) if then is not None else last[0]

    return rule


def request_text(request: dict[str, Any]) -> str:
    """The text parts of the last user message (for rules that answer by content)."""
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def request_image_urls(request: dict[str, Any]) -> list[str]:
    content = request["messages"][-1]["content"]
    if isinstance(content, str):
        return []
    return [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]


def answer_constrained(text: str, **kwargs: Any) -> AnswerRule:
    """``text``, unless the request constrains the answer to choices that exclude it: then
    the first choice (what a server enforcing ``structured_outputs`` would do)."""

    def rule(request: dict[str, Any]) -> dict[str, Any]:
        choices = (request.get("structured_outputs") or {}).get("choice")
        answer = text if not choices or text in choices else choices[0]
        return completion([answer] * int(request.get("n", 1)), **kwargs)

    return rule


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when 32 clients connect at once.
    request_queue_size = 256


class OpenAIServer:
    """Serves ``POST /v1/chat/completions`` on 127.0.0.1 at an ephemeral port.

    Like vLLM: ``max_images`` answers 400 to a request with more images (its
    ``--limit-mm-per-prompt``); ``structured_outputs=False`` answers 400 to a request that
    asks for constrained choices (an older server, or one that does not support them).
    """

    def __init__(
        self, rule: AnswerRule, *, max_images: int | None = None, structured_outputs: bool = True
    ):
        self.rule = rule
        self.max_images = max_images
        self.structured_outputs = structured_outputs
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> OpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(body)

    def _refusal(self, body: dict[str, Any]) -> str | None:
        images = len(request_image_urls(body)) if body.get("messages") else 0
        if self.max_images is not None and images > self.max_images:
            return f"At most {self.max_images} image(s) may be provided in one prompt."
        if not self.structured_outputs and "structured_outputs" in body:
            return "structured_outputs: Extra inputs are not permitted"
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are written separately: without TCP_NODELAY each reply waits
            # ~40 ms for the client's delayed ACK. Real API servers set it too.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(Reply(status=400, body={"error": {"message": "bad JSON"}}))
                    return
                if not self.path.endswith("/chat/completions"):
                    self._send(Reply(status=404, body={"error": {"message": "not found"}}))
                    return
                server._record(body)
                refusal = server._refusal(body)
                if refusal is not None:
                    self._send(Reply(status=400, body={"error": {"message": refusal}}))
                    return
                reply = server.rule(body)
                self._send(reply if isinstance(reply, Reply) else Reply(body=reply))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body
                if isinstance(body, dict | list) or body is None:
                    payload = json.dumps(body if body is not None else {}).encode()
                else:
                    payload = body.encode() if isinstance(body, str) else body
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left: expected in timeout tests

        return Handler
