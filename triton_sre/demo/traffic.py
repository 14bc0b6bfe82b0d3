"""Bounded inference traffic for the sample models, over Triton's HTTP/JSON protocol (KServe v2).

Concurrency comes from threads, so a dynamic batcher sees simultaneous requests and a single
instance model builds a queue. Every run is bounded in time and in count, and only talks to a
loopback address: it is a demo and test tool, not a load generator for real fleets.
"""

from __future__ import annotations

import ipaddress
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests

from triton_sre.demo import (
    INPUT_NAME,
    LLM_MAX_MODEL_LEN,
    LLM_MAX_TOKENS,
    LLM_MODELS,
    LLM_TEXT_INPUT,
    SLOW_MODEL,
    SLOW_MODEL_DIMS,
    TAIL_MODEL,
    TEXT_ECHO,
    VECTOR_SCALE,
    VECTOR_SCALE_DIMS,
)
from triton_sre.httpclient import new_session

Payload = dict[str, Any]

MAX_DURATION_S = 3600.0
MAX_REQUESTS = 1_000_000
MAX_CONCURRENCY = 256
MAX_ERROR_SAMPLES = 20
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MIX: Mapping[str, int] = {
    VECTOR_SCALE: 8,
    TEXT_ECHO: 2,
    SLOW_MODEL: 3,
    TAIL_MODEL: 1,
    **{llm: 2 for llm in LLM_MODELS},  # streamed, varied prompt and output lengths
}


# ---------------------------------------------------------------------------- payloads
def vector_scale_payload(batch: int = 1, value: float = 1.0) -> Payload:
    """``batch`` rows of ``VECTOR_SCALE_DIMS`` FP32 values."""
    return {
        "inputs": [
            {
                "name": INPUT_NAME,
                "shape": [batch, VECTOR_SCALE_DIMS],
                "datatype": "FP32",
                "data": [float(value)] * (batch * VECTOR_SCALE_DIMS),
            }
        ]
    }


def text_echo_payload(texts: Sequence[str] = ("hello triton",)) -> Payload:
    """One row per string; strings travel as BYTES in JSON."""
    return {
        "inputs": [{"name": INPUT_NAME, "shape": [len(texts), 1], "datatype": "BYTES", "data": list(texts)}]
    }


def slow_model_payload(value: float = 1.0) -> Payload:
    """slow_model (and tail_model, same tensors) has no batch dimension (max_batch_size 0)."""
    return {
        "inputs": [
            {
                "name": INPUT_NAME,
                "shape": [SLOW_MODEL_DIMS],
                "datatype": "FP32",
                "data": [float(value)] * SLOW_MODEL_DIMS,
            }
        ]
    }


def llm_payload(rng: random.Random | None = None, *, saturate: bool = False) -> Payload:
    """A generate_stream body for an LLM model: varied prompt and output lengths (tokens are words).

    ``saturate`` asks for maximal sequences (prompt + output = the model length), so every
    sequence holds the same number of KV blocks: LLM_MAX_NUM_SEQS clients fill the cache to 100 %,
    a finished sequence's blocks admit the next one at once, and further clients wait.
    """
    rng = rng or random.Random()
    if saturate:
        prompt = rng.randint(180, 200)
        output = LLM_MAX_MODEL_LEN - prompt
    else:
        prompt, output = rng.randint(8, 120), rng.randint(8, 48)
    return {LLM_TEXT_INPUT: " ".join(["tok"] * prompt), LLM_MAX_TOKENS: output}


def llm_failing_payload() -> Payload:
    """Longer than the model's length: the LLM model answers with an error response."""
    return {LLM_TEXT_INPUT: "tok", LLM_MAX_TOKENS: LLM_MAX_MODEL_LEN}


