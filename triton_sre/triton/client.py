"""Read-only HTTP access to Triton: metrics, repository index, statistics, model config.

Every call has a total deadline for connect, headers and body (`httpclient.deadline`: a server that
drips a valid answer byte by byte cannot stall a poll), follows redirects on the same host only,
and has a size cap (a runaway response cannot exhaust memory). Failures are raised as `FetchError`
carrying the poll target and a fault kind from `conventions`, which the exporter counts in
`triton_sre_poll_errors_total{target,kind}`. `until(ends_at)` gives a client whose calls share one
deadline (the exporter's poll): each call gets what is left of it, and a call with nothing left is
not made (`BudgetSpent`, kind timeout).

This client never calls Triton's model-control API (load/unload): triton-sre only observes.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import requests

from triton_sre import conventions as c
from triton_sre.config import default_metrics_url as default_metrics_url  # its home is the config
from triton_sre.httpclient import deadline, describe, new_session
from triton_sre.redact import one_line, redact

_CHUNK = 64 * 1024
_EXCERPT_BYTES = 200  # of an error page, quoted on one line (an HTML page is hundreds of lines)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_LEAST_START = 0.01  # seconds: a call with less of the shared deadline left is not started


class FetchError(Exception):
    """A poll of one Triton endpoint failed; `kind` is one of `conventions.FAULT_KINDS`. The message
    carries no credential (URLs are redacted where it is built)."""

    def __init__(self, target: str, kind: str, message: str) -> None:
        message = redact(message)
        super().__init__(f"{target}: {kind}: {message}")
        self.target = target
        self.kind = kind
        self.message = message


class BudgetSpent(FetchError):
    """A call not made: the shared deadline (`TritonClient.until`) had passed; kind timeout."""


@dataclass(frozen=True)
class TritonClient:
    """Fetches from one Triton server. Thread-safe as long as `session` is not shared elsewhere."""

    triton_url: str
    metrics_url: str
    timeout: float = c.DEFAULT_TIMEOUT_SECONDS
    max_bytes: int = c.DEFAULT_MAX_RESPONSE_BYTES
    session: requests.Session | None = None
    ends_at: float | None = None  # time.monotonic() by which every call ends (see `until`)

    def until(self, ends_at: float) -> TritonClient:
        """This client with every call ending by `ends_at` (`time.monotonic()`), each under
        `min(timeout, what is left)`: one poll's calls share one deadline."""
        return dataclasses.replace(self, ends_at=ends_at)

    @property
    def separate_ports(self) -> bool:
        """Metrics and the HTTP API are served on different scheme://host:port (two listeners)."""
        here, there = urlsplit(self.triton_url), urlsplit(self.metrics_url)
        return (here.scheme, here.netloc) != (there.scheme, there.netloc)

    def _seconds(self, target: str, shown: str) -> float:
        """The time this call may take; BudgetSpent when the shared deadline leaves none."""
        if self.ends_at is None:
            return self.timeout
        left = self.ends_at - time.monotonic()
        if left < _LEAST_START:
            raise BudgetSpent(
                target, c.FAULT_TIMEOUT, f"{shown} not requested: the poll's deadline had passed"
            )
        return min(self.timeout, left)

    # -- raw transport -------------------------------------------------------------------------
    def _fetch(self, target: str, method: str, url: str, body: bytes | None = None) -> bytearray:
        shown = redact(url)
        seconds = self._seconds(target, shown)
        own = self.session is None
        http = new_session() if self.session is None else self.session
        try:
            with deadline(seconds) as armed:
                try:
                    payload, status = self._exchange(http, target, method, url, shown, body, seconds)
                except FetchError as exc:
                    if armed.expired:  # the cut socket surfaced as a read or connection error
                        raise _late(target, shown, seconds) from exc
                    raise
            if armed.expired:  # cut at the deadline, the truncated body may have looked complete
                raise _late(target, shown, seconds)
        finally:
            if own:
                http.close()
        if status in _REDIRECTS:
            raise FetchError(target, c.FAULT_HTTP_STATUS, f"{shown} redirects to another host (not followed)")
        if status != 200:
            excerpt = one_line(bytes(payload[:_EXCERPT_BYTES]).decode("utf-8", "replace"), _EXCERPT_BYTES)
            raise FetchError(target, c.FAULT_HTTP_STATUS, f"{shown} answered HTTP {status}: {excerpt}")
        return payload

    def _exchange(
        self,
        http: requests.Session,
        target: str,
        method: str,
        url: str,
        shown: str,
        body: bytes | None,
        seconds: float,
    ) -> tuple[bytearray, int]:
        """One request: (body, status); FetchError for transport faults and oversized answers."""
        try:
            response = http.request(
                method,
                url,
                data=body,
                stream=True,
                timeout=(seconds, seconds),
                headers={"Accept-Encoding": "identity"},
            )
        except requests.Timeout as exc:
            message = f"no answer from {shown} within {seconds:.3g}s"
            raise FetchError(target, c.FAULT_TIMEOUT, message) from exc
        except requests.RequestException as exc:
            raise FetchError(target, c.FAULT_CONNECTION, f"cannot reach {shown}: {describe(exc)}") from exc
        with response:
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > self.max_bytes:
                raise FetchError(
                    target, c.FAULT_TOO_LARGE, f"{shown} declares {declared} bytes, limit is {self.max_bytes}"
                )
            payload = bytearray()  # grown in place: no second copy of a large body
            try:
                for chunk in response.iter_content(_CHUNK):
                    if len(payload) + len(chunk) > self.max_bytes:
                        raise FetchError(
                            target, c.FAULT_TOO_LARGE, f"{shown} sent more than {self.max_bytes} bytes"
                        )
                    payload += chunk
            except requests.RequestException as exc:
                kind = c.FAULT_TIMEOUT if _is_timeout(exc) else c.FAULT_CONNECTION
                raise FetchError(target, kind, f"reading {shown}: {describe(exc)}") from exc
            return payload, response.status_code

    def _json(self, target: str, method: str, url: str, body: bytes | None = None) -> Any:
        payload = self._fetch(target, method, url, body)
        try:
            return json.loads(payload)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to decode
            raise FetchError(target, c.FAULT_PARSE, f"{url} did not return JSON: {_short(exc)}") from None

    # -- Triton endpoints ----------------------------------------------------------------------
    def metrics(self) -> bytes | bytearray:
        """Raw Prometheus text from the metrics endpoint."""
        return self._fetch(c.TARGET_METRICS, "GET", self.metrics_url)

    def repository_index(self) -> list[dict[str, Any]]:
        """`POST /v2/repository/index`: every model Triton knows, with state and reason."""
        data = self._json(c.TARGET_INDEX, "POST", f"{self._base}/v2/repository/index", b"{}")
        if not isinstance(data, list) or not all(isinstance(e, dict) and "name" in e for e in data):
            raise FetchError(c.TARGET_INDEX, c.FAULT_PARSE, "repository index is not a list of models")
        return data

    def server_metadata(self) -> dict[str, Any]:
        """`GET /v2`: the server's name, version and extensions."""
        data = self._json(c.TARGET_SERVER, "GET", f"{self._base}/v2")
        if not isinstance(data, dict):
            raise FetchError(c.TARGET_SERVER, c.FAULT_PARSE, "server metadata is not an object")
        return data

    def all_stats(self) -> Iterator[dict[str, Any]]:
        """`GET /v2/models/stats`: statistics of every model version in one call.

        The body is fetched at once; its `model_stats` entries are decoded one at a time as the
        caller iterates, so a 1,000-model answer never exists as one tree of Python objects. A
        malformed entry raises FetchError(parse) during iteration.
        """
        body = self._fetch(c.TARGET_STATS, "GET", f"{self._base}/v2/models/stats")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FetchError(c.TARGET_STATS, c.FAULT_PARSE, f"statistics are not UTF-8: {exc}") from exc
        return iter_model_stats(text)

    def model_config(self, model: str, version: str = "") -> dict[str, Any]:
        """`GET /v2/models/<m>[/versions/<v>]/config`."""
        path = f"/v2/models/{quote(model, safe='')}"
        if version:
            path += f"/versions/{quote(version, safe='')}"
        data = self._json(c.TARGET_CONFIG, "GET", f"{self._base}{path}/config")
        if not isinstance(data, dict):
            raise FetchError(c.TARGET_CONFIG, c.FAULT_PARSE, f"config of {model!r} is not an object")
        return data

    @property
    def _base(self) -> str:
        return self.triton_url.rstrip("/")


