"""Model loads as a sidecar sees them, for `triton-sre stack up` and the demo.

Triton 2.51 has no load-duration metric (`nv_model_load_duration_secs` is 24.11+), so the exporter
measures a load from the repository index: first poll seeing LOADING -> first poll seeing READY
(`exporter.capacity.LoadTimer`). Models Triton loads at startup are READY before its HTTP endpoint
answers: no sidecar can see those loads. What a sidecar does see is a load after startup (model
control, a new version, a restart of one model). So the stack starts the exporter first, then
Triton with explicit model control and no model, and, once the exporter has polled Triton, loads
every model of the repository through model control (the stack's own Triton; the exporter never
calls model control).

One model at a time: while several loads run at once, Triton answers the index only when they are
done (measured on 2.51: the index blocked ~12 s for ten concurrent loads), so none would be seen
LOADING.

A load shorter than the gap between two index reads is not seen LOADING (a Python-backend model
loads in ~1.4 s on 2.51; the exporter's index reads are one interval apart, more when a poll
overruns on a busy host). When the exporter shows no load time for a model after two more polls,
the stack unloads it and loads it again, at most `attempts` times in all, so the load-time panels
have every model. Not an ensemble: nothing loads for it, and a load of it loads its steps again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from urllib.parse import quote

import requests

from triton_sre import conventions as c
from triton_sre.httpclient import get, new_session
from triton_sre.triton.exposition import Sample, parse

__all__ = [
    "PACED_INTERVAL_MAX",
    "Load",
    "control_url",
    "exporter_measured",
    "just_before_next_poll",
    "load_every_model",
]


@dataclass(frozen=True)
class Load:
    """One model-control load: the model, whether it became READY, how long the call took, and
    the first line of Triton's error when it failed."""

    model: str
    ok: bool
    seconds: float
    error: str = ""
    attempts: int = 1  # loads made until the exporter measured one (or the last allowed)


def load_every_model(
    triton_url: str,
    say: Callable[[str], None],
    *,
    timeout: float = 120.0,
    before_each: Callable[[], None] | None = None,
    measured: Callable[[str], bool] | None = None,
    attempts: int = 3,
) -> list[Load]:
    """Load every model of Triton's repository index through model control, one at a time, in
    the index's order, calling `before_each` before each load (the stack waits there for the
    exporter's next poll). A model that fails to load (the sample's broken ones) is reported, not
    raised: Triton keeps serving the others, as in production. With `measured` (did the exporter
    time this model's load?), a load it missed is made again, up to `attempts` loads in all."""
    with new_session() as session:
        index = session.post(f"{triton_url}/v2/repository/index", json={}, timeout=timeout)
        index.raise_for_status()
        names = [row["name"] for row in index.json() if isinstance(row, dict) and row.get("name")]
        loads = []
        for name in dict.fromkeys(names):  # one model at a time, even with several versions listed
            load = _load(session, triton_url, name, timeout, before_each)
            for attempt in range(2, max(attempts, 1) + 1):
                if not load.ok or measured is None or measured(name):
                    break
                if _is_ensemble(session, triton_url, name, timeout):
                    say(f"{name} is an ensemble: nothing loads for it (no load time) and loading it again "
                        "would reload its steps; not loaded again")
                    break
                say(f"the exporter did not see {name} loading (a load shorter than a poll); loading it again")
                _unload(session, triton_url, name, timeout)
                load = replace(_load(session, triton_url, name, timeout, before_each), attempts=attempt)
            say(f"loaded {name} in {load.seconds:.1f} s" if load.ok else f"{name} did not load: {load.error}")
            loads.append(load)
    return loads


def _load(
    session: requests.Session,
    triton_url: str,
    name: str,
    timeout: float,
    before_each: Callable[[], None] | None,
) -> Load:
    if before_each is not None:
        before_each()
    started = time.monotonic()
    try:
        answer = session.post(control_url(triton_url, name, "load"), timeout=timeout)
        error = "" if answer.ok else _first_line(answer)
    except requests.RequestException as exc:
        error = f"no answer: {type(exc).__name__}"
    return Load(name, not error, time.monotonic() - started, error)


