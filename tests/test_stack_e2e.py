"""End to end: `triton-sre stack up` from local binaries, alerts all the way to the Slack stand-in.

One stack for the module (scrape, evaluation and exporter poll every second, Alertmanager's
group_wait 1 s), driven through the CLI exactly as scripts and CI use it:

- traffic flows through the real Triton and Prometheus sees it;
- failing requests (``triton_sre.demo.traffic.failing_payload``) on a healthy model fire the SLO
  page ``TritonSLOErrorBudgetBurn``, which Alertmanager routes to the bot, which posts it;
- the sample repository's tail model (1 request in 20 ten times slower) fires the latency page
  ``TritonSLOLatencyBudgetBurn`` on its p99 (Triton's summary) while its average stays under the
  threshold, and the bot's message shows the current p99 against the threshold;
- the sample repository's broken models fire ``TritonModelUnavailable`` (after its ``for: 2m``) and
  the stand-in receives a message naming each model and its diagnosed runbook;
- `stack down` stops every process the stack started, and nothing else.

The SLO spec has the shortest period the generator accepts (3d, the longest burn window). The
burn windows themselves are fixed (1h/5m for the first page tier), but rate() over a window only
partly filled with data measures what is there, so the error ratio is the injected share within
seconds of traffic; the 1h request rate reaches min_request_rate after ~360 requests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from expectations import BROKEN_IN_INDEX, BROKEN_RUNBOOKS

from triton_sre import conventions as c
from triton_sre.demo import LLM_MAX_NUM_SEQS, LLM_VLLM, TAIL_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.generate.slo_rules import tiers
from triton_sre.slo import parse_spec
from triton_sre.stack.processes import process_group_members

CLI = [sys.executable, "-m", "triton_sre.cli"]
SHORT_SLOS = """\
scrape: {triton_job: triton, exporter_job: triton-sre}
llm: {saturated_for: 1m}
slos:
  - name: availability
    type: availability
    models: all
    objective: 99
    period: 3d
    min_request_rate: 0.1
  - name: latency
    type: latency
    models: [tail_model]
    objective: 99
    period: 3d
    threshold: 500ms
    quantile: 0.99
    min_request_rate: 0.1
