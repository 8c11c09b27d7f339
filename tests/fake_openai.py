"""A scripted OpenAI-compatible chat server on 127.0.0.1, standard library only.

It answers ``POST /v1/chat/completions`` from a script of :class:`Reply` objects (a queue, or a
function of the request) and records every request so a test can assert on the prompts. It
covers what real endpoints do to a client: plain text, JSON, tool calls, streaming (SSE),
errors with or without ``Retry-After``, malformed bodies and requests that hang past the
client's timeout. It is bounded: it stops by itself after ``lifetime`` seconds or
``max_requests`` requests, and a hung reply wakes up when the server stops.

    with FakeOpenAI([text("hello")]) as server:
        ChatOpenAI(base_url=server.url, api_key="k", model="fake").invoke("hi")
        server.requests[0].body["messages"]
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass
class Reply:
    """One scripted answer; ``raw`` (a body sent verbatim) overrides everything but ``status``."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    delay: float = 0.0
    usage: dict[str, int] | None = None
    omit_usage: bool = False
    finish_reason: str | None = None


def text(content: str, usage: dict[str, int] | None = None) -> Reply:
    """A plain assistant message."""
    return Reply(content=content, usage=usage)


def json_reply(payload: Any, usage: dict[str, int] | None = None) -> Reply:
    """An assistant message whose content is ``payload`` as JSON text."""
    return Reply(content=json.dumps(payload), usage=usage)


def tool_call(name: str, args: dict[str, Any], call_id: str = "") -> Reply:
    """An assistant message that calls one tool."""
    return Reply(tool_calls=[{"id": call_id or f"call_{name}", "name": name, "args": args}])


def error(status: int, message: str = "", retry_after_ms: int | None = None) -> Reply:
    """An error response in OpenAI's shape; ``retry_after_ms`` sets the header clients honour."""
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Reply(status=status, error=message or f"fake server error {status}", headers=headers)


def malformed(body: bytes = b'{"id": "chatcmpl-broken", "choices": [') -> Reply:
    """A 200 response whose body is not valid JSON."""
    return Reply(raw=body)


def hang(seconds: float, then: Reply | None = None) -> Reply:
    """Sleep ``seconds`` before answering (with ``then``, or a short text)."""
    base = then or text("late")
    return Reply(**{**base.__dict__, "delay": seconds})


