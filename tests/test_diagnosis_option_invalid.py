"""A start-up setting tritonserver refuses (``server-option-invalid``): the real 2.51 server given bad
settings, and the wording of the releases and front ends it cannot show.

The captures under ``tests/data/logs/real/option-<name>.log`` come from the real server started with each
setting of `SETTINGS` (regenerate them with ``python tests/test_diagnosis_option_invalid.py``); the live
test makes them again and checks the same diagnosis.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import os
import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt, diagnose_server_capture, run_until_exit

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton

MODELS: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": ({"config.pbtxt": config_pbtxt("ok_model"), "1/model.py": OK_PY}, None)
}
SAME_PORT = "{http_port}"
"""Stands for the server's own HTTP port in `Setting.args`."""


@dataclass(frozen=True)
class Setting:
    args: tuple[str, ...]
    quoted: tuple[str, ...]
    """Every piece the top finding's evidence must hold: the flag and what was wrong."""
    exit_on_error: bool = False


SETTINGS = {
    "unknown-flag": Setting(("--no-such-flag", "1"), ("unrecognized option '--no-such-flag'",)),
    "model-control-mode": Setting(
        ("--model-control-mode", "manual"),
        ('Bad option: "--model-control-mode".', "invalid argument for --model-control-mode"),
    ),
    "trace-config": Setting(
        ("--trace-config", "level=BOGUS"),
        ('Bad option: "--trace-config level".', "invalid value for trace level option: bogus"),
    ),
    "cache-both": Setting(
        ("--cache-config", "local,size=1048576", "--response-cache-byte-size", "1048576"),
        ("Incompatible flags --response-cache-byte-size and --cache-config",),
    ),
    "cache-not-found": Setting(
        ("--cache-config", "local,size=1048576"),
        ("error: creating server", "unable to find 'libtritoncache_local.so' for cache"),
        exit_on_error=True,
    ),
    "same-port": Setting(
        ("--metrics-port", SAME_PORT),
        ("The server cannot listen to HTTP requests and metrics requests at the same address and port",),
    ),
    "gpu-limit": Setting(("--model-load-gpu-limit", "-1:0.6"), ("expects device ID >= 0, got -1",)),
    "vertex-ai-routes": Setting(
        ("--allow-vertex-ai", "true", "--vertex-ai-port", "0"),
        ("failed to start Vertex AI service", "API_PREDICT_ROUTE is not defined for Vertex AI endpoint"),
    ),
}


def fixture_path(name: str) -> Path:
    return FIXTURES / f"option-{name}.log"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def capture(name: str, workdir: Path, log_path: Path) -> int | None:
    """Start the real server with the setting ``name``, wait for it to exit, return its code."""
    setting = SETTINGS[name]
    http_port = _free_port()
    args = [a.replace(SAME_PORT, str(http_port)) for a in setting.args]
    server = LocalTriton(
        build_repository(workdir / "repo", MODELS),
        workdir=workdir / "triton",
        log_path=log_path,
        http_port=http_port,
        exit_on_error=setting.exit_on_error,
        startup_timeout=60,
        extra_args=args,
    )
    return run_until_exit(server)


def top_finding(report: Report, quoted: tuple[str, ...]) -> None:
    assert report.findings, "no finding"
    top = report.findings[0]
    assert (top.model, top.runbook, top.severity) == (
        None,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        c.IMPACT_CRITICAL,
    )
    evidence = " ".join(e.text for e in top.evidence)
    assert all(q in evidence for q in quoted), (quoted, evidence)


def check(name: str, path: Path) -> None:
    assert path.exists(), f"missing fixture {path}: run python {Path(__file__).name}"
    top_finding(diagnose_server_capture(path), SETTINGS[name].quoted)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_committed_capture(name: str) -> None:
    check(name, fixture_path(name))


