"""Benchmark: a gameday's observing and scoring over many faults, without a stack.

What `gameday` does between its HTTP reads, fed the answers a fleet's stack would give: F fault
scenarios run one after another, each `--polls` observer polls long (0.5 s apart in a real run).
Every poll hands the Timeline Alertmanager's and Prometheus' firing alerts (`--background` alerts
firing all along, one per model of a noisy fleet, plus the running fault's) and the calls the Slack
stand-in recorded since the last read (its answer to the observer's `?since=`: a fault's firing
message and its resolution); the runner scores detection at every step of the wait and the
losses at the end. Each F runs in its own process under `/usr/bin/time -v`; F goes 1x, 4x, 16x of
`--base`.

    python bench/bench_gameday.py [--base 25] [--scales 1,4,16] [--polls 20] [--background 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed_command

from triton_sre import conventions as c
from triton_sre.gameday.observer import Timeline, alerts_from_alertmanager, alerts_from_prometheus
from triton_sre.gameday.runner import Result, score_detection, score_losses
from triton_sre.gameday.scenarios import Expect

ALERT = c.ALERT_MODEL_UNAVAILABLE  # the fault's alert
NOISE = c.ALERT_QUEUE_TIME_HIGH  # what the rest of the fleet has firing all along
ROOT = Path(__file__).resolve().parent.parent
RUNBOOK = c.RUNBOOK_SHM_TOO_SMALL  # the unavailable model's diagnosis (as the gameday's shm fault)


def _alert(model: str, name: str) -> dict[str, object]:
    return {
        "labels": {
            c.LABEL_ALERTNAME: name,
            c.LABEL_MODEL: model,
            c.LABEL_JOB: "triton",
            c.L_SEVERITY: "page",
        },
        "annotations": {c.ANNOTATION_RUNBOOK_URL: f"https://example.invalid/runbooks/{RUNBOOK}.md"},
        "state": c.AM_STATUS_FIRING,
    }


def _post(i: int, model: str, at: float, resolved: bool) -> dict[str, object]:
    status = "RESOLVED" if resolved else "FIRING"
    text = f"{status} [page] {ALERT}"
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": f"*Alert:* {ALERT}\n*Model:* {model}"}}]
    return {
        "at": at,
        "method": "chat.postMessage",
        "params": {"channel": "C1", "text": text, "blocks": blocks},
        "response": {"ok": True, "ts": f"{1000 + i}.{int(resolved)}"},
    }


def child(faults: int, polls: int, background: int) -> dict[str, float]:
    timeline = Timeline()
    noise = [_alert(f"noisy-{k}", NOISE) for k in range(background)]
    calls: list[dict[str, object]] = []
    read = 0
    now = 1_000_000.0
    results = []
    slowest_poll = 0.0
    started = time.perf_counter()
    for f in range(faults):
        model = f"fault-{f}"
        expect = Expect(alert=ALERT, runbook=RUNBOOK, labels={c.LABEL_MODEL: model})
        result = Result(model, "bench", ALERT, RUNBOOK)
        since = now
        for p in range(polls):
            t0 = time.perf_counter()
            firing = [*noise, _alert(model, ALERT)] if 2 <= p < polls - 4 else noise
            timeline.update_alertmanager(alerts_from_alertmanager(firing), now)
            timeline.update_prometheus(alerts_from_prometheus({"data": {"alerts": firing}}), now)
            if p == 3:
                calls.append(_post(2 * f, model, now, False))
            if p == polls - 3:
                calls.append(_post(2 * f + 1, model, now, True))
            # what the stand-in answers the observer's `since` read, decoded
            timeline.add_calls(json.loads(json.dumps(calls[read:])))
            read = len(calls)
            if result.seconds_to_notify is None:
                score_detection(result, timeline, expect, since)
            slowest_poll = max(slowest_poll, time.perf_counter() - t0)
            now += 0.5
        score_losses(result, timeline, expect, since)
        results.append(result)
    wrong = [r.name for r in results if not r.detected or r.seconds_to_notify is None or r.lost]
    if wrong:
        raise SystemExit(f"scored wrong: {wrong[:5]}")
    return {"seconds": time.perf_counter() - started, "slowest_poll_ms": slowest_poll * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=25)
    parser.add_argument("--scales", default="1,4,16")
    parser.add_argument("--polls", type=int, default=20)
    parser.add_argument("--background", type=int, default=1000)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.polls, args.background)))
        return 0
    rows = []
    for scale in (int(s) for s in args.scales.split(",")):
        faults = args.base * scale
        out = Path(tempfile.mkdtemp(prefix="bench-gameday-")) / "out.json"
        command = [sys.executable, __file__, "--child", str(faults), "--polls", str(args.polls)]
        figures = timed_command([*command, "--background", str(args.background)], ROOT, stdout=out)
        if figures["exit"]:
            raise SystemExit(f"the child failed: exit {figures['exit']:.0f}")
        inner = json.loads(out.read_text())
        shutil.rmtree(out.parent)
        name = (
            f"gameday scoring, {faults:,} faults x {args.polls} polls, {args.background:,} background alerts "
            f"(slowest poll {inner['slowest_poll_ms']:.0f} ms)"
        )
        rows.append((name, figures))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