_STATS_START = re.compile(r'\s*\{\s*"model_stats"\s*:\s*\[')
_SPACE = re.compile(r"\s*")


def iter_model_stats(text: str) -> Iterator[dict[str, Any]]:
    """The entries of a `/v2/models/stats` body, decoded one by one (any other shape: decoded whole)."""
    try:
        start = _STATS_START.match(text)
        if start is None:  # another key first, or not an object: decode it whole
            data = json.loads(text)
            stats = data.get("model_stats") if isinstance(data, dict) else None
            if not isinstance(stats, list):
                raise ValueError("no model_stats list")
            yield from stats
            return
        decoder = json.JSONDecoder()
        at = _SPACE.match(text, start.end()).end()
        if text.startswith("]", at):
            return
        while True:
            entry, at = decoder.raw_decode(text, at)
            yield entry
            at = _SPACE.match(text, at).end()
            if text.startswith(",", at):
                at = _SPACE.match(text, at + 1).end()
            elif text.startswith("]", at):
                return
            else:
                raise ValueError(f"expected ',' or ']' at character {at}")
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to decode
        raise FetchError(
            c.TARGET_STATS, c.FAULT_PARSE, f"statistics are not valid JSON: {_short(exc)}"
        ) from None


def _late(target: str, shown: str, timeout: float) -> FetchError:
    return FetchError(target, c.FAULT_TIMEOUT, f"{shown} did not finish within {timeout:.3g}s")


def _is_timeout(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, (requests.Timeout, TimeoutError)) or "timed out" in str(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
