"""Development tool: a local stand-in for the Slack Web API subset triton-sre's bot calls.

Not a Slack client and never talks to Slack: it runs on loopback for development, the tests,
`triton-sre stack up` and the demo, so the bot can be exercised without a Slack workspace. The
limits it enforces are Slack's, defined once in `slack_limits.py` with the real client.

Speaks ``auth.test``, ``chat.postMessage``, ``chat.update``, ``files.getUploadURLExternal``,
the upload URL it hands out, and ``files.completeUploadExternal`` at ``/api/<method>`` (point
slack_sdk's ``WebClient(base_url=...)`` or ``$SLACK_API_URL`` at ``http://HOST:PORT/api/``).

It enforces what real Slack enforces and the bot must respect:

- ``invalid_auth`` unless ``Authorization: Bearer <token>`` carries the configured token; that token itself
  refused with Slack's code (``token_revoked``, ``account_inactive``, ``invalid_auth``) once `revoke` is
  called, until `reinstate`;
- ``invalid_blocks`` for more than 50 blocks, a section text over 3,000 characters, a header over
  150, a button text over 75, a non-http(s) button URL, more than 10 fields or 25 actions;
- ``msg_too_long`` for a ``text`` over 40,000 characters; ``no_text`` without text and blocks;
- ``message_not_found`` for ``chat.update`` of an unknown ``ts``; ``channel_not_found`` without a channel.

Faults are injected from Python (`SlackStandin.fail_next`, `go_down`, `come_up`) or over HTTP
(``POST /_standin/fault`` with ``{"status": 429, "retry_after": 1, "count": 1}``; ``GET
/_standin/calls`` returns every recorded call, ``?since=N`` those after the first N, with the record's
id in the ``X-Standin-Record`` header: a new id means a new record, after a restart or a reset).
Every call is recorded, rejected or not.

``python -m triton_sre.bot.dev_slack_standin --port 8010 --token xoxb-test`` runs it in the
foreground and prints what would be posted. Its HTTP handler is the shared `httpserve.SafeHandler`
on a `BoundedHTTPServer` (read timeouts, 405 for other methods, redacted debug log lines).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from triton_sre import conventions as c
from triton_sre.bot.slack_limits import MAX_MESSAGE_TEXT, text_of, validate_blocks
from triton_sre.httpserve import BoundedHTTPServer, SafeHandler
from triton_sre.shutdown import stop_on_signals, wait_until_set

MAX_BODY = 10 * 1024 * 1024  # the stand-in's own cap on a request body
RECORD_HEADER = "X-Standin-Record"

__all__ = ["RECORD_HEADER", "Call", "Fault", "SlackStandin"]


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    status: int
    response: dict[str, Any]
    at: float
    authorized: bool

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


@dataclass
class Fault:
    status: int
    retry_after: float | None = None
    count: int = 1
    methods: tuple[str, ...] = ()  # empty: any method


@dataclass
class _Message:
    channel: str
    ts: str
    text: str
    blocks: list[Any]
    thread_ts: str | None
    edits: int = 0
    files: list[str] = field(default_factory=list)


class SlackStandin:
    """The stand-in server. ``start()`` binds (port 0 picks a free one); ``url`` is the API base."""

    def __init__(
        self,
        token: str = c.SLACK_STANDIN_TOKEN,
        host: str = "127.0.0.1",
        port: int = 0,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        self.token = token
        self.host = host
        self.port = port
        self.echo = echo
        self._lock = threading.Condition()
        self._calls: list[Call] = []
        self.record_id = uuid.uuid4().hex
        self._faults: list[Fault] = []
        self.refusal = ""  # Slack's error for the configured token itself (`revoke`); empty: taken
        self._messages: dict[tuple[str, str], _Message] = {}
        self._uploads: dict[str, dict[str, Any]] = {}
        self._ts = itertools.count(1)
        self._server: BoundedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/api/"

    def start(self) -> SlackStandin:
        standin = self

        class Handler(_Handler):
            owner = standin

        server = BoundedHTTPServer((self.host, self.port), Handler)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="slack-standin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    go_down = stop
    """Downtime: the port refuses connections until `come_up`."""

    def come_up(self) -> None:
        if self._server is None:
            self.start()

    def __enter__(self) -> SlackStandin:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- faults and records ---------------------------------------------------------------------
    def revoke(self, error: str = "token_revoked") -> None:
        """Refuse the configured token from now on with Slack's ``error`` (a token revoked, an app
        uninstalled: ``token_revoked``; a deactivated account: ``account_inactive``; ``invalid_auth``)."""
        self.refusal = error

    def reinstate(self) -> None:
        """Take the configured token again (an account reactivated)."""
        self.refusal = ""

    def fail_next(
        self,
        count: int = 1,
        status: int = 429,
        retry_after: float | None = None,
        methods: tuple[str, ...] = (),
    ) -> None:
        """Answer the next `count` calls (of `methods`, or any) with HTTP `status`."""
        with self._lock:
            self._faults.append(Fault(status, retry_after, count, methods))

    def reset(self) -> None:
        with self._lock:
            self._faults.clear()
            self._calls.clear()
            self.record_id = uuid.uuid4().hex

    def calls(self, method: str | None = None, *, ok_only: bool = False) -> list[Call]:
        with self._lock:
            return [
                call
                for call in self._calls
                if (method is None or call.method == method) and (call.ok or not ok_only)
            ]

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(min(left, 0.1))
        return True

    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        with self._lock:
            found = self._messages.get((channel, ts))
            return None if found is None else dict(found.__dict__)

    def delete(self, channel: str, ts: str) -> bool:
        """A message deleted in Slack (by a person tidying the channel): later edits of it answer
        ``message_not_found``, replies under it ``thread_not_found``."""
        with self._lock:
            return self._messages.pop((channel, ts), None) is not None

    def thread(self, channel: str, ts: str) -> list[dict[str, Any]]:
        with self._lock:
            return [
                dict(m.__dict__)
                for m in self._messages.values()
                if m.channel == channel and m.thread_ts == ts
            ]

    # -- request handling -----------------------------------------------------------------------
    def _take_fault(self, method: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.count > 0 and (not fault.methods or method in fault.methods):
                    fault.count -= 1
                    if fault.count == 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _record(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
            self._lock.notify_all()

    def handle(
        self, method: str, params: dict[str, Any], authorization: str
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        fault = self._take_fault(method)
        headers: dict[str, str] = {}
        authorized = authorization == f"Bearer {self.token}"
        if fault is not None:
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            body = {"ok": False, "error": "ratelimited" if fault.status == 429 else "internal_error"}
            self._record(Call(method, params, fault.status, body, time.time(), authorized))
            return fault.status, body, headers
        if not authorized:
            body = {"ok": False, "error": "not_authed" if not authorization else "invalid_auth"}
        elif self.refusal:
            body = {"ok": False, "error": self.refusal}
        else:
            body = self._dispatch(method, params)
        self._record(Call(method, params, 200, body, time.time(), authorized))
        if self.echo is not None and body.get("ok") and method.startswith("chat."):
            self.echo(_describe(method, params, body))
        return 200, body, headers

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://standin.slack.invalid/",
                "team": "standin",
                "user": "triton-sre",
                "team_id": "T0STANDIN",
                "user_id": "U0STANDIN",
                "bot_id": "B0STANDIN",
            }
        if method in ("chat.postMessage", "chat.update"):
            return self._chat(method, params)
        if method == "files.getUploadURLExternal":
            file_id = "F" + uuid.uuid4().hex[:10].upper()
            try:
                length = int(params.get("length", 0))
            except (TypeError, ValueError):
                return {"ok": False, "error": "invalid_arguments"}
            if not params.get("filename") or length <= 0:
                return {"ok": False, "error": "invalid_arguments"}
            with self._lock:
                self._uploads[file_id] = {"filename": params["filename"], "length": length, "data": None}
            return {
                "ok": True,
                "file_id": file_id,
                "upload_url": f"http://{self.host}:{self.port}/upload/{file_id}",
            }
        if method == "files.completeUploadExternal":
            files = params.get("files")
            if isinstance(files, str):
                files = json.loads(files)
            if not isinstance(files, list) or not files:
                return {"ok": False, "error": "invalid_arguments"}
            channel = params.get("channel_id") or params.get("channels")
            thread_ts = params.get("thread_ts")
            done = []
            with self._lock:
                for entry in files:
                    upload = self._uploads.get(entry.get("id", ""))
                    if upload is None or upload["data"] is None:
                        return {"ok": False, "error": "file_not_found"}
                    done.append({"id": entry["id"], "title": entry.get("title") or upload["filename"]})
                    if channel and thread_ts and (channel, thread_ts) in self._messages:
                        self._messages[(channel, thread_ts)].files.append(entry["id"])
            return {"ok": True, "files": done}
        return {"ok": False, "error": "unknown_method"}

    def _chat(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        channel = params.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        blocks = params.get("blocks")
        if isinstance(blocks, str):
            try:
                blocks = json.loads(blocks)
            except ValueError:
                return {"ok": False, "error": "invalid_blocks_format"}
        text = params.get("text") or ""
        if not text and not blocks:
            return {"ok": False, "error": "no_text"}
        if len(text) > MAX_MESSAGE_TEXT:
            return {"ok": False, "error": "msg_too_long"}
        if blocks is not None:
            problem = validate_blocks(blocks)
            if problem is not None:
                return {"ok": False, "error": "invalid_blocks", "errors": [problem]}
        with self._lock:
            if method == "chat.update":
                ts = str(params.get("ts") or "")
                found = self._messages.get((channel, ts))
                if found is None:
                    return {"ok": False, "error": "message_not_found"}
                found.text, found.blocks, found.edits = text, blocks or [], found.edits + 1
                return {"ok": True, "channel": channel, "ts": ts, "text": text}
            ts = self._next_ts()
            thread_ts = params.get("thread_ts")
            if thread_ts and (channel, str(thread_ts)) not in self._messages:
                return {"ok": False, "error": "thread_not_found"}
            self._messages[(channel, ts)] = _Message(channel, ts, text, blocks or [], thread_ts)
        return {"ok": True, "channel": channel, "ts": ts, "message": {"text": text, "ts": ts}}

    def _upload(self, file_id: str, data: bytes) -> int:
        with self._lock:
            upload = self._uploads.get(file_id)
            if upload is None:
                return 404
            upload["data"] = data
        self._record(
            Call("upload", {"file_id": file_id, "bytes": len(data)}, 200, {"ok": True}, time.time(), True)
        )
        return 200

    def calls_json(self, since: int = 0) -> tuple[str, list[dict[str, Any]]]:
        """The record's id and its calls after the first `since`, as JSON-ready dicts."""
        with self._lock:
            return self.record_id, [call.__dict__ for call in self._calls[since:]]


