"""Round 29 of issue 20 (2026-12-03): a native backtrace whose message the paste lost is a failure;
a relaying logger is also learned from Triton's tables.

TensorRT-LLM's ``TllmException`` (``cpp/tensorrt_llm/common/tllmException.cpp``) appends the frames
``backtrace()`` took to its message, one per line as ``"%-3d %*p %s + %zd"`` (frame number, the address
padded to 18 columns, the demangled symbol and offset) or, where ``dladdr`` finds no symbol, with
``backtrace_symbols``' ``/path/lib.so(+0x..) [0x..]``. Users often paste only the frames: the log then
holds a failure (never "No load failure found.") whose cause is not in the excerpt, and the symbols
say what code ran, not why it failed.

A logger that relays Triton's output (a NIM's ``ERROR <time> nimutils.py:68] ``) carries Triton's startup
tables too; a paste often starts at the model table. A whole table border (``+----+----+``) or a row of
the model table (``| m | 1 | READY |``) behind a prefix with a level word is Triton's own line as much as
a glog line (or TensorFlow's, which the TensorFlow backend prints) is: the prefix is learned there,
so the table's rows are read as rows and a healthy table is no failure. The LLM backends' own loggers
reach Triton's stdout too (TensorRT-LLM's ``[TensorRT-LLM][INFO]``, vLLM's ``INFO 01-31 22:08:42
llm_engine.py:649]``): a NIM relays them before Triton's first line, and they teach the prefix as well.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.severity import is_failure_line, only_frames

RELAY = "ERROR 2025-04-24 22:49:44.266 nimutils.py:68] "
TABLE = [
    "+--------+---------+------------------------------------------------------------+",
    "| Model  | Version | Status                                                     |",
    "+--------+---------+------------------------------------------------------------+",
    "| detect | 1       | READY                                                      |",
    "| embed  | 1       | UNAVAILABLE: Invalid argument: model input 'x' is not used |",
    "+--------+---------+------------------------------------------------------------+",
]

# Frames as TensorRT-LLM 0.9 prints them (shape of NVIDIA/TensorRT-LLM issue threads; addresses made up).
FRAMES = [
    "1       0x7f3a2c45f693 /usr/local/lib/python3.10/dist-packages/tensorrt_llm/libs/libnvinfer_plugin_tensorrt_llm.so.9(+0x198693) [0x7f3a2c45f693]",
    "2       0x7f3a2c42d049 tensorrt_llm::plugins::GemmPlugin::init() + 41",
    "3       0x7f3a2c42db9a tensorrt_llm::plugins::GemmPlugin::GemmPlugin(void const*, unsigned long, std::shared_ptr<tensorrt_llm::plugins::CublasLtGemmPluginProfiler> const&) + 298",
    "4       0x7f3a0c6f1506 /usr/local/tensorrt/lib/libnvinfer.so.9(+0x10d8506) [0x7f3a0c6f1506]",
]


def test_frames_alone_give_a_failure_that_quotes_the_first_frame() -> None:
    report = diagnose_events(parse_text("\n".join(FRAMES) + "\n"))
    assert report.has_failure
    [finding] = report.findings
    assert finding.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE  # the symbols are no cause
    assert finding.evidence[0].line == 1 and finding.evidence[0].text == FRAMES[0]


def test_frames_after_the_startup_lines_are_found_too() -> None:
    text = "\n".join(
        [
            "I0606 10:00:00.000000 1 model_lifecycle.cc:473] loading: tensorrt_llm:1",
            "I0606 10:00:01.000000 1 libtensorrtllm.cc:55] TRITONBACKEND_Initialize: tensorrtllm",
            *FRAMES,
        ]
    )
    report = diagnose_events(parse_text(text + "\n"))
    assert report.has_failure
    assert report.findings[0].evidence[0].text == FRAMES[0]


def test_the_message_above_the_frames_still_decides() -> None:
    error = "[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(ptr, n): out of memory (/src/tensorrt_llm/runtime/tllmBuffers.h:68)"
    report = diagnose_events(parse_text("\n".join([error, *FRAMES]) + "\n"))
    assert report.findings[0].runbook == c.RUNBOOK_GPU_OUT_OF_MEMORY
    assert "out of memory" in report.findings[0].evidence[0].text


def test_only_frames_reads_whole_lines_of_frames() -> None:
    assert only_frames("\n".join(FRAMES))
    assert only_frames("\n".join([FRAMES[1], "", FRAMES[2]]) + "\n")
    assert not only_frames("\n".join(["terminate called after throwing an instance of 'x'", *FRAMES]))
    # An address in a sentence is no frame (core's pinned-memory line, a tensor's pointer).
    assert not only_frames("1 0x7f0c44000000 is the pinned memory pool")
    assert not only_frames("Pinned memory pool is created at '0x7f0c44000000' with size 268435456")


def test_a_healthy_line_with_an_address_is_no_failure() -> None:
    text = "\n".join(
        [
            "I0712 08:36:20.719380 1 pinned_memory_manager.cc:240] Pinned memory pool is created at '0x7f0c44000000' with size 268435456",
            "I0712 08:36:22.000000 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001",
        ]
    )
    assert not diagnose_events(parse_text(text + "\n")).has_failure


def test_a_relayed_table_is_read_as_triton_s_table() -> None:
    report = diagnose_events(parse_text("\n".join(RELAY + line for line in TABLE) + "\n"))
    assert [(f.model, f.severity) for f in report.findings] == [("embed", c.IMPACT_CRITICAL)]
    assert report.findings[0].evidence[0].line == 5


def test_a_relayed_healthy_table_is_no_failure() -> None:
    healthy = [line for line in TABLE if "UNAVAILABLE" not in line]
    report = diagnose_events(parse_text("\n".join(RELAY + line for line in healthy) + "\n"))
    assert not report.findings


def test_a_border_is_learned_only_behind_a_level_word() -> None:
    # docker compose's column has no level: its lines are read as before, the prefix peeled by its own rule.
    compose = "\n".join("triton-1  | " + line for line in TABLE)
    assert [f.model for f in diagnose_events(parse_text(compose + "\n")).findings] == ["embed"]
    # A program's own ERROR line with a lone rule of dashes is still that program's error.
    own = RELAY + "+--- download failed: 403 Forbidden"
    assert diagnose_events(parse_text(own + "\n")).has_failure


def test_a_relay_is_learned_from_the_llm_backends_own_loggers() -> None:
    lines = [
        "[TensorRT-LLM][INFO] Initializing MPI with thread mode 3",
        "[TensorRT-LLM][INFO] MPI size: 1, rank: 0",
        "INFO 01-31 22:08:42 llm_engine.py:649] Avg prompt throughput: 85.9 tokens/s",
        "INFO 01-31 22:08:43 [llm_engine.py:650] Avg generation throughput: 12.0 tokens/s",
        *[line for line in TABLE if "UNAVAILABLE" not in line],
    ]
    relayed = "\n".join(RELAY + line for line in lines) + "\n"
    assert not diagnose_events(parse_text(relayed)).findings
    events = list(parse_text(relayed))
    assert events[0].message.startswith("[TensorRT-LLM][INFO] Initializing MPI")  # the line before, peeled


def test_a_logger_quoting_its_own_line_is_no_relay() -> None:
    # TensorRT-LLM's exception text quoted in its own error line: one message, read whole.
    line = "[TensorRT-LLM][ERROR] Encountered an error in forward function: [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaEventSynchronize(get()): an illegal memory access was encountered (/app/tensorrt_llm/cpp/include/tensorrt_llm/runtime/cudaEvent.h:66)"
    [event] = list(parse_text(line + "\n"))
    assert event.message.startswith("[TensorRT-LLM][ERROR] Encountered an error in forward function: ")
    assert diagnose_events(parse_text(line + "\n")).has_failure


def test_a_relay_is_learned_from_a_model_table_row_and_from_tensorflow_s_lines() -> None:
    rows = [RELAY + TABLE[4], RELAY + TABLE[3]]  # an excerpt of the rows only, the failing one first
    findings = diagnose_events(parse_text("\n".join(rows) + "\n")).findings
    assert [(f.model, f.evidence[0].line) for f in findings] == [("embed", 1)]
    tf = [
        RELAY
        + "2020-12-27 13:44:04.778005: I tensorflow/cc/saved_model/loader.cc:201] Running initialization op on SavedModel bundle",
        RELAY
        + "2020-12-27 13:44:04.990000: I tensorflow/cc/saved_model/loader.cc:311] SavedModel load for tags { serve }; Status: success.",
    ]
    assert not diagnose_events(parse_text("\n".join(tf) + "\n")).findings


def test_core_s_load_failure_behind_another_logger_s_info_is_a_failure() -> None:
    # One line of a relayed paste: no line of Triton's own teaches the prefix, but core prints this
    # wording (a reason after the model) at E only, so the relay's INFO does not hide it.
    for prefix in (
        "INFO 2025-04-24 22:49:44.266 nimutils.py:68] ",
        "2025-04-24 22:49:44,266 - tritonserver - INFO - ",
    ):
        line = prefix + "failed to load 'resnet_model': config file not found"
        findings = diagnose_events(parse_text(line + "\n")).findings
        assert [(f.runbook, f.severity) for f in findings] == [
            (c.RUNBOOK_MODEL_FILE_MISSING, c.IMPACT_CRITICAL)
        ]
    # Core's closing line at I (no reason after it) stays what it is: a consequence, told by the E line.
    closing = "I0424 22:49:44.266000 98 model_lifecycle.cc:789] failed to load 'resnet_model'"
    assert not is_failure_line(closing, "I")


def test_triton_s_crash_report_behind_a_relay_is_a_crash() -> None:
    # ErrorSignalHandler's line (src/triton_signal.cc) relayed from stderr at INFO.
    for prefix in (
        "",
        "INFO 2025-04-24 22:49:44.266 nimutils.py:68] ",
        "2025-04-24 22:49:44,266 - tritonserver - INFO - ",
    ):
        findings = diagnose_events(parse_text(prefix + "Signal (11) received.\n")).findings
        assert [f.severity for f in findings] == [c.IMPACT_CRITICAL], prefix
    # Signal 15 is the exit handler's normal stop; a word glued before it is no report of the handler.
    assert not diagnose_events(
        parse_text("INFO 2025-04-24 22:49:44.266 nimutils.py:68] Signal (15) received.\n")
    ).findings
    assert not diagnose_events(parse_text("mySignal (11) received.\n")).has_failure


def test_a_stub_s_traceback_relayed_at_info_is_read_as_printed() -> None:
    # A Python wrapper relaying Triton's stderr at INFO: the traceback teaches the prefix, and a client's
    # relayed server error reads as it does unprefixed (no cause known), not as a Python model's error.
    traceback = [
        "Traceback (most recent call last):",
        '  File "grpc_client.py", line 182, in main',
        "    results = triton_client.infer(model_name=model_name, inputs=inputs, outputs=outputs)",
        "tritonclient.utils.InferenceServerException: [StatusCode.UNAVAILABLE] Socket closed",
    ]
    plain = diagnose_events(parse_text("\n".join(traceback) + "\n")).findings
    relayed_text = "\n".join(
        f"2025-04-24 22:49:4{i},266 - tritonserver - INFO - {line}" for i, line in enumerate(traceback)
    )
    relayed = diagnose_events(parse_text(relayed_text + "\n")).findings
    assert [f.runbook for f in relayed] == [f.runbook for f in plain] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]


def test_a_program_s_own_traceback_at_error_keeps_its_level() -> None:
    # logger.exception(): the program's own error, its ERROR line stays the evidence.
    lines = [
        "2023-10-26T03:33:10+0000 [ERROR] [api_server:svcsvc:14] Application startup failed. Exiting.",
        "2023-10-26T03:33:10+0000 [ERROR] [api_server:svcsvc:16] Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.8/dist-packages/bentoml/triton.py", line 178, in _set_handle',
        "TypeError: Can't instantiate abstract class TritonRunnerHandle with abstract methods async_stream_method",
    ]
    [finding] = diagnose_events(parse_text("\n".join(lines) + "\n")).findings
    assert finding.evidence[0].text == "[ERROR] [api_server:svcsvc:14] Application startup failed. Exiting."


def test_triton_s_failure_wordings_behind_a_prefix_are_failures() -> None:
    for prefix in ("INFO 2025-04-24 22:49:44.266 nimutils.py:68] ", "12:"):
        for line in (
            "UNAVAILABLE: Internal: unable to load plan file to auto complete config.",
            " 2# abort in /usr/lib/x86_64-linux-gnu/libc.so.6",
        ):
            assert diagnose_events(parse_text(prefix + line + "\n")).has_failure, (prefix, line)
    # A model unloaded on purpose is no failure.
    assert not is_failure_line(
        "INFO 2025-04-24 22:49:44.266 nimutils.py:68] | m | 1 | UNAVAILABLE: unloaded |"
    )


def test_the_server_s_refusals_on_stderr_behind_a_relay_are_failures() -> None:
    prefix = "INFO 2025-04-24 22:49:44.266 nimutils.py:68] "
    for line in (
        "tritonserver: unrecognized option '--t_exit_on_error=True'",
        "Fatal Python error: _PyInterpreterState_GET: the function must be called with the GIL held",
    ):
        assert diagnose_events(parse_text(prefix + line + "\n")).has_failure, line
