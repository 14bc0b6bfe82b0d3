"""Benchmark: the bot's reads of Alertmanager's alerts under an alert storm.

For each size: that many alerts, each its own group, posted at once to the REAL Alertmanager
(`tests/test_bot_alerts_shared.py`'s `burst`: group_wait 1 s, so the groups are notified together), each
notification delivered to the bot's stand-in Slack. Reports the notifications, the bot's reads of
`/api/v2/alerts` (its metric, outcome ok; the silence poll's own reads left out) and reads per
notification, with the shared read (ALERTS_SHARED_SECONDS) and without it (0 s: one read each).

    python bench/bench_bot_alert_storm.py [--groups 40,200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_bot_alerts_shared import burst

from triton_sre.bot import silence_watch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", default="40,200")
    args = parser.parse_args(argv)
    shared = silence_watch.ALERTS_SHARED_SECONDS
    columns = ("groups (notifications)", "shared for", "reads of /api/v2/alerts", "reads per notification")
    print("| " + " | ".join((*columns, "post to last message")) + " |")
    print("|---|---|---|---|---|")
    for groups in (int(n) for n in args.groups.split(",")):
        for seconds in (0.0, shared):
            silence_watch.ALERTS_SHARED_SECONDS = seconds
            with tempfile.TemporaryDirectory() as workdir:
                sent, read, took = burst(Path(workdir), groups)
            print(f"| {groups} ({sent}) | {seconds:g} s | {read:g} | {read / sent:.3f} | {took:.1f} s |")
    silence_watch.ALERTS_SHARED_SECONDS = shared
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