def _describe(method: str, params: dict[str, Any], body: dict[str, Any]) -> str:
    where = f"{params.get('channel')} ts={body.get('ts')}"
    if params.get("thread_ts"):
        where += f" (thread of {params['thread_ts']})"
    lines = [f"--- {method} {where}", str(params.get("text") or "")]
    blocks = params.get("blocks")
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    for block in blocks or []:
        text = text_of(block.get("text"))
        if text:
            lines.append(f"  [{block.get('type')}] {text}")
        for element in block.get("elements") or []:
            if element.get("url"):
                lines.append(f"  [button] {text_of(element.get('text'))}: {element['url']}")
            elif element.get("text"):
                lines.append(f"  [{block.get('type')}] {text_of(element)}")
    return "\n".join(lines)


class _Handler(SafeHandler):
    """GET and POST as Slack's Web API and the upload URL; any other method is 405 (SafeHandler)."""

    owner: SlackStandin
    protocol_version = "HTTP/1.1"
    server_version = "triton-sre-dev-slack-standin"

    def _read(self) -> bytes | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._send(413, {"ok": False, "error": "request_too_large"})
            return None
        return self.read_body(length) if length else b""

    def _send(
        self, status: int, body: dict[str, Any] | list[Any], headers: dict[str, str] | None = None
    ) -> None:
        self.send_json(status, body, headers, content_type="application/json; charset=utf-8")

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/_standin/calls":
            since = dict(parse_qsl(parts.query)).get("since", "0")
            if not since.isdigit() or len(since) > 18:
                self._send(400, {"ok": False, "error": "since: a count of calls (0, 1, 2, ...)"})
                return
            record, calls = self.owner.calls_json(int(since))
            self._send(200, calls, {RECORD_HEADER: record})
        elif parts.path.startswith("/api/"):
            self._api(parts.path[5:], dict(parse_qsl(parts.query)))
        else:
            self._send(404, {"ok": False, "error": "not_found"})

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        raw = self._read()
        if raw is None:
            return
        if parts.path.startswith("/upload/"):
            status = self.owner._upload(parts.path[len("/upload/") :], raw)
            data = b"OK - %d" % len(raw)
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        if parts.path == "/_standin/fault":
            spec = json.loads(raw or b"{}")
            self.owner.fail_next(
                int(spec.get("count", 1)),
                int(spec.get("status", 429)),
                spec.get("retry_after"),
                tuple(spec.get("methods", ())),
            )
            self._send(200, {"ok": True})
            return
        if parts.path == "/_standin/reset":
            self.owner.reset()
            self._send(200, {"ok": True})
            return
        if not parts.path.startswith("/api/"):
            self._send(404, {"ok": False, "error": "not_found"})
            return
        params: dict[str, Any] = dict(parse_qsl(parts.query))
        ctype = self.headers.get("Content-Type", "")
        try:
            if "json" in ctype:
                decoded = json.loads(raw or b"{}")
                if not isinstance(decoded, dict):
                    raise ValueError("not an object")
                params.update(decoded)
            elif raw:
                params.update(parse_qsl(raw.decode("utf-8")))
        except (ValueError, UnicodeDecodeError):
            self._send(200, {"ok": False, "error": "invalid_json"})
            return
        self._api(parts.path[5:], params)

    def _api(self, method: str, params: dict[str, Any]) -> None:
        params.pop("token", None)  # never recorded
        status, body, headers = self.owner.handle(method, params, self.headers.get("Authorization", ""))
        self._send(status, body, headers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m triton_sre.bot.dev_slack_standin",
        description=(
            "Development tool: a local stand-in for the Slack Web API, for development, tests, "
            "`triton-sre stack up` and the demo (never talks to Slack). Prints what the bot would post."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="port (0: a free one, printed)")
    parser.add_argument("--token", default=c.SLACK_STANDIN_TOKEN, help="the bot token it accepts")
    args = parser.parse_args(argv)

    def echo(text: str) -> None:
        print(text, flush=True)

    standin = SlackStandin(args.token, args.host, args.port, echo=echo).start()
    print(f"Slack stand-in (dev tool) on {standin.url} (set SLACK_API_URL to it)", flush=True)
    try:
        wait_until_set(stop_on_signals())
    finally:
        standin.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
