"""Benchmark: the bot's outbox drained after an alert storm (fleet34): N notifications of N groups stored,
then delivered one at a time as the worker does (`next_due`, then `mark_done`), without Slack.

Each size runs in a child process on a fresh outbox file (`PRAGMA synchronous=OFF` for the drain's CPU,
not the disk's fsyncs): the CPU of the first `next_due`, of the whole drain, its wall time and the child's
peak RSS, and a digest of the order the notifications came out in (the same in every tree).

    python bench/bench_bot_outbox_drain.py [--sizes 400,1600] [--src DIR]

`--src DIR` measures another checkout's package (e.g. /work/main) on the same inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from childrun import add_src_and_child, run_child


def drain(n: int) -> dict[str, float | str]:
    from triton_sre.bot.outbox import Outbox

    payload = {
        "alerts": [{"labels": {"alertname": "A", "model": "m" * 60}, "annotations": {"d": "y" * 1500}}]
    }
    with tempfile.TemporaryDirectory(prefix="bench-outbox-") as tmp:
        box = Outbox(Path(tmp) / "outbox.sqlite3")
        box._db.execute("PRAGMA synchronous=OFF")
        for i in range(n):  # a storm: every group once, and every tenth one again (the older superseded)
            box.enqueue(f'{{}}:{{alertname="A",model="m{i}"}}', payload, now=0.0)
            if i % 10 == 9:
                box.enqueue(f'{{}}:{{alertname="A",model="m{i - 5}"}}', payload, now=0.0)
        order = hashlib.sha256()
        first = None
        cpu, wall = time.process_time(), time.perf_counter()
        while True:
            started = time.process_time()
            due, _ = box.next_due(now=1.0)
            first = time.process_time() - started if first is None else first
            if due is None:
                break
            order.update(f"{due.id} ".encode())
            box.mark_done(due.id)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        box.close()
    return {"first_ms": first * 1000, "cpu_s": cpu, "wall_s": wall, "order": order.hexdigest()[:16]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="400,1600", help="comma-separated group counts")
    add_src_and_child(parser, type=int)
    args = parser.parse_args(argv)
    if args.child is not None:
        result = drain(args.child)
        result["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return 0
    print("| groups (notifications) | first next_due | drain CPU | drain wall | peak RSS | order digest |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in (int(x) for x in args.sizes.split(",")):
        r = run_child(__file__, ["--child", str(n)], args.src)
        print(
            f"| {n:,} ({n + n // 10:,}) | {r['first_ms']:.2f} ms | {r['cpu_s']:.2f} s | {r['wall_s']:.1f} s "
            f"| {r['rss_mb']:.0f} MB | {r['order']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
