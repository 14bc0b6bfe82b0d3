"""Read-only HTTP access to Triton: metrics, repository index, statistics, model config.

Every call has a total deadline for connect, headers and body (`httpclient.Deadline`: a server that
drips a valid answer byte by byte cannot stall a poll), follows redirects on the same host only,
and has a size cap (a runaway response cannot exhaust memory): of the body, or for the statistics,
read as a stream, of one model's entry and of `STATS_BODY_SHARES` times the cap in all. Failures are
raised as `FetchError` carrying the poll target and a fault kind from `conventions`, which the
exporter counts in `triton_sre_poll_errors_total{target,kind}`. `until(ends_at)` gives a client whose
calls share one deadline (the exporter's poll): each call gets what is left of it, and a call with
nothing left is not made (`BudgetSpent`, kind timeout).

This client never calls Triton's model-control API (load/unload): triton-sre only observes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any
from urllib.parse import quote, urlsplit

import requests

from triton_sre import conventions as c
from triton_sre.httpclient import Deadline, describe, new_session, watching
from triton_sre.redact import bounded, one_line, redact
from triton_sre.triton.statsbody import StatsBodyError, StatsDecoder, shorten

_CHUNK = 64 * 1024
STATS_BODY_SHARES = 16
"""The statistics body may be this many times `max_bytes` in all (512 MiB at the default; 10,000 models ×
3 versions answer 39 MB): streamed, it is capped per entry, and this bounds the whole."""
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
        """The whole body of a 200 answer, at most `max_bytes` of it."""
        payload = bytearray()  # grown in place: no second copy of a large body
        with contextlib.closing(self._stream(target, method, url, body, declared_cap=True)) as chunks:
            for chunk in chunks:
                if len(payload) + len(chunk) > self.max_bytes:
                    message = f"{redact(url)} sent more than {self.max_bytes} bytes"
                    raise FetchError(target, c.FAULT_TOO_LARGE, message)
                payload += chunk
        return payload

    def _stream(
        self, target: str, method: str, url: str, body: bytes | None = None, declared_cap: bool = False
    ) -> Iterator[bytes]:
        """The body of a 200 answer in chunks, the first one empty once the status is known; every
        fault a FetchError. One deadline covers connect, headers and the whole body, however slowly
        the caller iterates and on whichever thread; the connection is registered with it here."""
        shown = redact(url)
        seconds = self._seconds(target, shown)
        own = self.session is None
        http = new_session() if self.session is None else self.session
        armed = Deadline(seconds)
        armed.start()
        try:
            with watching(armed):
                response = self._request(http, target, method, url, shown, body, seconds)
            with response:
                declared = response.headers.get("Content-Length")
                if declared_cap and declared and declared.isdigit() and int(declared) > self.max_bytes:
                    message = f"{shown} declares {declared} bytes, limit is {self.max_bytes}"
                    raise FetchError(target, c.FAULT_TOO_LARGE, message)
                status = response.status_code
                if status in _REDIRECTS:
                    raise FetchError(
                        target, c.FAULT_HTTP_STATUS, f"{shown} redirects to another host (not followed)"
                    )
                try:
                    if status != 200:
                        raise _status(target, shown, status, _first_bytes(response, _EXCERPT_BYTES))
                    yield b""
                    yield from response.iter_content(_CHUNK)
                except requests.exceptions.ContentDecodingError as exc:  # the connection was fine: the body
                    encoding = bounded(response.headers.get("Content-Encoding", ""), yaml_hints=False)
                    message = f"{shown}: the body does not decode as its Content-Encoding {encoding} says"
                    raise FetchError(target, c.FAULT_PARSE, message) from exc
                except requests.RequestException as exc:
                    kind = c.FAULT_TIMEOUT if _is_timeout(exc) else c.FAULT_CONNECTION
                    raise FetchError(target, kind, f"reading {shown}: {describe(exc)}") from exc
            if armed.expired:  # cut at the deadline, the truncated body may have looked complete
                raise _late(target, shown, seconds)
        except FetchError as exc:
            if armed.expired:  # the cut socket surfaced as a read or connection error
                raise _late(target, shown, seconds) from exc
            raise
        finally:
            armed.stop()
            if own:
                http.close()

    def _request(
        self,
        http: requests.Session,
        target: str,
        method: str,
        url: str,
        shown: str,
        body: bytes | None,
        seconds: float,
    ) -> requests.Response:
        """The response (headers read, body not); FetchError for transport faults."""
        try:
            return http.request(
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
        except OSError as exc:  # below requests' errors: no descriptor left (a lazy import could not open)
            message = f"cannot reach {shown}: {one_line(str(exc))}"
            raise FetchError(target, c.FAULT_CONNECTION, message) from exc

    def _json(self, target: str, method: str, url: str, body: bytes | None = None) -> Any:
        payload = self._fetch(target, method, url, body)
        try:
            return json.loads(payload)
        except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep to decode
            why = shorten(exc)
            if payload.lstrip()[:1] == b"<":  # a proxy in front of Triton answering 200 with its own page
                why = "an HTML page came instead (a proxy's login or error page? is it Triton's HTTP port?)"
            elif not payload.strip():  # Triton's metrics port answers every GET but /metrics so
                why = f"an empty answer came instead ({_METRICS_PORT_HINT})"
            raise FetchError(target, c.FAULT_PARSE, f"{redact(url)} did not return JSON: {why}") from None

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

        The request is made and its status checked before this returns; the body is read as the
        caller iterates, under the same deadline, and each `model_stats` entry is decoded as soon as
        its bytes are in (`statsbody`): memory holds one entry, not the body, so `max_bytes` caps an
        entry (10,000 models × 3 versions answer 39 MB). A fault while reading or decoding raises
        FetchError during iteration.
        """
        chunks = self._stream(c.TARGET_STATS, "GET", f"{self._base}/v2/models/stats")
        next(chunks)  # the request, on the caller's thread (the poll's rescue thread reads it in time)
        whole = _bounded(chunks, self.max_bytes * STATS_BODY_SHARES)
        return _stats_entries(whole, StatsDecoder(self.max_bytes))

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


