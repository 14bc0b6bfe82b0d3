"""A process that died on a fatal signal is server-crashed (issue 20: a crash had only the fallback page).

Each wording is quoted from the program that prints it (the rule's source field in
diagnosis/crash_rules.py names the files); a cause printed beside the crash still comes first, a kill
(137) or a stop (SIGTERM, SIGINT) is no crash.
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

_LOADING = (
    'I1203 09:12:41.412870 1 model_lifecycle.cc:472] "loading: detector:1"\n'
    'I1203 09:12:41.533265 1 tensorrt.cc:231] "TRITONBACKEND_ModelInitialize: detector (version 1)"\n'
)
_READY = "I1203 09:12:43.000000 1 model_lifecycle.cc:838] \"successfully loaded 'detector'\"\n"


def _findings(text: str) -> list[tuple[str, str]]:
    return [(f.runbook, f.severity) for f in diagnose_events(parse_text(text)).findings]


@pytest.mark.parametrize(
    "line",
    [
        "Signal (11) received.",  # Triton's ErrorSignalHandler
        "Signal (6) received.",
        "Segmentation fault (core dumped)",  # bash jobs.c
        "Aborted (core dumped)",
        "/opt/run.sh: line 12:  4211 Aborted                 (core dumped) tritonserver --model-repo=/m",
        "[gpu-1:00098] Signal: Segmentation fault (11)",  # Open MPI opal/util/stacktrace.c
        "mpirun noticed that process rank 1 with PID 812 on node gpu-1 exited on signal 6 (Aborted).",
        # UCX ucs/debug/debug.c
        "[gpu-1:2211:0:2230] Caught signal 11 (Segmentation fault: address not mapped to object at 0x8)",
        "*** SIGSEGV received at time=1733217161 on cpu 3 ***",  # abseil
        "*** SIGABRT (@0x3e800000001) received by PID 1 (TID 0x7f5c) from PID 1; stack trace: ***",  # glog
        "Fatal Python error: Segmentation fault",  # CPython faulthandler
        "FatalError: `Segmentation fault` is detected by the operating system.",  # PaddlePaddle
        "[ 8121.221] tritonserver[4242]: segfault at 0 ip 00007f2a1c0b7d42 sp 00007ffd9a2c1e40 error 4 in "
        "libdetection_layer_plugin.so[7f2a1c0a0000+20000]",  # the kernel
        "      Exit Code:    139",  # kubectl describe
        "triton_1 exited with code 134",  # docker compose
        "Error: container triton terminated with exit code 139.",
        "error: exit status: signal: segmentation fault (core dumped)",  # Go os/exec
        "subprocess.CalledProcessError: Command '['tritonserver']' died with <Signals.SIGSEGV: 11>.",
        "terminate called after throwing an instance of 'c10::Error'",  # libstdc++
        "free(): double free detected in tcache 2",  # glibc
        "*** stack smashing detected ***: terminated",
    ],
)
def test_each_crash_report_is_the_crash_page(line: str) -> None:
    assert _findings(_LOADING + line + "\n")[:1] == [(c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)]


@pytest.mark.parametrize(
    "line",
    [
        "Signal (15) received.",  # a stop: Triton's exit handler
        "Signal (2) received.",
        "Aborted!",  # click's answer to Ctrl-C
        "      Exit Code:    143",
        "      Exit Code:    1394",
    ],
)
def test_a_stop_is_no_crash(line: str) -> None:
    assert c.RUNBOOK_SERVER_CRASHED not in {r for r, _s in _findings(_LOADING + _READY + line + "\n")}


def test_a_kill_is_memory_not_a_crash() -> None:
    found = _findings(_LOADING + "      Reason:       OOMKilled\n      Exit Code:    137\n")
    assert found[0][0] == c.RUNBOOK_HOST_RESOURCE_EXHAUSTED
    assert c.RUNBOOK_SERVER_CRASHED not in {r for r, _s in found}


def test_a_cause_printed_before_the_crash_comes_first() -> None:
    oom = (
        "E1203 09:12:42.100000 1 model_lifecycle.cc:630] \"failed to load 'detector' version 1: Internal: "
        'onnx runtime error 6: Exception during initialization: CUDA failure 2: out of memory"\n'
    )
    found = _findings(_LOADING + oom + "Signal (11) received.\n")
    assert found[0] == (c.RUNBOOK_GPU_OUT_OF_MEMORY, c.IMPACT_CRITICAL)


def test_the_crash_comes_before_the_restarts_it_causes() -> None:
    describe = (
        "    State:          Waiting\n"
        "      Reason:       CrashLoopBackOff\n"
        "    Last State:     Terminated\n"
        "      Reason:       Error\n"
        "      Exit Code:    139\n"
    )
    assert _findings(describe)[0] == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)
    # ... also when the restarts are read first, as their own event
    events = "  Warning  BackOff  2m (x40 over 12m)  kubelet  Back-off restarting failed container\n"
    found = [r for r, _s in _findings(events + "\n" + describe)]
    assert found[0] == c.RUNBOOK_SERVER_CRASHED


def test_an_exception_message_naming_a_cause_class_decides_over_the_abort() -> None:
    # FasterTransformer's assertion quoting a file it cannot open, then Open MPI's report of the abort.
    text = (
        "terminate called after throwing an instance of 'std::runtime_error'\n"
        "  what():  [FT][ERROR] Can't load /models/gpt/1/1-gpu//config.ini Assertion fail: "
        "/workspace/ParallelGptTritonModel.cc:182 \n"
        "[cbd7:00001] *** Process received signal ***\n"
        "[cbd7:00001] Signal: Aborted (6)\n"
    )
    assert _findings(text)[0][0] == c.RUNBOOK_MODEL_FILE_MISSING


def test_the_loads_in_flight_are_named_as_the_first_suspects() -> None:
    report = diagnose_events(parse_text(_LOADING + "Signal (11) received.\n"))
    crash = report.findings[0]
    assert crash.runbook == c.RUNBOOK_SERVER_CRASHED
    assert "crashed while loading detector:1" in crash.remediation
    assert report.still_loading == ()  # no "the log ends while loading" note: the process died


def test_a_known_crash_of_the_release_is_named() -> None:
    # server 23.05-26.08: the Python stub segfaults at shutdown clearing custom metrics (release notes).
    text = (
        "| server_version | 2.50.0 |\n"
        "Signal (11) received.\n"
        " 0# 0x000055D1C4E4E8A9 in /opt/tritonserver/backends/python/triton_python_backend_stub\n"
        " 1# triton::backend::python::Metric::Clear() in /opt/tritonserver/backends/python/"
        "triton_python_backend_stub\n"
        " 2# triton::backend::python::MetricFamily::~MetricFamily() in /opt/tritonserver/backends/python/"
        "triton_python_backend_stub\n"
    )
    crash = diagnose_events(parse_text(text)).findings[0]
    assert crash.runbook == c.RUNBOOK_SERVER_CRASHED
    assert crash.release_advice and "Triton 24.09" in crash.release_advice


def test_an_illegal_instruction_is_the_crash_page_that_names_the_cpu() -> None:
    # SIGILL: the build uses instructions this CPU does not have (AVX-512, a newer ARM). server-crashed's
    # Meaning lists SIGILL among its signals and its mitigation names the CPU; the entrypoint's own check of
    # the CPU ("built for CPUs supporting at least the AVX instruction set") stays the platform's page.
    for text in (
        "Illegal instruction (core dumped)\n",
        _LOADING + "Illegal instruction (core dumped)\n",
        "kernel: traps: python3[22586] trap invalid opcode ip:152c38e4e9d7 sp:7ffc0 error:0 in libfoo.so\n",
        "worker exited null SIGILL\n",
    ):
        assert _findings(text)[0] == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL), text


@pytest.mark.parametrize(
    "stop",
    [
        "Signal (15) received.",  # the exit handler (src/triton_signal.cc)
        'I1203 09:20:00.000000 1 server.cc:307] "Waiting for in-flight requests to complete."',
        'I1203 09:20:00.000000 1 server.cc:323] "Timeout 30: Found 1 model versions that have in-flight '
        'inferences"\nI1203 09:20:00.100000 1 server.cc:338] "All models are stopped, unloading models"',
    ],
)
def test_a_crash_after_the_server_began_to_stop_is_a_warning(stop: str) -> None:
    text = _LOADING + _READY + stop + "\nSignal (11) received.\n 0# 0x000055D1C4E4E8A9 in tritonserver\n"
    report = diagnose_events(parse_text(text))
    crash = report.findings[0]
    assert (crash.runbook, crash.severity) == (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_WARNING)
    assert "after the server began to stop" in crash.remediation
    assert not report.has_failure
    # ... while the same crash before the stop is the failure it is
    early = diagnose_events(parse_text(_LOADING + _READY + "Signal (11) received.\n" + stop + "\n"))
    assert (early.findings[0].runbook, early.findings[0].severity) == (
        c.RUNBOOK_SERVER_CRASHED,
        c.IMPACT_CRITICAL,
    )
    # ... and so is a crash of the next run, when the log holds a restart (a load starts after the stop)
    rerun = _LOADING + _READY + stop + "\n" + _LOADING + "Signal (11) received.\n"
    again = diagnose_events(parse_text(rerun))
    assert (again.findings[0].runbook, again.findings[0].severity) == (
        c.RUNBOOK_SERVER_CRASHED,
        c.IMPACT_CRITICAL,
    )


def test_a_crash_at_exit_comes_after_the_failure_that_stopped_the_server() -> None:
    failed = (
        'E1203 09:12:42.100000 1 model_lifecycle.cc:630] "failed to load \'detector\' version 1: Invalid '
        "argument: unexpected platform type 'onnxruntime_onx'\"\n"
        "Signal (15) received.\n"
        "Segmentation fault (core dumped)\n"
    )
    found = _findings(_LOADING + failed)
    assert found[0] == (c.RUNBOOK_BACKEND_NOT_FOUND, c.IMPACT_CRITICAL)
    assert (c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL) not in found
