"""`rollout check --deadline`: the whole command has one deadline. A Prometheus answering every query
just under `--timeout` made the check's ~18 queries run for minutes; at the deadline the check stops,
shows what it read, names the queries it did not get to and exits 3 (could not decide)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from fake_prometheus import serve

from triton_sre import conventions as c
from triton_sre.cli import build_parser, main
from triton_sre.rollout.sides import TRAFFIC

DELAY_S = 0.4  # each answer: well under --timeout, ~18 of them far over --deadline
DEADLINE_S = 2.5  # Prometheus' time, its scrape interval, the traffic of both sides, then figures


def _slow_prometheus() -> Any:
    return serve(
        lambda query, stamps: {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": [[t, "1"] for t in stamps]}],
        },
        delay=DELAY_S,
    )


def _check(fmt: str, *extra: str) -> tuple[int, float]:
    httpd = _slow_prometheus()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1"]
        started = time.monotonic()
        argv += ["--candidate-version", "2", "--window", "5m", "--timeout", "5", *extra, "--format", fmt]
        code = main(argv)
        return code, time.monotonic() - started
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_slow_prometheus_stops_at_the_deadline_naming_what_was_not_read(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, took = _check("json", "--deadline", str(DEADLINE_S))
    out, err = capsys.readouterr()
    assert code == c.EXIT_INCONCLUSIVE, err
    assert took < DEADLINE_S + 2 * DELAY_S, took  # not ~18 x DELAY_S
    body = json.loads(out)
    assert body["verdict"] == c.ROLLOUT_INCONCLUSIVE and f"{DEADLINE_S:g}s" in body["reason"]
    not_read = body["not_read"]
    assert not_read and all(set(item) == {"figure", "side"} for item in not_read), not_read
    assert {"figure": c.ROLLOUT_FIG_LATENCY_P99, "side": "candidate"} in not_read
    assert {"figure": TRAFFIC, "side": "baseline"} not in not_read  # read first: what it knows
    assert body["request_rate"]["baseline"] == 1.0


def test_the_text_output_names_the_queries_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _check("text", "--deadline", str(DEADLINE_S))
    out, err = capsys.readouterr()
    assert code == c.EXIT_INCONCLUSIVE, err
    assert out.startswith("rollout INCONCLUSIVE") and "deadline" in out
    not_read = out.split("not read: ")[1]
    assert f"{c.ROLLOUT_FIG_LATENCY_P99} (candidate)" in not_read and f"{TRAFFIC} (baseline)" not in not_read


def test_within_the_deadline_the_verdict_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _check("json", "--deadline", "60")
    out, err = capsys.readouterr()
    assert code == c.EXIT_OK, err
    assert "not_read" not in json.loads(out)


def test_the_deadline_is_in_the_help_with_its_default() -> None:
    rollout = build_parser()._subparsers._group_actions[0].choices["rollout"]  # type: ignore[union-attr]
    check = rollout._subparsers._group_actions[0].choices["check"]  # type: ignore[union-attr]
    text = check.format_help()
    assert "--deadline" in text and "default 60" in text and "exits 3" in text.replace("\n", " ")
