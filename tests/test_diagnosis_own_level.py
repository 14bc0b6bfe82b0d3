"""A raw line whose own logger marks it WARNING (or INFO) is read at that level, not as an error (issue 20
item 3: a log in which every model is READY gives no error finding, however noisy).

The formats: TensorRT-LLM's logger (``tensorrt_llm/common/logger.h``: ``[TensorRT-LLM][WARNING]``), vLLM's
(``WARNING 01-31 22:08:42 file.py:123]``), Python logging's default ``LEVEL:name:msg``. The warning wording
is PyTorch's CUDA out-of-memory message; the healthy start is TensorRT-LLM's from tensorrtllm_backend.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import line_level, own_level

LOADING = "I1205 02:00:01.000000 1 model_lifecycle.cc:472] loading: tensorrt_llm:1\n"
READY = (
    "I1205 02:00:09.000000 1 model_lifecycle.cc:839] successfully loaded 'tensorrt_llm'\n"
    "I1205 02:00:09.100000 1 server.cc:676] \n"
    "+--------------+---------+--------+\n"
    "| Model        | Version | Status |\n"
    "+--------------+---------+--------+\n"
    "| tensorrt_llm | 1       | READY  |\n"
    "+--------------+---------+--------+\n"
    "\n"
    "I1205 02:00:09.200000 1 grpc_server.cc:2466] Started GRPCInferenceService at 0.0.0.0:8001\n"
    "I1205 02:00:09.300000 1 http_server.cc:4636] Started HTTPService at 0.0.0.0:8000\n"
)
FAILED = (
    "E1205 02:00:09.000000 1 model_lifecycle.cc:630] failed to load 'tensorrt_llm' version 1: Internal: "
    "unexpected error when creating modelInstanceState\n"
)
SCHEDULER = (
    "[TensorRT-LLM][WARNING] batch_scheduler_policy parameter was not found or is invalid "
    "(must be max_utilization or guaranteed_no_evict)"
)
OOM = "CUDA out of memory. Tried to allocate 2.00 GiB"
WARNINGS = (
    f"[TensorRT-LLM][WARNING] {OOM}",
    f"WARNING 01-31 22:08:42 worker.py:123] {OOM}",
    f"WARNING:vllm.worker:{OOM}",
)


@pytest.mark.parametrize("warning", [SCHEDULER, *WARNINGS])
def test_a_healthy_start_with_a_backend_warning_has_no_error_finding(warning: str) -> None:
    report = diagnose_events(parse_text(LOADING + warning + "\n" + READY))
    assert not report.has_failure
    assert all(f.severity != c.IMPACT_CRITICAL for f in report.findings)


@pytest.mark.parametrize("warning", [SCHEDULER, WARNINGS[0]])
def test_triage_exits_0_on_a_healthy_start_with_a_backend_warning(
    warning: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "start.log"
    log.write_text(LOADING + warning + "\n" + READY)
    assert main(["triage", str(log)]) == c.EXIT_OK
    assert "CRITICAL" not in capsys.readouterr().out


@pytest.mark.parametrize("warning", WARNINGS)
def test_a_warning_then_the_models_failed_load_is_still_its_critical_cause(warning: str) -> None:
    report = diagnose_events(parse_text(LOADING + warning + "\n" + FAILED))
    (finding,) = report.findings
    assert (finding.runbook, finding.severity, finding.model) == (
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
        c.IMPACT_CRITICAL,
        "tensorrt_llm",
    )
    assert report.has_failure


@pytest.mark.parametrize("warning", WARNINGS)
def test_a_warning_alone_stays_a_warning_finding(warning: str) -> None:
    (finding,) = diagnose_events(parse_text(warning + "\n")).findings
    assert (finding.runbook, finding.severity) == (c.RUNBOOK_GPU_OUT_OF_MEMORY, c.IMPACT_WARNING)


@pytest.mark.parametrize(
    ("line", "level"),
    [
        (WARNINGS[0], "W"),
        (WARNINGS[1], "W"),
        (WARNINGS[2], "W"),
        ("[TensorRT-LLM][INFO] Engine version 0.9.0 found in the config file", "I"),
        ("INFO 01-31 22:08:42 llm_engine.py:649] Initializing an LLM engine", "I"),
        ("2024-01-01 10:00:00,123 - vllm - DEBUG - weights loaded", "I"),
        ("0:00:01.234567890 4242 0x55d0c0 WARN default gstinfo.c:100:f: not negotiated", "W"),
        ("(gst-plugin-scanner:12): GLib-GObject-WARNING **: 10:00:00.000: cannot register", "W"),
        # error levels, and a warning that reports the load fails, stay errors (""): as today
        ("[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc", ""),
        ("ERROR 01-31 22:08:42 worker.py:123] " + OOM, ""),
        ("[TM][WARNING] file x has 1, but request 2, loading model fails!", ""),
        # ... and so does one whose words report a failure (a supervisor logs its child's death at WARNING)
        (
            "2024-04-01 18:18:31,964 - WARNING - pytriton.server.triton_server: Triton Inference Server "
            "exited with failure. Please wait.",
            "",
        ),
        ("RuntimeError: " + OOM, ""),
    ],
)
def test_line_level_reads_the_level_of_the_lines_own_format(line: str, level: str) -> None:
    assert line_level(line) == level


def test_a_relayed_line_has_the_relays_level_not_its_own() -> None:
    # A Python wrapper relaying Triton's E line: the INFO is the wrapper's.
    relayed = "2025-04-24 22:49:44,266 - tritonserver - INFO - E0424 22:49:44.266 1 server.cc:1] failed"
    assert line_level(relayed) == ""


def test_a_block_has_a_quiet_level_only_when_every_line_has_one() -> None:
    assert own_level(f"{WARNINGS[1]}\nINFO 01-31 22:08:43 llm_engine.py:649] go on") == "W"
    assert own_level(f"{WARNINGS[1]}\nRuntimeError: {OOM}") == ""
