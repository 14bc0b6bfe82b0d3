"""Issue 20 item 4: known issues by release (`known_issues.yaml`), each tied to its public source,
and a crash (Triton's error-signal handler) as a failure signal they can attach to.

The wordings are quoted from the threads named next to them; the release comes from the banner.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.known_issues import known_issues
from triton_sre.diagnosis.logparse import parse_text

# server#8284 (24.05): Triton's ErrorSignalHandler, then the shell's own report of the SIGSEGV.
CRASH_8284 = """NVIDIA Release 24.05 (build 94071063)
Triton Server Version 2.46.0
Signal (11) received.
 0# 0x000060322740904D in /opt/tritonserver/bin/tritonserver
 1# 0x000071FB7C344520 in /usr/lib/x86_64-linux-gnu/libc.so.6
 8# clone in /usr/lib/x86_64-linux-gnu/libc.so.6

/workspace/start.sh: line 15:   341 Segmentation fault      (core dumped) /opt/tritonserver/bin/tritonserver --model-repository=/model_repository
"""

# server#8662 (26.01): the Python stub segfaults at shutdown in the custom-metrics code. The frames
# are #8662's (a gdb trace there), laid out as Triton's handler prints a stack (" N# frame"): a gdb
# "#N" line reads as a comment in a paste and is not part of the finding.
METRICS_8662 = """NVIDIA Release 26.01 (build 1)
Signal (11) received.
 0# triton::backend::python::Metric::SaveToSharedMemory()
 1# triton::backend::python::Metric::Clear()
 2# triton::backend::python::MetricFamily::~MetricFamily()
"""


def first(text: str):
    report = diagnose_events(parse_text(text))
    assert report.findings, text
    return report.findings[0]


def test_a_crash_is_a_failure_never_an_empty_answer() -> None:
    f = first(CRASH_8284)
    assert (f.runbook, f.severity) == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)
    assert "Signal (11) received" in f.evidence[0].text


def test_a_crash_right_after_an_info_line_is_a_failure_with_its_stack() -> None:
    # Triton's handler prints unprefixed, so the report continues the INFO line before it; it used to be
    # read as that line's rest and the log had no finding. The finding quotes the signal's own line and
    # keeps the INFO line and the stack as its message (where a known issue's wording looks).
    text = CRASH_8284.split("\n\n")[0].replace(
        "Signal (11)",
        "I0601 00:00:00.000000 1 server.cc:307] Waiting for in-flight requests to complete.\nSignal (11)",
    )
    f = first(text)
    # (that INFO line is the shutdown's: a crash after the server began to stop is a warning)
    assert (f.runbook, f.severity) == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_WARNING)
    assert f.evidence[0].text == "Signal (11) received." and f.evidence[0].line == 4
    assert f.message.startswith("Waiting for in-flight requests to complete.\nSignal (11) received.\n 0# ")
    # An INFO line's ordinary rest is still no failure.
    assert not diagnose_events(
        parse_text(
            "I0601 00:00:00.000000 1 server.cc:307] Waiting for in-flight requests to complete.\nSignal (15) received.\n"
        )
    ).has_failure


@pytest.mark.parametrize("signal", [2, 15])
def test_the_exit_signals_are_a_normal_stop(signal: int) -> None:
    # SIGINT/SIGTERM go to Triton's exit handler: a stop, not a crash.
    assert not diagnose_events(parse_text(f"Signal ({signal}) received.\n")).has_failure


# server#8663 (26.01): after a reload the stub observes a metric through freed state (the issue's frames).
METRICS_8663 = """NVIDIA Release 26.01 (build 1)
Signal (11) received.
 0# prometheus::Histogram::Observe(double) in /opt/tritonserver/bin/../lib/libtritonserver.so
 1# triton::core::Metric::Observe(double) in /opt/tritonserver/bin/../lib/libtritonserver.so
 2# triton::backend::python::Metric::Observe(double const&) in /opt/tritonserver/backends/python/libtriton_python.so
"""


def test_python_custom_metrics_crashes_name_the_issue_and_the_fixing_release() -> None:
    # The shutdown crash (server#8662) is fixed in 26.09 (python_backend#429, the v2.73.0 notes); custom
    # metrics came with 23.05, so a release before has no such crash to explain.
    f = first(METRICS_8662)
    assert "server#8662" in f.remediation and "26.09 fixes it" in f.remediation and "v2.73.0" in f.remediation
    assert "server#8662" in first(METRICS_8662.replace("26.01", "25.06")).remediation
    for outside in ("26.09", "23.04"):
        assert "server#8662" not in first(METRICS_8662.replace("26.01", outside)).remediation
    # The reload crash (server#8663) has no fixing release: still advised after 26.09.
    g = first(METRICS_8663.replace("26.01", "26.10"))
    assert "server#8663" in g.remediation and "server#8662" not in g.remediation


def test_missing_backend_named_as_model_py_in_23_10() -> None:
    # The 23.10 release notes' known issue: a missing backend is named "<backend>/model.py".
    line = "E1013 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'm' version 1: Invalid argument: unable to find backend library for backend 'onnx/model.py', try specifying runtime on the model configuration.\n"
    f = first("NVIDIA Release 23.10 (build 1)\n" + line)
    assert f.runbook == c.RUNBOOK_BACKEND_NOT_FOUND and "r23.10/RELEASE.md" in f.remediation
    assert "r23.10/RELEASE.md" not in first("NVIDIA Release 23.12 (build 1)\n" + line).remediation


def test_llama_3_1_rope_scaling_in_the_24_09_trtllm_image() -> None:
    # The 24.09 release notes (NVIDIA/TensorRT-LLM#2121): transformers < 4.43 rejects rope_scaling.
    line = "E0925 00:00:00.000000 1 model_lifecycle.cc:638] failed to load 'preprocessing' version 1: Internal: ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, 'rope_type': 'llama3'}\n"
    f = first("NVIDIA Release 24.09 (build 1)\n" + line)
    assert "transformers" in f.remediation and "v2.50.0" in f.remediation


def test_onnxruntime_tensorrt_ep_crash_in_24_03() -> None:
    text = "NVIDIA Release 24.03 (build 1)\nSignal (11) received.\n 3# 0x00007F in /opt/tritonserver/backends/onnxruntime/libonnxruntime_providers_tensorrt.so\n"
    f = first(text)
    assert "onnxruntime#20089" in f.remediation


def test_every_known_issue_names_a_public_source_and_a_range() -> None:
    assert len(known_issues()) >= 8
    for issue in known_issues():
        assert issue.source.startswith("https://github.com/"), issue
        assert issue.first is None or issue.last is None or issue.first <= issue.last, issue