def stream_generate(
    session: requests.Session, url: str, payload: Payload, timeout: float
) -> tuple[float, float | None, int, str | None]:
    """One POST to ``.../generate_stream``: (latency, time to first token, tokens, error or None).

    Triton answers with server-sent events, one ``data: {...}`` per streamed response; an error
    (e.g. a request longer than the model's length) arrives as an event carrying ``error``.
    """
    started = time.perf_counter()
    first: float | None = None
    tokens = 0
    try:
        with session.post(url, json=payload, timeout=timeout, stream=True) as response:
            if response.status_code != 200:
                error = f"HTTP {response.status_code}: {response.text}"[:300]
                return time.perf_counter() - started, None, 0, error
            for line in response.iter_lines():
                if not line.startswith(b"data:"):
                    continue
                try:
                    event = json.loads(line[5:])
                except ValueError:
                    return time.perf_counter() - started, first, tokens, f"bad event: {line[:100]!r}"
                if isinstance(event, dict) and "error" in event:
                    return time.perf_counter() - started, first, tokens, str(event["error"])[:300]
                if first is None:
                    first = time.perf_counter() - started
                tokens += 1
    except requests.RequestException as exc:
        return time.perf_counter() - started, first, tokens, f"{type(exc).__name__}: {exc}"[:300]
    return time.perf_counter() - started, first, tokens, None


def failing_payload(model: str) -> Payload:
    """A well-formed request that makes the sample model raise in ``execute``.

    Triton counts ``nv_inference_request_failure{reason="BACKEND"}`` for every request of that
    execution (batchmates of a failing request on a batched model fail with it).
    """
    if model == VECTOR_SCALE:
        return vector_scale_payload(value=-1.0)
    if model in (SLOW_MODEL, TAIL_MODEL):
        return slow_model_payload(value=-1.0)
    if model == TEXT_ECHO:
        return text_echo_payload(("",))
    if model in LLM_MODELS:
        return llm_failing_payload()
    raise ValueError(f"no failing payload for model {model!r}")


def payload_for(model: str) -> Payload:
    """The default payload of a sample model."""
    builders = {
        VECTOR_SCALE: vector_scale_payload,
        TEXT_ECHO: text_echo_payload,
        SLOW_MODEL: slow_model_payload,
        **{llm: llm_payload for llm in LLM_MODELS},
        TAIL_MODEL: slow_model_payload,
    }
    if model not in builders:
        raise ValueError(f"no default payload for model {model!r}; pass payload=")
    return builders[model]()


# ---------------------------------------------------------------------------- safety
def check_loopback(url: str) -> str:
    """Return ``url`` without a trailing slash if its host resolves only to loopback; else ValueError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"traffic needs an http(s) URL, not {url!r}")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise ValueError(f"cannot resolve {parts.hostname!r}: {exc}") from exc
    addresses = {info[4][0] for info in infos}
    if not addresses or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        raise ValueError(
            f"traffic is only sent to loopback addresses; {parts.hostname} is {sorted(addresses)}"
        )
    return url.rstrip("/")


def infer(
    http_url: str,
    model: str,
    payload: Payload | None = None,
) -> dict[str, Any]:
    """One inference; returns Triton's JSON response, raises ``requests.HTTPError`` on an error status."""
    url = f"{check_loopback(http_url)}/v2/models/{model}/infer"
    body = payload if payload is not None else payload_for(model)
    with new_session() as session:  # (loopback never through an environment proxy)
        response = session.post(url, json=body, timeout=DEFAULT_TIMEOUT_S)
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


# ---------------------------------------------------------------------------- results
@dataclass
class TrafficResult:
    """What a run did."""

    model: str
    ok: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    """The first few distinct error messages."""
    duration_s: float = 0.0

    @property
    def total(self) -> int:
        return self.ok + self.failed

    def _record(self, error: str | None) -> None:
        if error is None:
            self.ok += 1
        else:
            self.failed += 1
            if len(self.errors) < MAX_ERROR_SAMPLES and error not in self.errors:
                self.errors.append(error)