@dataclass
class Request:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the request."""
        return list(self.body.get("messages") or [])

    def text(self) -> str:
        """All message contents joined, to search a prompt for a section."""
        return "\n".join(str(m.get("content") or "") for m in self.messages)


Responder = Callable[[Request], Reply]
_ROLE = re.compile(r"^ROLE: (\S+)", re.M)
_MODE = re.compile(r"^MODE: (\S+)", re.M)


def role_key(request: Request) -> str:
    """``role`` or ``role:mode`` of a LogicFuzz prompt (from its ``ROLE:`` and ``MODE:`` lines)."""
    msgs = request.messages
    system = next((str(m.get("content")) for m in msgs if m.get("role") == "system"), "")
    user = next((str(m.get("content")) for m in reversed(msgs) if m.get("role") == "user"), "")
    role, mode = _ROLE.search(system), _MODE.search(user)
    name = role.group(1) if role else "unknown"
    return f"{name}:{mode.group(1)}" if mode else name


def by_role(script: dict[str, list[Reply]]) -> Responder:
    """A responder answering each role (or ``role:mode``) from its own queue, like a real model
    that is asked different things; an unscripted role gets a 400 naming it."""
    queues = {key: list(replies) for key, replies in script.items()}

    def respond(request: Request) -> Reply:
        key = role_key(request)
        queue = queues.get(key) or queues.get(key.split(":", 1)[0]) or []
        if not queue:
            return error(400, f"fake server: no scripted reply left for {key}")
        return queue.pop(0)

    return respond


def _approx_tokens(value: str) -> int:
    return max(1, len(value) // 4)


class FakeOpenAI:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`."""

    def __init__(
        self,
        replies: Iterable[Reply] | Responder = (),
        *,
        lifetime: float = 60.0,
        max_requests: int = 100,
        chunk_chars: int = 7,
    ) -> None:
        self._responder = replies if callable(replies) else None
        self._queue: list[Reply] = [] if callable(replies) else list(replies)
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.chunk_chars = chunk_chars
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    @property
    def url(self) -> str:
        """Base URL to give a client (``http://127.0.0.1:<port>/v1``)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def add(self, *replies: Reply) -> None:
        """Queue more replies."""
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> FakeOpenAI:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving; hung replies wake up and their connections close."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        if self._timer is not None:
            self._timer.cancel()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            count = len(self.requests)
            if count > self.max_requests:
                return error(400, f"fake server: more than {self.max_requests} requests")
            if self._responder is not None:
                return self._responder(request)
            if not self._queue:
                return error(400, f"fake server: no scripted reply left for request {count}")
            return self._queue.pop(0)

    def wait_stopped(self, timeout: float) -> bool:
        """Wait for the server to stop (by :meth:`stop` or its lifetime); True once stopped."""
        return self._stopped.wait(timeout)

    def sleep(self, seconds: float) -> bool:
        """Sleep unless the server stops first; True when the full time passed."""
        return not self._stopped.wait(seconds)


def completion(reply: Reply, body: dict[str, Any], number: int) -> dict[str, Any]:
    """The non-streaming response body for ``reply``."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
            for c in reply.tool_calls]
    return {
        "id": f"chatcmpl-fake-{number}", "object": "chat.completion", "created": int(time.time()),
        "model": str(body.get("model", "fake")),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": _finish(reply)}],
        **({} if reply.omit_usage else {"usage": _usage(reply, body)}),
    }


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _usage(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    usage = dict(reply.usage or {})
    prompt = " ".join(str(m.get("content") or "") for m in body.get("messages") or [])
    usage.setdefault("prompt_tokens", _approx_tokens(prompt))
    usage.setdefault("completion_tokens", _approx_tokens(reply.content or json.dumps(reply.tool_calls)))
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def stream_chunks(reply: Reply, body: dict[str, Any], number: int, size: int) -> list[dict[str, Any]]:
    """The SSE chunks for ``reply`` (content in pieces of ``size`` characters)."""
    base = {"id": f"chatcmpl-fake-{number}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": str(body.get("model", "fake"))}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({"content": reply.content[i:i + size]})
               for i in range(0, len(reply.content), size)]
    for index, call in enumerate(reply.tool_calls):
        chunks.append(chunk({"tool_calls": [{
            "index": index, "id": call["id"], "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["args"])}}]}))
    chunks.append(chunk({}, _finish(reply)))
    if (body.get("stream_options") or {}).get("include_usage") and not reply.omit_usage:
        chunks.append({**base, "choices": [], "usage": _usage(reply, body)})
    return chunks


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        """Quiet: the test asserts on ``requests``, not on a log."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                          time.monotonic())
        if self.path != CHAT_PATH:
            self._send_json(404, {"error": {"message": f"fake server has no {self.path}"}}, {})
            return
        reply = self.fake._next(request)
        number = len(self.fake.requests)
        if reply.delay and not self.fake.sleep(reply.delay):
            return  # stopped while hung: drop the connection unanswered
        try:
            if reply.status != 200:
                self._send_json(reply.status, {"error": {
                    "message": reply.error, "type": "fake_error", "code": str(reply.status)}},
                    reply.headers)
            elif reply.raw is not None:
                self._send(200, reply.raw, "application/json", reply.headers)
            elif body.get("stream"):
                self._send_stream(stream_chunks(reply, body, number, self.fake.chunk_chars))
            else:
                self._send_json(200, completion(reply, body, number), reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing left to tell it

    def _send(self, status: int, data: bytes, ctype: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_stream(self, chunks: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes
        for item in chunks:
            self.wfile.write(f"data: {json.dumps(item)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
