"""A loopback server speaking the image APIs, with scripted refusals, 429s and timeouts.

Routes (any prefix before them is accepted):
  POST .../images/generations        OpenAI images (JSON)
  POST .../images/edits              OpenAI image edits (multipart)
  POST .../models/{model}:predict    Google Imagen
  POST .../models/{model}:generateContent   Gemini

By default every request gets a small PNG, except prompts containing ``REFUSE`` which
get the API's own refusal shape. A rule ``(route, request) -> Reply | None`` overrides
that (None keeps the default)::

    with ImageApiServer(scripted([rate_limited(), None])) as server:   # a 429, then a PNG
        config = {..., "base_url": server.base_url}

``server.requests`` holds ``(route, request)`` pairs in arrival order.
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REFUSAL_TRIGGER = "REFUSE"


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict → JSON; str/bytes → raw
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Rule = Callable[[str, dict], "Reply | None"]


def tiny_png(color: tuple[int, int, int] = (200, 30, 30), size: int = 8) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buffer, format="PNG")
    return buffer.getvalue()


def png_b64() -> str:
    return base64.b64encode(tiny_png()).decode()


def rate_limited(retry_after: float = 0.0) -> Reply:
    return Reply(
        429,
        {"error": {"code": "rate_limit_exceeded", "message": "slow down"}},
        headers={"Retry-After": str(retry_after)},
    )


def server_error(status: int = 503) -> Reply:
    return Reply(status, {"error": {"message": "temporarily unavailable"}})


def slow(delay_s: float) -> Reply:
    return Reply(200, {"data": []}, delay_s=delay_s)


def scripted(replies: Iterable[Reply | None], then: Rule | None = None) -> Rule:
    """Answer with ``replies`` in order (None = default answer), then with ``then``."""
    queue = list(replies)
    lock = threading.Lock()

    def rule(route: str, request: dict) -> Reply | None:
        with lock:
            if queue:
                return queue.pop(0)
        return then(route, request) if then else None

    return rule


def openai_policy_refusal() -> Reply:
    message = "Your request was rejected as a result of our safety system."
    return Reply(
        400,
        {
            "error": {
                "code": "content_policy_violation",
                "message": message,
                "type": "invalid_request_error",
            }
        },
    )


def default_reply(route: str, request: dict) -> Reply:
    prompt = str(request.get("prompt") or _gemini_text(request) or _imagen_prompt(request))
    refuse = REFUSAL_TRIGGER in prompt
    if route in ("generations", "edits"):
        if refuse:
            return openai_policy_refusal()
        return Reply(body={"created": int(time.time()), "data": [{"b64_json": png_b64()}]})
    if route == "predict":
        if refuse:
            return Reply(
                body={"predictions": [{"raiFilteredReason": "blocked by the safety filter"}]}
            )
        return Reply(
            body={"predictions": [{"bytesBase64Encoded": png_b64(), "mimeType": "image/png"}]}
        )
    if refuse:
        return Reply(
            body={
                "candidates": [
                    {
                        "finishReason": "IMAGE_SAFETY",
                        "content": {"parts": [{"text": "I can't make that."}]},
                    }
                ]
            }
        )
    part = {"inlineData": {"mimeType": "image/png", "data": png_b64()}}
    return Reply(body={"candidates": [{"finishReason": "STOP", "content": {"parts": [part]}}]})


def _gemini_text(request: dict) -> str:
    parts = (request.get("contents") or [{}])[0].get("parts") or []
    return " ".join(part.get("text", "") for part in parts)


def _imagen_prompt(request: dict) -> str:
    return str(((request.get("instances") or [{}])[0]).get("prompt", ""))


def _route(path: str) -> str:
    path = path.split("?")[0]
    for suffix, route in (
        ("/images/generations", "generations"),
        ("/images/edits", "edits"),
        (":predict", "predict"),
        (":generateContent", "generateContent"),
    ):
        if path.endswith(suffix):
            return route
    return ""


class ImageApiServer:
    """Threaded HTTP server on 127.0.0.1 at an ephemeral port."""

    def __init__(self, rule: Rule | None = None):
        self.rule = rule
        self.requests: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ImageApiServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def answer(self, route: str, request: dict) -> Reply:
        with self._lock:
            self.requests.append((route, request))
        reply = self.rule(route, request) if self.rule else None
        return reply if reply is not None else default_reply(route, request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body are written separately: without TCP_NODELAY each reply waits
            # ~40 ms for the client's delayed ACK. Real API servers set it too.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                route = _route(self.path)
                if not route:
                    self._send(Reply(404, {"error": {"message": "not found"}}))
                    return
                self._send(server.answer(route, _parse_body(self.headers, raw)))

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body if reply.body is not None else {}
                payload = (
                    body
                    if isinstance(body, bytes)
                    else (body.encode() if isinstance(body, str) else json.dumps(body).encode())
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler


def _parse_body(headers, raw: bytes) -> dict:
    content_type = headers.get("Content-Type", "")
    if content_type.startswith("multipart/form-data"):
        return _parse_multipart(content_type, raw)
    try:
        return json.loads(raw or b"{}")
    except json.JSONDecodeError:
        return {}


def _parse_multipart(content_type: str, raw: bytes) -> dict:
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + raw
    )
    fields: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[name] = payload if part.get_filename() else payload.decode()
    return fields
