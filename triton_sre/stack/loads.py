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
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import requests

from triton_sre import conventions as c
from triton_sre.triton.exposition import parse

__all__ = ["Load", "load_every_model", "next_poll"]


@dataclass(frozen=True)
class Load:
    """One model-control load: the model, whether it became READY, how long the call took, and
    the first line of Triton's error when it failed."""

    model: str
    ok: bool
    seconds: float
    error: str = ""


def load_every_model(
    triton_url: str,
    say: Callable[[str], None],
    *,
    timeout: float = 120.0,
    before_each: Callable[[], None] | None = None,
) -> list[Load]:
    """Load every model of Triton's repository index through model control, one at a time, in
    the index's order, calling `before_each` before each load (the stack waits there for the
    exporter's next poll). A model that fails to load (the sample's broken ones) is reported, not
    raised: Triton keeps serving the others, as in production."""
    with requests.Session() as session:
        index = session.post(f"{triton_url}/v2/repository/index", json={}, timeout=timeout)
        index.raise_for_status()
        names = [row["name"] for row in index.json() if isinstance(row, dict) and row.get("name")]
        loads = []
        for name in dict.fromkeys(names):  # one load per model, even with several versions listed
            started = time.monotonic()
            try:
                answer = session.post(
                    f"{triton_url}/v2/repository/models/{quote(name, safe='')}/load", timeout=timeout
                )
                error = "" if answer.ok else _first_line(answer)
            except requests.RequestException as exc:
                error = f"no answer: {type(exc).__name__}"
            load = Load(name, not error, time.monotonic() - started, error)
            say(f"loaded {name} in {load.seconds:.1f} s" if load.ok else f"{name} did not load: {error}")
            loads.append(load)
    return loads


def next_poll(exporter_url: str, interval: float) -> Callable[[], None]:
    """A wait for the exporter's next completed poll (at most three intervals and 5 s): loads
    paced by it each start on a fresh poll cycle, even when a poll ran long during the last one."""
    count = f"{c.M_POLL_DURATION}_count"

    def polls() -> float:
        text = requests.get(f"{exporter_url}{c.PATH_METRICS}", timeout=5).text
        return sum(s.value for s in parse(text) if s.name == count)

    def wait() -> None:
        with contextlib.suppress(requests.RequestException):
            before = polls()
            deadline = time.monotonic() + 3 * interval + 5
            while polls() <= before and time.monotonic() < deadline:
                time.sleep(min(0.2, interval / 4))

    return wait


def _first_line(answer: requests.Response) -> str:
    try:
        text = str(answer.json().get("error", "")) or answer.text
    except ValueError:
        text = answer.text
    lines = text.strip().splitlines()
    return (lines[0] if lines else f"HTTP {answer.status_code}")[:200]
