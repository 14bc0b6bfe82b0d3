"""Churn over time (fault probes round ten): the exporter against a Triton whose models come and go
every poll, whose versions change and whose server restarts (every counter reset, new models).

In process, polled through the exporter's own `poll_once` with a stand-in client answering Triton's
shapes (`/metrics` text, the repository index, the statistics JSON) and a clock stepping 15 s a poll
(window 60 s: four polls). Per poll: `STABLE` models always there, `CHURN` models named after the
poll (each lives `LIFE` polls), every model's version bumped every `VERSION_EVERY` polls, the server
restarted every `RESTART_EVERY` polls. Prints, at checkpoints, the series `/metrics` carries, the
distinct models in them, what is live, and traced Python memory after a full collection.

    PYTHONPATH=. python bench/bench_exporter_churn.py [--polls 1000]
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from client_double import PollClient
from test_fault_probes_round8 import model_counter_lines

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter
from triton_sre.pricing import Pricing

STABLE, CHURN, LIFE = 20, 20, 2
VERSION_EVERY, RESTART_EVERY = 50, 100
INTERVAL, WINDOW = 15.0, 60.0


def live_models(poll: int) -> list[tuple[str, str]]:
    """(name, version) of what the server holds at `poll`."""
    version = str(1 + poll // VERSION_EVERY)
    stable = [(f"stable_{k:02d}", version) for k in range(STABLE)]
    churn = [(f"churn_{(poll - age) * CHURN + k:06d}", version) for age in range(LIFE) for k in range(CHURN)]
    return stable + [m for m in churn if int(m[0].split("_")[1]) >= 0]


class ChurningTriton(PollClient):
    def __init__(self) -> None:
        self.poll = 0

    def _count(self, poll: int) -> int:
        return 100 * (1 + poll % RESTART_EVERY)  # a restart every RESTART_EVERY polls: counters from zero

    def metrics(self) -> bytes:
        n = self._count(self.poll)
        lines = []
        for name, version in live_models(self.poll):
            lines += model_counter_lines(name, version, n)
        return ("\n".join(lines) + "\n").encode()

    def repository_index(self) -> list:
        return [{"name": m, "version": v, "state": c.STATE_READY} for m, v in live_models(self.poll)]

    def all_stats(self) -> Iterator:
        from triton_sre.triton.client import iter_model_stats

        n = self._count(self.poll)
        ns = {"count": n, "ns": n * 1000}
        entries = [
            {
                "name": m,
                "version": v,
                "inference_count": n,
                "execution_count": n // 2,
                "batch_stats": [
                    {"batch_size": 2, "compute_input": ns, "compute_infer": ns, "compute_output": ns}
                ],
            }
            for m, v in live_models(self.poll)
        ]
        return iter_model_stats(json.dumps({"model_stats": entries}))

    def model_config(self, name: str) -> object:
        return {"name": name, "max_batch_size": 8, "dynamic_batching": {}}


def series_and_models(text: str) -> tuple[int, int]:
    models = set()
    count = 0
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        count += 1
        if f'{c.LABEL_MODEL}="' in line:
            models.add(line.split(f'{c.LABEL_MODEL}="', 1)[1].split('"', 1)[0])
    return count, len(models)


def run(polls: int, checkpoints: set[int]) -> list[tuple[int, int, int, int, float]]:
    settings = ExporterSettings(
        triton_url="http://stub:8000",
        interval=INTERVAL,
        window=WINDOW,
        pricing=Pricing(currency="USD", node_hour=1.0, cpu_execution_slots=2),
    )
    triton = ChurningTriton()
    now = [1_000_000.0]
    exporter = Exporter(settings, client=triton, clock=lambda: now[0])
    rows = []
    tracemalloc.start()
    for poll in range(polls):
        triton.poll = poll
        now[0] += INTERVAL
        exporter.poll_once()
        if poll + 1 in checkpoints:
            series, models = series_and_models(exporter.metrics_text().decode())
            gc.collect()
            traced = tracemalloc.get_traced_memory()[0] / 1e6
            rows.append((poll + 1, series, models, len(live_models(poll)), traced))
    tracemalloc.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=1000)
    args = parser.parse_args()
    checkpoints = {10, 50, *range(100, args.polls + 1, 100)}
    print("poll  series  models_in_series  live_models  traced_MB")
    for row in run(args.polls, checkpoints):
        print(f"{row[0]:>4}  {row[1]:>6}  {row[2]:>16}  {row[3]:>11}  {row[4]:>9.2f}")


if __name__ == "__main__":
    main()