@pytest.mark.triton
@pytest.mark.skipif(any(k.startswith("AIP_") for k in os.environ), reason="Vertex AI variables are set")
@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_live_server_refusing_a_setting(tmp_path: Path, name: str) -> None:
    log = tmp_path / "triton.log"
    code = capture(name, tmp_path, log)
    assert code not in (None, 0), f"{name}: the server did not stop ({code}): {log.read_text()[-500:]}"
    check(name, log)


# -------------------------------------------------------------- the wording of other releases and front ends
@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        # server src/command_line_parser.cc r23.09 on: the usage, then the flag and the reason.
        (
            "Usage: tritonserver [options]\n  --help\n\tPrint usage\n\nBad option: \"--grpc-restricted-protocol\".\nunknown restricted protocol 'model-reposit' \n\n",
            "Bad option: \"--grpc-restricted-protocol\". unknown restricted protocol 'model-reposit'",
        ),
        (
            "Bad option: \"--http-restricted-api\".\nrestricted api 'health' can not be specified in multiple config groups\n",
            "restricted api 'health' can not be specified in multiple config groups",
        ),
        # qa/L0_cmdline_trace: an OpenTelemetry setting by its mode (r23.09 on) and by its variable (r24.02 on).
        (
            'Bad option: "--trace-config opentelemetry,bsp_max_queue_size".\nInvalid option value. Got bad_value\n',
            'Bad option: "--trace-config opentelemetry,bsp_max_queue_size". Invalid option value. Got bad_value',
        ),
        (
            'Bad option: "OTEL_BSP_MAX_QUEUE_SIZE".\nInvalid option value. Got bad_value\n',
            'Bad option: "OTEL_BSP_MAX_QUEUE_SIZE". Invalid option value. Got bad_value',
        ),
        (
            'Bad option: "--http-max-input-size".\nError: --http-max-input-size must be greater than 0.\n',
            "Error: --http-max-input-size must be greater than 0.",
        ),
        # r19.05 to r23.08: the reason first, the usage after it.
        (
            "invalid argument for --model-control-mode\nUsage: tritonserver [options]\n  --help\n\tPrint usage\n",
            "invalid argument for --model-control-mode",
        ),
        (
            "--backend-config option format is '<backend name>,<setting>=<value>'. Got tensorflow\nUsage: tritonserver [options]\n",
            "--backend-config option format is",
        ),
        ("Unexpected argument: models\nUsage: tritonserver [options]\n", "Unexpected argument: models"),
        # glibc getopt_long before the usage (clearml-serving#88).
        (
            "tritonserver: unrecognized option '--t_exit_on_error=True'\nUsage: tritonserver [options]\n",
            "unrecognized option",
        ),
        # Checks of the flags together (qa/L0_sagemaker: HTTP outside the safe port range).
        (
            "The server cannot listen to HTTP requests at port 8000, allowed port range is [8080, 8080]\n",
            "allowed port range is",
        ),
        (
            "Error: Use of '--load-model' requires setting '--model-control-mode=explicit' as well.\n",
            "requires setting '--model-control-mode=explicit'",
        ),
        # Core refusing an option while they are built (r23.04 on).
        (
            "Failed to build Triton option:\nerror: setting model load GPU limit: Invalid argument - expects limit fraction to be in range [0.0, 1.0], got -0.400000\n",
            "expects limit fraction to be in range",
        ),
        # The response cache: core, the local and Redis caches (qa/L0_response_cache).
        (
            "error: creating server: Invalid argument - found multiple cache configurations, but only a single cache is currently supported\n",
            "found multiple cache configurations",
        ),
        (
            "error: creating server: Internal - Failed to initialize RedisCache: failed to connect to Redis (localhost:0): Connection refused\n",
            "failed to connect to Redis",
        ),
        (
            "error: creating server: Invalid argument - Failed to initialize RedisCache, didn't specify address. Must at a minimum specify 'host' and 'port' in the configuration - e.g. tritonserver --cache-config redis,host=redis --cache-config redis,port=6379 --model-repository=/models ...\n",
            "Failed to initialize RedisCache",
        ),
        (
            "error: creating server: Invalid argument - Failed to initialize LocalCache: config didn't contain a valid 'size' field.\n",
            "Failed to initialize LocalCache",
        ),
        (
            "E1203 20:04:34.632407 19294 tritonserver.cc:2607] \"Invalid argument: unable to find 'libtritoncache_local.so' for cache. Searched: /nonexistent\"\n",
            "unable to find 'libtritoncache_local.so' for cache",
        ),
        # Tracing: main.cc around tracer.cc's reason.
        (
            "E0101 00:00:00.000000 1 main.cc:220] failed to configure tracing: Invalid argument - Attempting to set invalid trace setting :trace file name is not given\n",
            "failed to configure tracing",
        ),
        # Vertex AI (qa/L0_vertex_ai, pytriton#45) and SageMaker's serve script (qa/L0_sagemaker).
        (
            'E0101 00:00:00.000000 1 main.cc:282] "failed to start Vertex AI service: Invalid argument - AIP_HEALTH_ROUTE is not defined for Vertex AI endpoint"\n',
            "AIP_HEALTH_ROUTE is not defined",
        ),
        (
            "failed to start Vertex AI service: Invalid argument - Expect the model repository contains only a single model if default model is not specified\n",
            "Expect the model repository contains only a single model",
        ),
        (
            "ERROR: Invalid SAGEMAKER_TRITON_INFERENCE_TYPE 'incorrect_inference_type'\n       Must be one of: infer, generate, generate_stream\n",
            "Invalid SAGEMAKER_TRITON_INFERENCE_TYPE",
        ),
        (
            "ERROR: More than 1 model directory found in model repository.\n       Either provide a single directory or set SAGEMAKER_TRITON_DEFAULT_MODEL_NAME to run the ensemble backend.\n",
            "More than 1 model directory found",
        ),
    ],
)
def test_option_wording(text: str, quoted: str) -> None:
    top_finding(diagnose_events(parse_text(text)), (quoted,))


