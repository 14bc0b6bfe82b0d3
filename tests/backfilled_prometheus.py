"""A real Prometheus (Debian's) holding given samples from the past: written as OpenMetrics, turned
into TSDB blocks by `promtool tsdb create-blocks-from openmetrics`, and served read-only (no scrape
job). For tests that need PromQL's own answers over series a scrape could not produce in time
(minutes of history, several clusters)."""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from binaries import binary
from live_prometheus import Prom, start_prometheus, stop_prometheus, wait_ready

from triton_sre.stack.processes import free_port

Series = tuple[str, Mapping[str, str], Sequence[tuple[float, float]]]  # name, labels, (time s, value)


def aligned_past(hours: int = 3) -> float:
    """A whole hour `hours` before now (within the default retention; minutes aligned, as subqueries
    and slices are)."""
    return float(math.floor(time.time() / 3600) * 3600 - hours * 3600)


def _openmetrics(series: Iterable[Series]) -> str:
    lines = []
    for name, labels, samples in sorted(series, key=lambda one: one[0]):  # a family's lines together
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        lines += [f"{name}{{{inner}}} {value!r} {stamp:.3f}" for stamp, value in samples]
    return "\n".join([*lines, "# EOF", ""])  # untyped families: any name, no _total rule


@contextmanager
def backfilled(work: Path, series: Iterable[Series], *extra: str) -> Iterator[Prom]:
    """A Prometheus on a free loopback port holding `series` (`extra`: more flags, e.g.
    `--query.timeout=1ms`); stopped on exit."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "series.om").write_text(_openmetrics(series), encoding="utf-8")
    subprocess.run(
        [binary("promtool"), "tsdb", "create-blocks-from", "openmetrics", "series.om", "data"],
        cwd=work,
        check=True,
        capture_output=True,
    )
    port = free_port()
    proc, log = start_prometheus(work, {"global": {"scrape_interval": "15s"}}, port, *extra)
    try:
        yield wait_ready(proc, work, port)
    finally:
        stop_prometheus(proc, log)
