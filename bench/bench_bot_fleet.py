"""Benchmark: the bot on fleet-sized Alertmanager notifications (one group of hundreds of alerts).

For each size: a webhook body of N latency-SLO burn alerts (`tests/test_bot_fleet.py`'s payload, one
model each, 2,800-character descriptions), parsed, its facts read from a Prometheus stand-in on
loopback (`tests/fake_prometheus.py`, every instant query answers one sample), enriched and rendered
into Slack blocks. Reports the body size, the Prometheus
queries made, the time of each stage and the blocks (count, the largest text). Peak RSS of this process.

    python bench/bench_bot_fleet.py [--alerts 60,600]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_prometheus import serve
from test_bot_fleet import fleet_payload

from triton_sre.bot.config import DEFAULT_MAX_BODY_BYTES, BotSettings
from triton_sre.bot.enrich import enrich
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import SlackDelivery
from triton_sre.bot.slack_limits import validate_blocks
from triton_sre.bot.worker import Worker
from triton_sre.prom import Prometheus


def body(alerts: int) -> bytes:
    return json.dumps(fleet_payload(alerts, description="d" * 2800)).encode()


def counted(prom: Prometheus) -> list[str]:
    """The queries `prom` is asked from now on (each instant and vector query appended)."""
    asked: list[str] = []
    instant, vector = prom.instant, prom.vector

    def count_instant(expr: str, at: float | None = None) -> float | None:
        asked.append(expr)
        return instant(expr, at=at)

    def count_vector(expr: str, at: float | None = None) -> list[tuple[dict[str, str], float]]:
        asked.append(expr)
        return vector(expr, at=at)

    prom.instant, prom.vector = count_instant, count_vector  # type: ignore[method-assign]
    return asked


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--alerts", default="60,600")
    args = parser.parse_args(argv)
    httpd = serve(
        lambda q, t: {"resultType": "matrix", "result": []}, instant=[{"metric": {}, "value": [0, "0.5"]}]
    )
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    print("| alerts | body | limit | queries | facts | parse+enrich+render | blocks | largest text |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.alerts.split(",")):
            raw = body(n)
            worker = Worker(
                BotSettings(channel="#c", prometheus_url=url),
                Outbox(Path(tmp) / f"{n}.sqlite3"),
                SlackDelivery("xoxb-unused"),
                {},
            )
            assert worker.prometheus is not None
            asked = counted(worker.prometheus)
            t0 = time.perf_counter()
            group = parse_group(json.loads(raw))
            t1 = time.perf_counter()
            facts = worker.facts(group)
            t2 = time.perf_counter()
            blocks = worker.renderer.blocks(enrich(group, facts, worker.links).context())
            t3 = time.perf_counter()
            assert validate_blocks(blocks) is None, validate_blocks(blocks)
            largest = max(len(json.dumps(b)) for b in blocks)
            limit = "over" if len(raw) > DEFAULT_MAX_BODY_BYTES else "within"
            print(
                f"| {n:,} | {len(raw) / 1e6:.2f} MB | {limit} | {len(asked):,} | {t2 - t1:.2f} s "
                f"| {(t1 - t0) + (t3 - t2):.3f} s | {len(blocks)} | {largest:,} |"
            )
    httpd.shutdown()
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
