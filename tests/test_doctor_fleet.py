"""`doctor` on a fleet-sized Triton (thousands of models) and on Prometheus answers of the wrong
shape: the same facts as reading each model one by one, over a few kept-alive connections, and a
finding (not a traceback) for a targets answer that is not what Prometheus writes.

Stand-ins: tests/fleet_standins.py (no real Triton here holds thousands of models). Correctness
only: the figures are bench/bench_doctor_report_fleet.py's.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from fleet_standins import FleetPrometheus, FleetTriton, model_name
from test_doctor import _doctor

from triton_sre import conventions as c
from triton_sre.doctor.command import CONFIG_WORKERS, diagnose, model_configs, triton_facts
from triton_sre.doctor.facts import model_facts
from triton_sre.httpclient import new_session
from triton_sre.slo import default_spec
from triton_sre.triton.client import TritonClient

MODELS = 3000


@pytest.fixture(scope="module")
def fleet() -> FleetTriton:
    with FleetTriton(MODELS, llm_every=500, cache_every=700, memory_every=7) as server:
        yield server


def _with_prometheus(
    fleet: FleetTriton, prom: FleetPrometheus, *args: str
) -> subprocess.CompletedProcess[str]:
    metrics = f"{fleet.url}{c.PATH_METRICS}"
    return _doctor("--triton-url", fleet.url, "--metrics-url", metrics, "--prometheus-url", prom.url, *args)


def test_every_model_read_once_in_order_over_a_few_connections(fleet: FleetTriton) -> None:
    before_calls = fleet.requests["/v2/models/*/config"]
    before_connections = fleet.connections
    client = TritonClient(fleet.url, f"{fleet.url}{c.PATH_METRICS}", timeout=30, session=new_session())
    facts = triton_facts(client)
    expected = tuple(
        model_facts(model_name(i), fleet.config(i)) for i in sorted(range(MODELS), key=model_name)
    )
    assert facts.models == expected
    assert fleet.requests["/v2/models/*/config"] - before_calls == MODELS
    # the shared session (metadata, metrics, index, stats) and one per config worker, kept alive
    assert fleet.connections - before_connections <= CONFIG_WORKERS + 1
    assert facts.llm_models == frozenset()  # the synthetic body has no vLLM family
    assert len(facts.memory_models) == len(range(0, MODELS, 7))


def test_checks_name_the_fleet_figures(fleet: FleetTriton) -> None:
    report = diagnose(fleet.url, f"{fleet.url}{c.PATH_METRICS}", default_spec(), timeout=30)
    checks = {check.id: check for check in report.checks}
    silent = MODELS - len(range(0, MODELS, 7))
    assert checks[c.CHECK_MODEL_MEMORY].found.startswith(
        f"{silent} of {MODELS} models report no memory_usage"
    )
    llm = len(range(0, MODELS, 500))
    assert checks[c.CHECK_LLM_METRICS].found.startswith(f"{llm} LLM model(s); reporting: none")
    cached = [model_name(i) for i in range(0, MODELS, 700)]
    assert f"response cache enabled for {', '.join(cached)}" in checks[c.CHECK_RESPONSE_CACHE].found


def test_a_model_unloaded_between_index_and_config_is_left_out(fleet: FleetTriton) -> None:
    client = TritonClient(fleet.url, f"{fleet.url}{c.PATH_METRICS}", timeout=30)
    names = [model_name(0), "gone", model_name(1)]
    got = list(model_configs(client, names, workers=2))
    assert [m.name if m else None for m in got] == [model_name(0), None, model_name(1)]


def test_cli_on_the_fleet_matches_the_library(fleet: FleetTriton) -> None:
    done = _doctor(
        "--triton-url", fleet.url, "--metrics-url", f"{fleet.url}{c.PATH_METRICS}", "--format", "json"
    )
    assert done.returncode == c.EXIT_FAILURE, done.stderr  # the vLLM models report no metrics
    assert "Traceback" not in done.stderr
    assert done.stderr == ""  # not a terminal: no progress line
    report = diagnose(fleet.url, f"{fleet.url}{c.PATH_METRICS}", default_spec(), timeout=30)
    assert json.loads(done.stdout) == report.as_json()


WRONG_TARGETS = {
    "activeTargets is an object": {"activeTargets": {"job": "triton"}},
    "activeTargets is a string": {"activeTargets": "triton"},
    "activeTargets is a number": {"activeTargets": 3},
    "a target is a list": {"activeTargets": [["triton", "up"]]},
    "labels is a list": {"activeTargets": [{"labels": ["job", "triton"], "health": "up"}]},
    "no activeTargets": {"droppedTargets": []},
}


@pytest.mark.parametrize("shape", list(WRONG_TARGETS))
def test_a_targets_answer_of_the_wrong_shape_is_a_finding(fleet: FleetTriton, shape: str) -> None:
    body = json.dumps({"status": "success", "data": WRONG_TARGETS[shape]}).encode()
    with FleetPrometheus(0, targets_body=body) as prom:
        done = _with_prometheus(fleet, prom, "--format", "json")
    assert "Traceback" not in done.stderr
    assert done.returncode == c.EXIT_FAILURE, done.stderr
    jobs = next(ch for ch in json.loads(done.stdout)["checks"] if ch["id"] == c.CHECK_PROMETHEUS_JOBS)
    assert not jobs["ok"] and jobs["needed"]
    assert "/api/v1/targets" in jobs["found"]


@pytest.mark.parametrize(
    "body",
    [b'{"status":"success","data":[1,2]}', b'{"status":"success","data":null}', b"<html>proxy</html>"],
    ids=["data a list", "data null", "not JSON"],
)
def test_a_targets_answer_that_is_no_api_answer_exits_2(fleet: FleetTriton, body: bytes) -> None:
    with FleetPrometheus(0, targets_body=body) as prom:
        done = _with_prometheus(fleet, prom)
    assert done.returncode == c.EXIT_USAGE
    assert "Traceback" not in done.stderr
    assert "/api/v1/targets" in done.stderr or prom.url in done.stderr


def test_many_targets_with_some_down(fleet: FleetTriton) -> None:
    with FleetPrometheus(20_000, down_every=5000) as prom:
        report = diagnose(
            fleet.url, f"{fleet.url}{c.PATH_METRICS}", default_spec(), prometheus_url=prom.url, timeout=30
        )
    jobs = next(ch for ch in report.checks if ch.id == c.CHECK_PROMETHEUS_JOBS)
    assert not jobs.ok
    assert f"{c.DEFAULT_TRITON_JOB}: 9996/10000 up" in jobs.found
    assert jobs.found.count("is down") == 4


def test_a_metrics_body_over_the_limit_names_the_flag_that_raises_it(fleet: FleetTriton) -> None:
    """A Triton with more models than the default 32 MiB of /metrics holds: a clear exit 2 that names
    --max-response-bytes, and with the limit raised the same Triton is read (here the limit is lowered
    under this fleet's body instead, which is the same branch)."""
    metrics = f"{fleet.url}{c.PATH_METRICS}"
    body = len(TritonClient(fleet.url, metrics, timeout=30).metrics())
    base = ("--triton-url", fleet.url, "--metrics-url", metrics, "--format", "json")
    refused = _doctor(*base, "--max-response-bytes", str(body - 1))
    assert refused.returncode == c.EXIT_USAGE
    assert "Traceback" not in refused.stderr
    assert c.FAULT_TOO_LARGE in refused.stderr and "--max-response-bytes" in refused.stderr
    read = _doctor(*base, "--max-response-bytes", str(body + 1))
    assert read.returncode != c.EXIT_USAGE, read.stderr
    assert json.loads(read.stdout)["checks"]


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "lots"])
def test_a_response_limit_that_is_no_byte_count_is_a_usage_error(value: str) -> None:
    done = _doctor("--triton-url", "http://127.0.0.1:9", "--max-response-bytes", value)
    assert done.returncode == c.EXIT_USAGE
    assert "expected a whole number of bytes above 0" in done.stderr
