"""The demo's Prometheus has data for the panels issue #26 found empty: the capacity dashboard's
load-time panels (the exporter starts first and Triton loads every model through model control,
so each load, `slow_loading` included, is measured) and the LLM dashboard's tokens per second.
Also: the demo's traffic runs back to back, so LLM tokens keep flowing after a run's bound."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from grafana_vars import ALL, VARIABLE, interpolate

from triton_sre import conventions as c
from triton_sre.demo import (
    BROKEN_MODELS,
    HEALTHY_MODELS,
    LLM_MODELS,
    LLM_VLLM,
    SLOW_LOADING,
    SLOW_LOADING_SECONDS,
)
from triton_sre.demo.traffic import ContinuousTraffic, TrafficDriver
from triton_sre.triton.exposition import parse

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "triton_sre.cli"]


def panel_queries(dashboard: str, metric: str) -> dict[str, str]:
    """title -> query of every panel of `dashboard` whose query reads `metric`, each variable
    matching anything (the "All" selection)."""
    found = {}
    for panel in json.loads((REPO / "dashboards" / dashboard).read_text())["panels"]:
        for target in panel.get("targets", []):
            expr = target.get("expr", "")
            if metric in expr:
                names = {m.group("braced") or m.group("plain") for m in VARIABLE.finditer(expr)}
                every = dict.fromkeys(names - {"__rate_interval"}, ALL)
                expr = interpolate(expr, every).replace("$__rate_interval", "1m")
                found[panel["title"]] = expr
    return found


def query(prometheus: str, expr: str) -> list[dict[str, Any]]:
    body = requests.get(f"{prometheus}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert body["status"] == "success", (expr, body)
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`triton-sre demo` running (until Ctrl-C), with its stack state once Prometheus is up."""
    workdir = tmp_path_factory.mktemp("demo")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    log = (workdir / "demo.log").open("wb")
    proc = subprocess.Popen(
        [*CLI, "demo", "--workdir", str(workdir), "--interval", "1", "--report-every", "30"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    state_file = workdir / "stack" / "stack.json"
    try:
        deadline = time.monotonic() + 300
        urls: dict[str, str] = {}
        while "bot" not in urls:  # the last component: the demo's traffic starts right after
            assert proc.poll() is None, (workdir / "demo.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the demo's stack was not up after 300 s"
            time.sleep(1)
            if state_file.is_file():
                state = json.loads(state_file.read_text())
                urls = {comp["name"]: comp["url"] for comp in state["components"]}
        yield {"urls": urls, "state": state, "proc": proc, "log": workdir / "demo.log"}
    finally:
        proc.send_signal(signal.SIGINT)  # as Ctrl-C: the demo stops everything it started
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=90)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        log.close()
    assert proc.returncode == 0, (workdir / "demo.log").read_text()[-3000:]
    assert not state_file.exists()  # everything it started is stopped


def wait_for(what: str, probe: Any, timeout: float, seen: Any = None) -> Any:
    """`probe()` once it is truthy; `seen` (the probe's last partial answer) goes into the failure."""
    deadline = time.monotonic() + timeout
    while not (result := probe()):
        assert time.monotonic() < deadline, f"no {what} after {timeout:.0f} s; last seen: {seen}"
        time.sleep(1)
    return result


@pytest.mark.server
def test_every_model_is_loaded_after_the_exporter_started(demo: dict[str, Any]) -> None:
    loads = {x["model"]: x for x in demo["state"]["loads"]}
    assert set(loads) >= set(HEALTHY_MODELS) | (set(BROKEN_MODELS))
    assert all(loads[m]["ok"] for m in HEALTHY_MODELS)
    assert not any(loads[m]["ok"] for m in BROKEN_MODELS)
    assert loads[SLOW_LOADING]["seconds"] >= SLOW_LOADING_SECONDS


@pytest.mark.server
def test_the_capacity_load_time_panels_have_data_slow_loading_included(demo: dict[str, Any]) -> None:
    panels = panel_queries("triton-capacity.json", c.M_MODEL_LOAD_SECONDS)
    assert len(panels) >= 2, panels  # the table and the graph over time
    prometheus = demo["urls"]["prometheus"]
    for title, expr in panels.items():
        seen: dict[str, float] = {}

        def every_healthy_model(expr: str = expr, seen: dict[str, float] = seen) -> dict[str, float]:
            """model -> load seconds, once every healthy model has its value: the demo loads the
            models one after another, so a scrape can come before `slow_loading` is READY."""
            rows = query(prometheus, expr)
            seen.clear()
            seen.update({r["metric"][c.LABEL_MODEL]: float(r["value"][1]) for r in rows})
            return dict(seen) if set(seen) >= set(HEALTHY_MODELS) else {}

        what = f"data for every healthy model in {title!r} ({expr})"
        seconds = wait_for(what, every_healthy_model, 90, seen)
        assert set(seconds) == set(HEALTHY_MODELS), (title, seconds)  # a broken model never became READY
        # measured between polls one interval (1 s) apart: Triton's own load plus up to one interval
        assert SLOW_LOADING_SECONDS <= seconds[SLOW_LOADING] < 30, seconds
        print(title, {m: round(v, 2) for m, v in sorted(seconds.items())})  # for the notes


@pytest.mark.server
def test_the_llm_tokens_per_second_panels_have_data(demo: dict[str, Any]) -> None:
    prometheus = demo["urls"]["prometheus"]
    panels = {
        **panel_queries("triton-llm.json", c.M_LLM_TOKENS_PER_SECOND),
        **panel_queries("triton-llm.json", "triton_llm_tokens:rate5m"),
    }
    assert len(panels) >= 2, panels
    for title, expr in panels.items():

        def flowing(expr: str = expr) -> dict[str, float]:
            """model -> output tokens/s, once every LLM model has some (the exporter's own rate is
            0, not absent, over a window before the traffic)."""
            rows = query(prometheus, expr)
            output = {
                r["metric"][c.LABEL_MODEL]: float(r["value"][1])
                for r in rows
                if "output" in r["metric"].values()
            }
            return output if set(output) == set(LLM_MODELS) and min(output.values()) > 0 else {}

        wait_for(f"output tokens/s above 0 for {title!r} ({expr})", flowing, 90)


@pytest.mark.server
def test_traffic_runs_back_to_back_so_tokens_keep_flowing(triton: Any) -> None:
    def generated() -> float:
        text = requests.get(triton.metrics_url, timeout=5).text
        return sum(s.value for s in parse(text) if s.name == c.VLLM_GENERATION_TOKENS)

    traffic = ContinuousTraffic(lambda: TrafficDriver(triton.http_url, {LLM_VLLM: 1}, max_duration_s=1.0))
    traffic.start()
    try:
        seen = [generated()]
        for _ in range(5):  # each second, well after a run's 1 s bound: more tokens than before
            time.sleep(1.5)
            seen.append(generated())
    finally:
        traffic.stop()
    assert all(later > earlier for earlier, later in itertools.pairwise(seen)), seen
    assert traffic.runs >= 4