"""
TAIL_THRESHOLD_S = 0.5
# TritonModelUnavailable waits `for: 2m` from Prometheus's start (the end of `stack up`, after the
# model loads); evaluation and group_wait add seconds.
UNAVAILABLE_DEADLINE_S = 150

pytestmark = pytest.mark.triton


def _run(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}  # use the stand-in
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env)


def _url(state: dict[str, Any], name: str) -> str:
    for comp in state["components"]:
        if comp["name"] == name:
            return str(comp["url"])
    raise AssertionError(f"no component {name} in {state}")


def _wait(what: str, probe: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(1)


def _stack_processes(state: dict[str, Any]) -> set[int]:
    groups = {comp["pid"] for comp in state["components"]}
    groups |= {comp["server_pid"] for comp in state["components"] if "server_pid" in comp}
    return {pid for group in groups for pid in process_group_members(group)}


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie waits for its reaper: it runs nothing


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("stack")
    slos = work / "slos.yaml"
    slos.write_text(SHORT_SLOS)
    workdir = work / "run"
    started = time.monotonic()
    result = _run(
        "stack", "up", "--workdir", str(workdir), "--slo-file", str(slos),
        "--interval", "1", "--group-wait", "1", "--format", "json",
        timeout=300,  # the models load one at a time after the exporter is up
    )  # fmt: skip
    try:
        assert result.returncode == 0, f"stack up failed:\n{result.stderr}"
        state: dict[str, Any] = json.loads(result.stdout)
        names = [comp["name"] for comp in state["components"]]
        assert "bot" in names and "slack-standin" in names, (
            f"the stack has no bot ({names}): `triton-sre bot` (triton_sre.bot) and its Slack stand-in "
            f"must be installed for the end-to-end test; stack up said:\n{result.stderr}"
        )
        state["workdir_path"] = workdir
        state["up_started"] = started
        state["up_seconds"] = time.monotonic() - started
        state["processes"] = _stack_processes(state)
        yield state
    finally:
        _run("stack", "down", "--workdir", str(workdir))


def _standin_calls(state: dict[str, Any]) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = requests.get(
        f"{_url(state, 'slack-standin')}/_standin/calls", timeout=5
    ).json()
    return calls


def _posts(state: dict[str, Any], alertname: str, model: str) -> list[str]:
    """Text + blocks of every accepted chat.postMessage/update about `alertname` and `model`."""
    found = []
    for call in _standin_calls(state):
        if call["method"] not in ("chat.postMessage", "chat.update") or not call["response"].get("ok"):
            continue
        text = json.dumps(call["params"], ensure_ascii=False)
        if alertname in text and model in text:
            found.append(text)
    return found


def _prom_alerts(state: dict[str, Any]) -> list[dict[str, Any]]:
    body = requests.get(f"{_url(state, 'prometheus')}/api/v1/alerts", timeout=5).json()
    alerts: list[dict[str, Any]] = body["data"]["alerts"]
    return alerts


def _page_firing(state: dict[str, Any], alertname: str, model: str) -> bool:
    return any(
        a["labels"].get("alertname") == alertname
        and a["labels"].get("model") == model
        and a["labels"].get(c.L_SEVERITY) == c.SEVERITY_PAGE
        and a["state"] == "firing"
        for a in _prom_alerts(state)
    )


def test_stack_up_starts_every_component_and_status_lists_them(stack: dict[str, Any]) -> None:
    # ten models loaded one at a time after the exporter is up (docs/load-times.md): ~3-5 s each
    assert stack["up_seconds"] < 150, stack["up_seconds"]
    result = _run("stack", "status", "--workdir", str(stack["workdir_path"]), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    status = json.loads(result.stdout)
    assert [x["name"] for x in status["components"]] == [
        "exporter", "triton", "prometheus", "alertmanager", "slack-standin", "bot",
    ]  # fmt: skip
    assert all(
        x["alive"] and x["pid"] > 0 and x["url"].startswith("http://127.0.0.1:") for x in status["components"]
    )
    for name, path in (("exporter", c.PATH_READYZ), ("prometheus", "/-/ready"), ("alertmanager", "/-/ready")):
        assert requests.get(f"{_url(stack, name)}{path}", timeout=5).status_code == 200, name
    assert requests.get(f"{_url(stack, 'bot')}{c.PATH_HEALTHZ}", timeout=5).status_code == 200
    # a second `up` on the same workdir refuses instead of starting a second stack
    again = _run("stack", "up", "--workdir", str(stack["workdir_path"]))
    assert again.returncode == 1 and "already running" in again.stderr


def test_failing_requests_fire_the_slo_page_and_reach_slack(stack: dict[str, Any]) -> None:
    prom = _url(stack, "prometheus")
    driver = TrafficDriver(
        _url(stack, "triton"), {VECTOR_SCALE: 4, TEXT_ECHO: 1}, error_fraction=0.3, max_duration_s=90
    )
    driver.start()
    try:

        def traffic_seen() -> bool:
            series = f'{c.NV_REQUEST_SUCCESS}{{job="{c.DEFAULT_TRITON_JOB}",model="{VECTOR_SCALE}"}}'
            expr = f"sum(rate({series}[1m]))"
            result = requests.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=5).json()
            return bool(result["data"]["result"]) and float(result["data"]["result"][0]["value"][1]) > 0

        _wait("Prometheus to see traffic on vector_scale", traffic_seen, 30)

        _wait(
            "TritonSLOErrorBudgetBurn (page) to fire for vector_scale",
            lambda: _page_firing(stack, c.ALERT_SLO_ERROR_BUDGET_BURN, VECTOR_SCALE),
            60,
        )
    finally:
        driver.stop()
    posts = _wait(
        "the Slack stand-in to receive the SLO page",
        lambda: _posts(stack, c.ALERT_SLO_ERROR_BUDGET_BURN, VECTOR_SCALE),
        30,
    )
    runbook = c.ALERT_RUNBOOKS[c.ALERT_SLO_ERROR_BUDGET_BURN]
    assert any(f"{runbook}.md" in p and c.SEVERITY_PAGE in p for p in posts), posts[0][:2000]
    assert any(load_catalog()[runbook].remediation in p for p in posts), posts[0][:2000]
    # What Alertmanager holds (and sent the bot): the burn rate as its own annotation, the same
    # figure the description shows, at or above the page tier's factor.
    am = requests.get(f"{_url(stack, 'alertmanager')}/api/v2/alerts", timeout=5).json()
    pages = [
        a
        for a in am
        if a["labels"].get("alertname") == c.ALERT_SLO_ERROR_BUDGET_BURN
        and a["labels"].get("model") == VECTOR_SCALE
        and a["labels"].get(c.L_SEVERITY) == c.SEVERITY_PAGE
    ]
    assert pages, am
    slo = next(s for s in parse_spec(SHORT_SLOS).slos if s.type == c.SLO_AVAILABILITY)
    factors = {long: factor for long, _short, _share, _severity, factor in tiers(slo)}
    for alert in pages:
        value, window = alert["annotations"][c.ANNOTATION_BURN_RATE], alert["labels"][c.L_WINDOW]
        assert float(value) >= factors[window] - 0.05, (value, window)  # printed with one decimal
        assert f" is {value}x (threshold" in alert["annotations"]["description"]


def _instant(state: dict[str, Any], expr: str) -> float | None:
    body = requests.get(f"{_url(state, 'prometheus')}/api/v1/query", params={"query": expr}, timeout=5).json()
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def test_the_tail_model_pages_on_its_p99_while_its_average_holds(stack: dict[str, Any]) -> None:
    driver = TrafficDriver(_url(stack, "triton"), {TAIL_MODEL: 2}, max_duration_s=90)
    driver.start()
    try:
        started = time.monotonic()
        _wait(
            "TritonSLOLatencyBudgetBurn (page) to fire for tail_model",
            lambda: _page_firing(stack, c.ALERT_SLO_LATENCY_BUDGET_BURN, TAIL_MODEL),
            60,
        )
        model = f'model="{TAIL_MODEL}"'
        average = _instant(
            stack,
            f"sum(rate({c.NV_REQUEST_DURATION_US}{{{model}}}[1m])) / 1e6"
            f" / sum(rate({c.NV_REQUEST_SUCCESS}{{{model}}}[1m]))",
        )
        p99 = _instant(stack, f'max({c.NV_REQUEST_SUMMARY_US}{{{model}, quantile="0.99"}}) / 1e6')
        print(
            f"\n{TAIL_MODEL}: latency page after {time.monotonic() - started:.0f} s of traffic; "
            f"average {average:.4f} s, p99 {p99:.4f} s, threshold {TAIL_THRESHOLD_S} s"
        )
        assert average is not None and p99 is not None and average < TAIL_THRESHOLD_S < p99
    finally:
        driver.stop()
    posts = _wait(
        "the Slack stand-in to receive the latency page",
        lambda: _posts(stack, c.ALERT_SLO_LATENCY_BUDGET_BURN, TAIL_MODEL),
        30,
    )
    assert any("p99 now" in p and "(SLO on p99) vs threshold 500 ms" in p for p in posts), posts[0][:3000]


def test_kv_cache_saturation_fires_through_alertmanager_to_the_bot(stack: dict[str, Any]) -> None:
    """Saturating streams on llm_vllm fill its KV cache with requests waiting: the real Prometheus
    fires TritonLLMKVCacheSaturated (`saturated_for: 1m` in this stack's spec), Alertmanager routes
    it, and the bot's message names the model, the cache use, the verdict and the runbook."""
    driver = TrafficDriver(
        # three clients per sequence slot (as the gameday's scenario): the alert needs a waiting request at
        # every evaluation for a minute, and on a loaded host a client is slow to send its next request
        _url(stack, "triton"), {LLM_VLLM: LLM_MAX_NUM_SEQS * 3}, llm_saturate=True, max_duration_s=420
    )
    driver.start()
    try:

        def firing() -> bool:
            return any(
                a["labels"].get("alertname") == c.ALERT_LLM_KV_CACHE_SATURATED
                and a["labels"].get("model") == LLM_VLLM
                and a["state"] == "firing"
                for a in _prom_alerts(stack)
            )

        _wait("TritonLLMKVCacheSaturated to fire for llm_vllm", firing, 300)
        posts = _wait(
            "the Slack stand-in to receive TritonLLMKVCacheSaturated",
            lambda: _posts(stack, c.ALERT_LLM_KV_CACHE_SATURATED, LLM_VLLM),
            60,
        )
    finally:
        driver.stop()
    runbook = c.ALERT_RUNBOOKS[c.ALERT_LLM_KV_CACHE_SATURATED]
    text = next((p for p in posts if "KV cache:" in p), posts[0])
    assert f"{runbook}.md" in text, text[:3000]
    assert "*KV cache:* 100.0%" in text or "*KV cache:* 9" in text, text[:3000]  # the bot's figure
    assert "memory-bound" in text and "TTFT p99" in text, text[:3000]


# After the KV-cache test: the broken models' `for: 2m` runs from `stack up`, so the minute of saturation
# above passes within it instead of after it.
def test_broken_models_fire_model_unavailable_with_their_runbooks_in_slack(stack: dict[str, Any]) -> None:
    def all_posted() -> dict[str, list[str]] | None:
        posts = {m: _posts(stack, c.ALERT_MODEL_UNAVAILABLE, m) for m in BROKEN_IN_INDEX}
        return posts if all(posts.values()) else None

    up_ended = stack["up_started"] + stack["up_seconds"]
    remaining = UNAVAILABLE_DEADLINE_S - (time.monotonic() - up_ended)
    posts = _wait(
        "TritonModelUnavailable for every broken model in the Slack stand-in", all_posted, remaining
    )
    for model, texts in posts.items():
        runbook = BROKEN_RUNBOOKS[model]
        assert any(f"{runbook}.md" in t for t in texts), (
            f"{model}: no link to {runbook}.md in {texts[0][:2000]}"
        )
        other = [r for m, r in BROKEN_RUNBOOKS.items() if m != model]
        assert not any(f"runbooks/{r}.md" in t for t in texts for r in other), model
    # Alertmanager holds them, routed to the bot's receiver
    am = requests.get(f"{_url(stack, 'alertmanager')}/api/v2/alerts", timeout=5).json()
    routed = {
        a["labels"]["model"]
        for a in am
        if a["labels"].get("alertname") == c.ALERT_MODEL_UNAVAILABLE
        and c.AM_RECEIVER_BOT in [r["name"] for r in a["receivers"]]
    }
    assert routed >= set(BROKEN_IN_INDEX)


def test_prometheus_keeps_every_range_its_rules_read(stack: dict[str, Any]) -> None:
    """`doctor`'s retention check passes on the stack it is pointed at: Prometheus started with the
    retention the loaded rules need (round twenty: `stack up` left the 15d default while docker-compose.yml
    keeps 30d, so `doctor` warned on a default-spec stack)."""
    from triton_sre.doctor.promchecks import groups_from_api, longest_range, retention

    prom = _url(stack, "prometheus")
    retained = requests.get(f"{prom}/api/v1/status/runtimeinfo", timeout=5).json()["data"]["storageRetention"]
    loaded = groups_from_api(requests.get(f"{prom}/api/v1/rules", timeout=5).json()["data"])
    assert longest_range(loaded) > 0
    assert retention(retained, loaded).ok, retained


def test_the_default_spec_keeps_its_slo_period_and_a_short_one_prometheus_default() -> None:
    from triton_sre.generate.command import render_all
    from triton_sre.slo import default_spec
    from triton_sre.stack.local import retention_for

    assert retention_for(render_all(default_spec(), "http://runbooks/")) == "30d"
    assert retention_for(render_all(parse_spec(SHORT_SLOS), "http://runbooks/")) == "15d"


def test_stack_down_stops_everything_it_started_and_nothing_else(stack: dict[str, Any]) -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        processes = stack["processes"] | _stack_processes(stack)
        assert processes
        result = _run("stack", "down", "--workdir", str(stack["workdir_path"]))
        assert result.returncode == 0, result.stderr
        stray = sorted(pid for pid in processes if _running(pid))
        assert stray == [], f"still running after stack down: {stray}"
        assert bystander.poll() is None, "stack down stopped a process it did not start"
        status = _run("stack", "status", "--workdir", str(stack["workdir_path"]), "--format", "json")
        assert status.returncode == 1 and json.loads(status.stdout)["components"] == []
    finally:
        bystander.kill()
        bystander.wait()
