"""Benchmark: how long one exporter poll takes against a Triton that accepts and never answers.

Loopback listeners accept every connection and never send a byte. `Exporter.poll_once()` runs
against them with the given `--timeout` in two layouts: `two-ports` (the HTTP API and the metrics
on two listeners, as Triton serves them: 8000 and 8002) and `one-port` (both behind one listener,
a proxy in front). Printed per layout: each poll's wall time, the median, its ratio to the
timeout, and the poll errors counted by target and kind.

    python bench/bench_poll_hung.py [--timeout 5] [--polls 3] [--layouts two-ports,one-port]

Target (docs/exporter.md): a poll against a hung Triton takes about one `timeout`, never a multiple.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # test support

from test_fault_probes import Silent  # a listener that accepts and never answers

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter


def errors(exporter: Exporter) -> dict[str, float]:
    text = exporter.metrics_text().decode()
    return {
        f"{s.labels[c.L_TARGET]}/{s.labels[c.L_KIND]}": s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == c.M_POLL_ERRORS and s.value
    }


def run(layout: str, timeout: float, polls: int) -> None:
    api, metrics = Silent(), Silent()
    metrics_url = f"{(metrics if layout == 'two-ports' else api).url}/metrics"
    try:
        settings = ExporterSettings(triton_url=api.url, metrics_url=metrics_url, timeout=timeout)
        exporter = Exporter(settings)
        took = []
        for _ in range(polls):
            started = time.monotonic()
            exporter.poll_once()
            took.append(time.monotonic() - started)
        median = statistics.median(took)
        shown = ", ".join(f"{t:.2f}" for t in took)
        ratio = median / timeout
        print(f"{layout:9s} timeout {timeout:g}s: polls {shown} s; median {median:.2f} s = {ratio:.2f}x")
        print(f"{'':9s} errors after {polls} polls: {errors(exporter)}")
    finally:
        api.close()
        metrics.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=c.DEFAULT_TIMEOUT_SECONDS)
    parser.add_argument("--polls", type=int, default=3)
    parser.add_argument("--layouts", default="two-ports,one-port")
    args = parser.parse_args()
    for layout in args.layouts.split(","):
        run(layout, args.timeout, args.polls)


if __name__ == "__main__":
    main()
