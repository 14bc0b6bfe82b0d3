"""`rollout check` on a real Triton (explicit model control, both versions served) scraped by a real
Prometheus: a five-times-slower version 2 fails, an equal version 2 passes at every check, a
version 2 with almost no traffic is inconclusive."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from live_prometheus import start_prometheus, stop_prometheus, wait_ready

from triton_sre import conventions as c
from triton_sre.bot.enrich import Facts, Links, enrich, parse_group
from triton_sre.bot.slack import Renderer
from triton_sre.cli import main
from triton_sre.data import shipped
from triton_sre.prom import Prometheus
from triton_sre.rollout.live import alert_lines, model_answer
from triton_sre.slo import parse_spec
from triton_sre.stack.local_triton import free_port

REPOSITORY = Path(__file__).parent / "data" / "rollout_models"
JOB = "triton"  # the default spec's scrape.triton_job
WINDOW, STEP = "40s", "4s"


def _infer(url: str, model: str, version: str) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    r = requests.post(f"{url}/v2/models/{model}/versions/{version}/infer", json=body, timeout=10)
    r.raise_for_status()


def _drive(url: str, model: str, version: str, pause: float, stop: threading.Event) -> None:
    while not stop.is_set():
        _infer(url, model, version)
        stop.wait(pause)


def _check(prom_url: str, capsys: pytest.CaptureFixture[str], model: str) -> tuple[int, dict[str, Any]]:
    code = main(
        [
            "rollout", "check", "--prometheus", prom_url, "--model", model,
            "--baseline-version", "1", "--candidate-version", "2",
            "--window", WINDOW, "--step", STEP, "--format", "json",
        ]
    )  # fmt: skip
    return code, json.loads(capsys.readouterr().out)


def test_rollout_check_on_real_triton(
    fresh_triton_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "models"
    shutil.copytree(REPOSITORY, repo, symlinks=False)  # the Python stub writes __pycache__ into it
    triton = fresh_triton_factory(
        repo,
        model_control_mode="explicit",
        load_models=["canary", "steady", "quiet"],
        extra_args=["--metrics-interval-ms=500"],
    )
    target = triton.metrics_url.split("//", 1)[1].split("/", 1)[0]
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [{"job_name": JOB, "static_configs": [{"targets": [target]}]}],
    }
    port = free_port()
    proc, log = start_prometheus(tmp_path, config, port)
    stop = threading.Event()
    drivers = [
        threading.Thread(target=_drive, args=(triton.http_url, m, v, pause, stop), daemon=True)
        for m, v, pause in (
            ("canary", "1", 0.02),
            ("canary", "2", 0.02),
            ("steady", "1", 0.02),
            ("steady", "2", 0.02),
            ("quiet", "1", 0.02),
            ("quiet", "2", 20.0),  # two or three requests in the window
        )
    ]
    try:
        prom = wait_ready(proc, tmp_path, port)
        for d in drivers:
            d.start()
        time.sleep(45)
        slow_code, slow = _check(prom.url, capsys, "canary")
        equal = [_check(prom.url, capsys, "steady")]
        quiet_code, quiet = _check(prom.url, capsys, "quiet")
        for _ in range(2):  # the equal candidate, judged again on later windows: never a false fail
            time.sleep(6)
            equal.append(_check(prom.url, capsys, "steady"))
        # the bot: the alert's comparison and the slash command's answer, from the same Prometheus
        spec = parse_spec(shipped("slos.yaml").read_text() + f"\nrollout: {{window: {WINDOW}}}\n")
        fired = {
            c.LABEL_ALERTNAME: c.ALERT_ROLLOUT_REGRESSION,
            c.LABEL_JOB: JOB,
            c.LABEL_MODEL: "canary",
            c.LABEL_VERSION: "2",
            c.LABEL_BASELINE: "1",
            c.LABEL_FIGURE: c.ROLLOUT_FIG_LATENCY_P99,
        }
        bot_lines = alert_lines(Prometheus(prom.url), fired, spec)
        answer = model_answer(Prometheus(prom.url), "canary", spec)
    finally:
        stop.set()
        for d in drivers:
            d.join(timeout=15)
        stop_prometheus(proc, log)

    figures = {f["name"]: f for f in slow["figures"]}
    p99 = figures[c.ROLLOUT_FIG_LATENCY_P99]
    for name, result in (
        ("slow", slow),
        *((f"equal{i}", e) for i, (_, e) in enumerate(equal)),
        ("quiet", quiet),
    ):
        print(
            name,
            result["verdict"],
            result["request_rate"],
            [(f["name"], f["baseline"], f["candidate"], f["p_value"]) for f in result["figures"]],
        )
    assert (slow_code, slow["verdict"]) == (c.EXIT_FAILURE, c.ROLLOUT_FAIL), slow
    assert p99["verdict"] == c.ROLLOUT_FAIL and p99["candidate"] > 3 * p99["baseline"], p99
    assert figures[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE]["verdict"] == c.ROLLOUT_FAIL
    for code, result in equal:
        assert (code, result["verdict"]) == (c.EXIT_OK, c.ROLLOUT_PASS), result
    assert (quiet_code, quiet["verdict"]) == (c.EXIT_INCONCLUSIVE, c.ROLLOUT_INCONCLUSIVE), quiet
    assert "quiet v2" in quiet["reason"]

    print("bot:", bot_lines, "\nslash:", answer)
    assert bot_lines[0].startswith(f"canary v2 vs canary v1: {c.ROLLOUT_FAIL}")
    notification = {
        "version": "4",
        "groupKey": "{}:{x}",
        "status": c.AM_STATUS_FIRING,
        "receiver": "bot",
        "groupLabels": {},
        "commonLabels": {},
        "commonAnnotations": {},
        "alerts": [{"status": c.AM_STATUS_FIRING, "labels": fired, "annotations": {}, "fingerprint": "r1"}],
    }
    message = enrich(parse_group(notification), Facts(rollout={"r1": bot_lines}), Links())
    shown = json.dumps(Renderer().blocks(message.context()), ensure_ascii=False)
    assert "*Rollout:* canary v2 vs canary v1: fail" in shown
    assert f"• {c.ROLLOUT_FIG_LATENCY_P99}: " in shown and "(fail)" in shown
    assert answer[0].startswith(f"canary v2 vs canary v1: {c.ROLLOUT_FAIL.upper()}")