def iter_model_stats(text: str) -> Iterator[dict[str, Any]]:
    """The entries of a `/v2/models/stats` body, decoded one by one (any other shape: decoded whole)."""
    decoder = StatsDecoder()
    return _faults(chain(decoder.feed_text(text), decoder.finish()))


def _bounded(chunks: Iterator[bytes], limit: int) -> Iterator[bytes]:
    """The chunks of the statistics body, at most `limit` bytes of them: each entry is capped and dropped once
    decoded, but the poll keeps every entry's figures, so a runaway answer of tiny entries is cut too."""
    seen = 0
    with contextlib.closing(chunks):
        for chunk in chunks:
            seen += len(chunk)
            if seen > limit:
                message = f"/v2/models/stats sent more than {limit} bytes of statistics"
                raise FetchError(c.TARGET_STATS, c.FAULT_TOO_LARGE, message)
            yield chunk


def _stats_entries(chunks: Iterator[bytes], decoder: StatsDecoder) -> Iterator[dict[str, Any]]:
    with contextlib.closing(chunks):  # an iteration given up releases the connection at once
        yield from _faults(decoder.entries(chunks))


def _faults(entries: Iterator[Any]) -> Iterator[dict[str, Any]]:
    try:
        yield from entries
    except StatsBodyError as exc:
        raise FetchError(c.TARGET_STATS, exc.kind, exc.message) from None


def _first_bytes(response: requests.Response, limit: int) -> bytes:
    head = bytearray()
    for chunk in response.iter_content(_CHUNK):
        head += chunk
        if len(head) >= limit:
            break
    return bytes(head[:limit])


def _status(target: str, shown: str, status: int, head: bytes) -> FetchError:
    excerpt = one_line(head.decode("utf-8", "replace"), _EXCERPT_BYTES)
    message = f"{shown} answered HTTP {status}: {excerpt}"
    parts = urlsplit(shown)
    if _API_TWICE in f"{parts.path}/":  # `--triton-url http://triton:8000/v2`: the API path is added to it
        root = f"{parts.scheme}://{parts.netloc}"
        message += f" (the Triton URL ends in {_API_TWICE[:3]}: give the server's root, {root})"
    elif status == 405 and parts.path.startswith("/v2/"):  # the metrics port refuses the index's POST so
        message += f" ({_METRICS_PORT_HINT})"
    return FetchError(target, c.FAULT_HTTP_STATUS, message)


_API_TWICE = "/v2/v2/"
_METRICS_PORT_HINT = (  # a 405 to the index's POST, an empty 200 to any other GET
    "is it Triton's metrics port? It serves /metrics only: "
    f"give its HTTP port, {c.TRITON_HTTP_PORT} by default"
)


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