def _one_request(session: requests.Session, url: str, payload: Payload, timeout: float) -> str | None:
    """One POST to ``.../infer``: the error, or None."""
    try:
        response = session.post(url, json=payload, timeout=timeout)
    except requests.RequestException as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    if response.status_code != 200:
        try:
            detail = str(response.json().get("error", response.text))
        except ValueError:
            detail = response.text
        return f"HTTP {response.status_code}: {detail}"[:300]
    return None


# ---------------------------------------------------------------------------- bounded runs
def drive(
    http_url: str,
    model: str,
    concurrency: int = 4,
    duration_s: float | None = None,
    requests_total: int | None = None,
    payload: Payload | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> TrafficResult:
    """Send requests to ``model`` from ``concurrency`` threads until ``duration_s`` passed or
    ``requests_total`` were sent, whichever comes first (at least one bound is required)."""
    if duration_s is None and requests_total is None:
        raise ValueError("drive() needs duration_s or requests_total")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise ValueError(f"concurrency must be in 1..{MAX_CONCURRENCY}")
    duration = min(duration_s if duration_s is not None else MAX_DURATION_S, MAX_DURATION_S)
    budget = min(requests_total if requests_total is not None else MAX_REQUESTS, MAX_REQUESTS)
    url = f"{check_loopback(http_url)}/v2/models/{model}/infer"
    body = payload if payload is not None else payload_for(model)
    result = TrafficResult(model)
    lock = threading.Lock()
    sent = 0
    started = time.monotonic()
    deadline = started + duration

    def take() -> bool:
        nonlocal sent
        with lock:
            if sent >= budget or time.monotonic() >= deadline:
                return False
            sent += 1
            return True

    def worker() -> None:
        with new_session() as session:
            while take():
                error = _one_request(session, url, body, timeout_s)
                with lock:
                    result._record(error)

    threads = [
        threading.Thread(target=worker, name=f"traffic-{model}-{i}", daemon=True) for i in range(concurrency)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result.duration_s = time.monotonic() - started
    return result


class TrafficDriver:
    """A mix of concurrent traffic in background threads, until ``stop()`` or a bound is reached.

    ``mix`` maps model -> number of concurrent clients (default: batching on vector_scale, a queue
    on slow_model, strings on text_echo, a latency tail on tail_model). ``error_fraction`` of the
    requests make the model fail (``failing_payload``), so Triton counts BACKEND failures; on a
    batched model their batchmates fail too, so the failure rate seen is higher than
    ``error_fraction``.
    ``think_time_s`` is each client's pause between requests.
    LLM models (``LLM_MODELS``) are streamed through ``generate_stream`` with a new prompt and
    output length per request (``llm_payload``); ``llm_saturate`` makes them long enough for a
    few clients to fill the KV cache.
    ``versions`` maps a mix key to (model, version): its clients send to one version of the model
    through Triton's versioned API (``/v2/models/<model>/versions/<version>/infer``), with
    ``payloads[key]``; two keys can split traffic between two versions of one model.
    """

    def __init__(
        self,
        http_url: str,
        mix: Mapping[str, int] | None = None,
        *,
        max_duration_s: float = MAX_DURATION_S,
        max_requests: int = MAX_REQUESTS,
        think_time_s: float = 0.0,
        error_fraction: float = 0.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        payloads: Mapping[str, Payload] | None = None,
        llm_saturate: bool = False,
        versions: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        self.http_url = check_loopback(http_url)
        self._versions = dict(versions or {})
        self.mix = dict(mix if mix is not None else DEFAULT_MIX)
        if not self.mix or any(n < 0 for n in self.mix.values()) or sum(self.mix.values()) > MAX_CONCURRENCY:
            raise ValueError(f"mix needs 1..{MAX_CONCURRENCY} clients in all")
        if not 0.0 <= error_fraction <= 1.0:
            raise ValueError("error_fraction must be within [0, 1]")
        self.max_duration_s = min(max_duration_s, MAX_DURATION_S)
        self.max_requests = min(max_requests, MAX_REQUESTS)
        self.think_time_s = think_time_s
        self.error_fraction = error_fraction
        self.timeout_s = timeout_s
        self.llm_saturate = llm_saturate
        self._payloads = {m: (dict(payloads or {}).get(m) or payload_for(m)) for m in self.mix}
        self._failing = {m: failing_payload(m) for m in self.mix} if error_fraction > 0 else {}
        self._results = {m: TrafficResult(m) for m in self.mix}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._sent = 0
        self._started: float | None = None

    def start(self) -> TrafficDriver:
        if self._threads:
            return self
        self._started = time.monotonic()
        for model, clients in self.mix.items():
            for i in range(clients):
                t = threading.Thread(
                    target=self._client, args=(model,), name=f"traffic-{model}-{i}", daemon=True
                )
                self._threads.append(t)
                t.start()
        return self

    def _take(self) -> bool:
        with self._lock:
            assert self._started is not None
            if self._sent >= self.max_requests or time.monotonic() - self._started >= self.max_duration_s:
                self._stop.set()
                return False
            self._sent += 1
            return True

    def _client(self, model: str) -> None:
        llm = model in LLM_MODELS
        url = f"{self.http_url}/v2/models/{model}/{'generate_stream' if llm else 'infer'}"
        if model in self._versions:
            name, version = self._versions[model]
            url = f"{self.http_url}/v2/models/{name}/versions/{version}/infer"
        rng = random.Random()
        with new_session() as session:
            while not self._stop.is_set() and self._take():
                bad = self.error_fraction > 0 and rng.random() < self.error_fraction
                if llm:
                    body = self._failing[model] if bad else llm_payload(rng, saturate=self.llm_saturate)
                    _, _, _, error = stream_generate(session, url, body, self.timeout_s)
                else:
                    body = self._failing[model] if bad else self._payloads[model]
                    error = _one_request(session, url, body, self.timeout_s)
                with self._lock:
                    self._results[model]._record(error)
                if self.think_time_s > 0:
                    self._stop.wait(self.think_time_s)

    def stop(self, timeout: float | None = None) -> dict[str, TrafficResult]:
        """Stop every client (each finishes its request in flight) and return the results. Idempotent."""
        self._stop.set()
        per_thread = self.timeout_s + 1 if timeout is None else timeout
        for t in self._threads:
            t.join(per_thread)
        return self.results()

    @property
    def running(self) -> bool:
        return any(t.is_alive() for t in self._threads)

    def results(self) -> dict[str, TrafficResult]:
        """A snapshot per model."""
        with self._lock:
            elapsed = time.monotonic() - self._started if self._started is not None else 0.0
            return {
                m: TrafficResult(m, r.ok, r.failed, list(r.errors), duration_s=elapsed)
                for m, r in self._results.items()
            }

    def __enter__(self) -> TrafficDriver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ContinuousTraffic:
    """`TrafficDriver` runs back to back until `stop()`, for the demo, which runs until Ctrl-C.

    Each run stays bounded (`MAX_DURATION_S`, `MAX_REQUESTS`); when one ends, the next starts
    within `check_s`. A single driver left the demo without traffic after an hour (its time bound),
    and its dashboards — LLM tokens per second first — without data.
    """

    def __init__(self, make: Callable[[], TrafficDriver], *, check_s: float = 0.5) -> None:
        self._make = make
        self._check_s = check_s
        self._stop = threading.Event()
        self._driver: TrafficDriver | None = None
        self._thread: threading.Thread | None = None
        self.runs = 0

    def start(self) -> ContinuousTraffic:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="traffic-runs", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.is_set():
            if self._driver is None or not self._driver.running:
                self._driver = self._make().start()
                self.runs += 1
            self._stop.wait(self._check_s)

    def stop(self) -> None:
        """Stop the current run (its requests in flight finish) and start no other. Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._driver is not None:
            self._driver.stop()