@pytest.mark.parametrize(
    ("text", "runbook"),
    [
        # A port another process holds is its own page, also on a front end's line.
        (
            "E1201 22:34:10.571872 4002 main.cc:293] \"failed to start Vertex AI service: Unavailable - Socket '0.0.0.0:8080' already in use \"\n",
            c.RUNBOOK_SERVER_PORT_IN_USE,
        ),
        # A model's load failure is its model's page, whatever the start-up ends with.
        (
            "E1203 10:00:00.000000 1 model_lifecycle.cc:654] \"failed to load 'm' version 1: Not found: unable to load shared library: libcudart.so.12: cannot open shared object file: No such file or directory\"\n"
            "error: creating server: Internal - failed to load all models\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # A default model the repository does not hold: a named model with no folder.
        (
            "ERROR: Directory with provided SAGEMAKER_TRITON_DEFAULT_MODEL_NAME incorrect_model_name does not exist\n",
            None,
        ),
    ],
)
def test_what_other_pages_decide_stays_theirs(text: str, runbook: str | None) -> None:
    findings = diagnose_events(parse_text(text)).findings
    assert all(f.runbook != c.RUNBOOK_SERVER_OPTION_INVALID for f in findings), findings
    if runbook is not None:
        assert findings[0].runbook == runbook


def test_failed_to_load_all_models_alone_is_no_setting() -> None:
    findings = diagnose_events(
        parse_text("error: creating server: Internal - failed to load all models\n")
    ).findings
    assert [f.runbook for f in findings] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for setting in sorted(SETTINGS):
            out = fixture_path(setting)
            out.unlink(missing_ok=True)
            print(setting, capture(setting, Path(tmp) / setting, out))
            check(setting, out)
    sys.exit(0)