def _is_ensemble(session: requests.Session, triton_url: str, name: str, timeout: float) -> bool:
    """Triton loads an ensemble at once (no LOADING for a poll to see), and each load of it loads its
    composing models again (measured on 2.51: `loading: <step>:1` then `successfully unloaded '<step>'`
    for the instance it replaced)."""
    try:
        answer = session.get(f"{triton_url}/v2/models/{quote(name, safe='')}/config", timeout=timeout)
        return answer.ok and answer.json().get("platform") == c.PLATFORM_ENSEMBLE
    except (requests.RequestException, ValueError, AttributeError):
        return False


def _unload(session: requests.Session, triton_url: str, name: str, timeout: float) -> None:
    with contextlib.suppress(requests.RequestException):
        session.post(control_url(triton_url, name, "unload"), timeout=timeout)


def control_url(triton_url: str, name: str, action: str) -> str:
    """Triton's model-control URL (`load`/`unload`) of the model `name`, quoted as one path segment."""
    return f"{triton_url}/v2/repository/models/{quote(name, safe='')}/{action}"


def exporter_measured(exporter_url: str, interval: float, polls: int = 2) -> Callable[[str], bool]:
    """Whether the exporter shows a load time for a model within its next `polls` completed polls
    (the first may have read the index before the load ended), read from the exposition that showed
    each poll completed."""
    counter = _PollCounter(exporter_url)

    def measured(model: str) -> bool:
        for _ in range(polls):
            with contextlib.suppress(requests.RequestException):
                counter.next_one(interval)
                loads = (s for s in counter.last if s.name == c.M_MODEL_LOAD_SECONDS)
                if any(s.label(c.LABEL_MODEL) == model for s in loads):
                    return True
        return False

    return measured


PACED_INTERVAL_MAX = 5.0
"""Loads are paced on the exporter's polls, and a missed one made again, only up to this interval:
beyond it each model would wait most of an interval, and a load of a few seconds falls between two
polls anyway (docs/load-times.md)."""


def just_before_next_poll(exporter_url: str, interval: float) -> Callable[[], None]:
    """A wait that ends a moment before the exporter's next poll starts, so that the load started
    then is still running when that poll reads the index (it reads it first thing, after Triton's
    metrics). The exporter polls on a fixed schedule, so the next start is the last poll's start
    (its end less its duration) plus one interval."""
    polls = _PollCounter(exporter_url)
    lead = min(0.3, interval / 4)

    def wait() -> None:
        with contextlib.suppress(requests.RequestException):
            ended_at, took = polls.next_one(interval)
            time.sleep(max(0.0, ended_at - took + interval - lead - time.monotonic()))

    return wait


class _PollCounter:
    """The exporter's completed polls and their total duration, read from its own metrics."""

    def __init__(self, exporter_url: str) -> None:
        self._url = f"{exporter_url}{c.PATH_METRICS}"
        self.last: list[Sample] = []  # the exposition read last

    def read(self) -> tuple[float, float]:
        count = total = 0.0
        self.last = parse(get(self._url, timeout=5).text)
        for sample in self.last:
            if sample.name == f"{c.M_POLL_DURATION}_count":
                count += sample.value
            elif sample.name == f"{c.M_POLL_DURATION}_sum":
                total += sample.value
        return count, total

    def next_one(self, interval: float) -> tuple[float, float]:
        """Waits for the next completed poll: when it was seen (monotonic) and how long it took."""
        count, total = self.read()
        deadline = time.monotonic() + 3 * interval + 5
        while time.monotonic() < deadline:
            time.sleep(min(0.1, interval / 10))
            now_count, now_total = self.read()
            if now_count > count:
                return time.monotonic(), (now_total - total) / (now_count - count)
        return time.monotonic(), 0.0


def _first_line(answer: requests.Response) -> str:
    try:
        text = str(answer.json().get("error", "")) or answer.text
    except ValueError:
        text = answer.text
    lines = text.strip().splitlines()
    return (lines[0] if lines else f"HTTP {answer.status_code}")[:200]
