"""The `triton-sre` command as a user runs it: help, export as a process, the demo end to end."""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.checks import full_url_arg, url_arg
from triton_sre.cli import build_parser, main
from triton_sre.stack.processes import free_port

CLI = [sys.executable, "-m", "triton_sre.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TRITON_SRE_", "OTEL_"))}
    env.update(extra)
    return env


@pytest.mark.parametrize("command", [[], ["export"], ["demo"]])
def test_help_everywhere(command):
    result = subprocess.run([*CLI, *command, "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert "usage:" in result.stdout and "exit codes" in result.stdout


@pytest.mark.parametrize("command", ["triage", "lint"])
def test_runbooks_help_names_the_environment_variable_it_reads(command):
    """--runbooks defaults to $TRITON_SRE_RUNBOOKS_DIR before the packaged pages (diagnosis/catalog.py)."""
    result = subprocess.run([*CLI, command, "--help"], capture_output=True, text=True, timeout=60)
    assert f"${c.ENV_RUNBOOKS_DIR}" in " ".join(result.stdout.split())


def test_unknown_command_is_a_usage_error():
    result = subprocess.run([*CLI, "frobnicate"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_export_process_configured_by_environment(triton):
    port = free_port()
    env = clean_env(
        **{
            c.ENV_TRITON_URL: triton.http_url,
            c.ENV_METRICS_URL: triton.metrics_url,
            c.ENV_LISTEN: f"127.0.0.1:{port}",
            c.ENV_INTERVAL: "0.5",
        }
    )
    process = subprocess.Popen([*CLI, "export"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if requests.get(url + c.PATH_READYZ, timeout=1).status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        else:
            pytest.fail("exporter never became ready")
        text = requests.get(url + c.PATH_METRICS, timeout=5).text
        assert f"{c.M_UP} 1.0" in text
        assert c.M_MODEL_STATE in text
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0, stderr.decode()


def test_export_cannot_listen_exits_1(triton):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*CLI, "export", "--triton-url", triton.http_url, "--listen", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
        )
    assert result.returncode == 1
    assert "cannot listen" in result.stderr


@pytest.mark.server
def test_demo_end_to_end_json():
    """The README's main job, shortened: real Triton, exporter, traffic, then a JSON summary."""
    result = subprocess.run(
        # 20 s of traffic: with 8 s, Triton 2.51's summary p99 of tail_model read 182-196 ms here (a
        # handful of slow requests in its window), with 20 s 601 ms, the 1-in-20 600 ms tail
        [*CLI, "demo", "--duration", "20", "--interval", "1", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,  # the models load one at a time after the exporter is up
        env=clean_env(),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert summary["up"] is True
    models = {m["model"]: m for m in summary["models"]}
    assert models["vector_scale"]["batching_ratio"] > 1
    assert models["slow_model"]["stage_fraction"]["queue"] > 0
    assert models["vector_scale"]["cost_per_1k_inferences"] > 0
    # the LLM models stream through the demo: tokens/s, TTFT p99 (Prometheus), KV %, cost per 1M tokens
    for llm in ("llm_vllm", "llm_trtllm"):
        figures = models[llm]["llm"]
        assert figures["tokens_per_second_output"] > 0 and 0 <= figures["kv_cache_utilization"] <= 1
        assert figures["cost_per_1m_output_tokens"] >= 0
    assert models["llm_vllm"]["llm"]["ttft_p99_seconds"] > 0.004
    # the demo table's p99 column: tail_model's 1-in-20 slow requests show there, not in ms/req
    tail = models["tail_model"]
    assert tail["p99_ms"] > 450 > 150 > sum(tail["stage_seconds"].values()) * 1000
    states = {s["model"]: s for s in summary["states"]}
    assert states["broken_missing_module"]["runbook"] == c.RUNBOOK_PYTHON_MODULE_MISSING
    assert states["broken_init"]["state"] == c.STATE_UNAVAILABLE
    assert "exporter metrics" in result.stderr  # the banner goes to stderr when stdout is JSON
    # doctor's summary at start: the stack starts Triton with summaries, the LLM models report
    assert "doctor: Triton 2.51.0, 8 checks: every input triton-sre needs is present" in result.stderr
    # the model that never enters the repository index is found in Triton's log
    from_log = {f["model"]: f["runbook"] for f in summary["log_findings"]}
    assert from_log["broken_version_dir"] == c.RUNBOOK_VERSION_DIR_INVALID


def _url_flags(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[list[str], str]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _url_flags(sub, (*path, name))
        elif action.type in (url_arg, full_url_arg):
            yield list(path), action.option_strings[-1]


ENDPOINTS = sorted(f"{' '.join(cmd)} {flag}" for cmd, flag in _url_flags(build_parser()))


def test_every_endpoint_flag_is_a_checked_url() -> None:
    """The flags naming a server, in every command (triage's among them), share `checks.url_arg` (a whole
    URL, `--metrics-url`: `checks.full_url_arg`)."""
    assert set(ENDPOINTS) >= {
        "export --triton-url",
        "export --metrics-url",
        "triage --triton-url",
        "doctor --triton-url",
        "doctor --metrics-url",
        "doctor --prometheus-url",
        "doctor --alertmanager-url",
        "report --prometheus-url",
        "rollout check --prometheus-url",
        "bot --triton-url",
        "bot --prometheus-url",
        "bot --grafana-url",
        "bot --alertmanager-url",
    }


@pytest.mark.parametrize("endpoint", ENDPOINTS)
@pytest.mark.parametrize("url", ["http://[::1", "http://host:99999", "localhost:8000", "http://"])
def test_a_url_that_does_not_parse_is_a_usage_error_by_name(
    endpoint: str, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export --triton-url 'http://[::1'` was `internal error: ValueError: Invalid IPv6 URL`."""
    *command, flag = endpoint.split()
    with pytest.raises(SystemExit) as exited:
        main([*command, f"{flag}={url}"])
    assert exited.value.code == c.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"{flag}: expected an http(s) URL" in err and "internal error" not in err


def _every_parser(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _every_parser(sub, (*path, name))


def test_every_command_and_action_lists_its_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    paths = list(_every_parser(build_parser()))
    assert ("stack", "status") in paths and ("rollout", "check") in paths
    for path in paths:
        with pytest.raises(SystemExit) as done:
            main([*path, "--help"])
        assert done.value.code == c.EXIT_OK
        assert "exit codes" in capsys.readouterr().out, path


def test_stack_status_without_a_stack_exits_1_as_its_help_says(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["stack", "status", "--help"])
    assert "1 no stack in the workdir or a component is down" in " ".join(capsys.readouterr().out.split())
    code = main(["stack", "status", "--workdir", str(tmp_path / "none"), "--format", "json"])
    assert code == c.EXIT_FAILURE
    assert json.loads(capsys.readouterr().out)["running"] is False


def test_python_dash_m_triton_sre_is_the_command(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "triton_sre", "triage", "--format", "json", str(tmp_path / "missing.log")],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env=clean_env(PYTHONPATH=str(Path(__file__).resolve().parents[1])),
    )  # fmt: skip
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert json.loads(done.stdout)["exit_code"] == c.EXIT_USAGE
    assert done.stderr.startswith("triton-sre triage: "), done.stderr
