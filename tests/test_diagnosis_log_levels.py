"""Every warning- and error-level wording of Triton's sources keeps its class in a real healthy log (diag34).

``triton_sre/diagnosis/level_inventory.yaml`` lists what core, the frontends and the backends write at
WARNING or ERROR level (read from the sources, r23.06-r25.12), each with its class. Each example is put, as
the glog line its source writes, into a real healthy 2.51 log (``tests/data/logs/real/normal-operation.log``,
captured by ``python tests/normal_operation_capture.py tests/data/logs/real``: two Python models, bad
requests over HTTP and gRPC, a cancelled stream, an unload and a reload, SIGTERM) at three places: while
the models load, while the server serves, while it stops. Issue 20: a healthy log gives no error finding
for a harmless warning or a serving line, and never an empty answer for a failure.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.classes import cause_class
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.frames import classify
from triton_sre.diagnosis.gpu_context import GPU_EXPECTED
from triton_sre.diagnosis.inventory import template_regex
from triton_sre.diagnosis.level_inventory import (
    CLASSES,
    ENTRIES,
    LevelEntry,
    LevelInventoryError,
    is_serving_line,
    parse_level_inventory,
)
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.render import to_text
from triton_sre.diagnosis.signals import is_harmless

REAL = Path(__file__).parent / "data" / "logs" / "real"
HEALTHY = (REAL / "normal-operation.log").read_text()
VERBOSE = (REAL / "normal-operation-verbose.log").read_text()
PLACES = {
    "load": 'python_be.cc:2249] "TRITONBACKEND_ModelInstanceInitialize: stream_0',
    "serve": "Started Metrics Service",
    "stop": "All models are stopped, unloading models",
}
TESTED = [e for e in ENTRIES if e.kind != "relay"]
CPU_HOST_CUDA = re.compile(r"driver version is insufficient|CudaDriverHelper has not been initialized")
PREFIX = {"tensorrt-llm": "[TensorRT-LLM][ERROR] "}
"""What a logger other than Triton's writes before an error-level message (common/logger.h)."""


def glog(entry: LevelEntry) -> str:
    """The example as its source writes it: glog's level letter, its source file, the message quoted (or
    TensorRT-LLM's logger's own line, common/logger.h: ``[TensorRT-LLM][WARNING] <message>``)."""
    if entry.logger == "tensorrt-llm":
        return f"[TensorRT-LLM][{entry.level.upper()}] {entry.example}\n"
    letter = "W" if entry.level == "warning" else "E"
    message = (entry.example or "").replace("\\", "\\\\").replace('"', '\\"')
    return f'{letter}1207 02:58:08.400000 20714 {Path(entry.source).name}:321] "{message}"\n'


def healthy_with(line: str, place: str) -> str:
    """The healthy log with the line at `place`. A line naming a GPU-only backend (TensorRT-LLM's
    ``libtensorrtllm.cc``) is written on a host whose CUDA works: the capture's CPU-host CUDA lines (the
    driver "insufficient" warning, ``CudaDriverHelper has not been initialized``) are left out, or the
    engine rightly reads the backend on a driverless host as the driver's fault (gpu_context.py)."""
    lines = HEALTHY.splitlines(keepends=True)
    if GPU_EXPECTED.search(line):
        lines = [text for text in lines if not CPU_HOST_CUDA.search(text)]
    at = next(i for i, text in enumerate(lines) if PLACES[place] in text) + 1
    return "".join([*lines[:at], line, *lines[at:]])


def test_the_captures_are_healthy_and_hold_what_they_were_made_for() -> None:
    for text in (HEALTHY, VERBOSE):
        report = diagnose_events(parse_text(text))
        assert report.findings == ()
        assert all(marker in text for marker in PLACES.values())
    # --log-verbose=1 shows the bad requests (2.51 writes them at INFO, not ERROR) and the client's cancel
    assert VERBOSE.count("Infer failed: ") >= 7
    assert "Issuing cancellation for" in VERBOSE
    assert not re.search(r"^E\d{4} .*(Infer failed|cancel)", VERBOSE, re.M)


def test_the_warnings_the_real_server_wrote_are_harmless_entries() -> None:
    written = re.findall(r'^W\d{4} [\d:.]+ \d+ \S+\] "(.*)"$', VERBOSE, re.M)
    assert written
    for message in written:
        kinds = {
            e.kind for e in TESTED if e.level == "warning" and template_regex(e.template).search(message)
        }
        assert kinds == {"harmless"}, message


def test_the_inventory_counts() -> None:
    kinds = {kind: sum(e.kind == kind for e in ENTRIES) for kind in CLASSES}
    assert kinds["serving"] > 150 and kinds["harmless"] > 50 and kinds["failure"] > 30
    assert len({e.component for e in ENTRIES}) == 14
    assert all(e.level == "warning" for e in ENTRIES if e.kind in ("harmless", "not-served"))


@pytest.mark.parametrize("entry", TESTED, ids=lambda e: e.id)
def test_each_example_is_its_template(entry: LevelEntry) -> None:
    assert entry.example is not None
    assert template_regex(entry.template).search(entry.example), entry.example


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("entry", TESTED, ids=lambda e: e.id)
def test_each_wording_keeps_its_class_in_a_healthy_log(entry: LevelEntry, place: str) -> None:
    report = diagnose_events(parse_text(healthy_with(glog(entry), place)))
    severities = [f.severity for f in report.findings]
    if entry.kind == "harmless":
        assert not report.has_failure and c.IMPACT_CRITICAL not in severities
    elif entry.kind == "serving":  # (a few were known before as harmless on every CPU host: signals.HARMLESS)
        assert report.findings == ()
        assert report.serving_lines == 1 or (report.serving_lines == 0 and is_harmless(entry.example or ""))
    elif entry.kind == "not-served":
        assert report.findings[0].runbook == entry.runbook
    else:  # failure: never an empty answer; critical unless the status table after it shows every model READY
        assert report.findings
        assert report.has_failure or place == "load"
        if entry.runbook is not None:
            assert report.findings[0].runbook == entry.runbook


def test_a_wording_decides_before_the_rules_exactly_where_its_own_words_read_as_a_cause() -> None:
    for entry in ENTRIES:
        # (the line as written: a logger's own prefix is read by the rules too)
        words = PREFIX.get(entry.logger or "", "") + re.sub(r"<[^<>]*>", " ", entry.template)
        if entry.kind == "serving" and (classify(words) or cause_class(words)) is not None:
            assert entry.wording_decides, entry.id
        if entry.kind == "harmless" and entry.wording_decides:  # (flagged only where the rules read a cause)
            assert (classify(words) or cause_class(words)) is not None, entry.id
    assert all(e.kind in ("serving", "harmless") for e in ENTRIES if e.wording_decides)


def test_the_error_a_serving_line_carries_still_names_its_cause() -> None:
    # python_backend python_be.cc's LOG_IF_ERROR wording, carrying the stub's report of a model whose import
    # failed (pb_stub.cc "Failed to process the request(s) for model ...").
    line = (
        'E1207 02:58:12.000000 20714 python_be.cc:1404] "Failed to send the error response.: Internal - '
        "Failed to process the request(s) for model 'echo_0', message: "
        "ModuleNotFoundError: No module named 'cv2'\"\n"
    )
    assert is_serving_line(line)
    report = diagnose_events(parse_text(healthy_with(line, "serve")))
    assert report.findings[0].runbook == c.RUNBOOK_PYTHON_MODULE_MISSING


def test_a_folded_serving_line_of_another_logger_is_counted_and_the_failure_after_it_read() -> None:
    # TensorRT-LLM's own logger writes raw lines, which the parser folds under Triton's I line before them;
    # the serving one is counted, the CUDA failure after it keeps its cause and its own line number.
    lines = (
        "[TensorRT-LLM][ERROR] Missing stats\n"
        "[TensorRT-LLM][ERROR] CUDA runtime error in cudaMalloc(ptr, n): out of memory "
        "(/src/tensorrt_llm/runtime/tllmBuffers.h:74)\n"
    )
    text = healthy_with(lines, "serve")
    report = diagnose_events(parse_text(text))
    assert report.serving_lines == 1
    assert report.findings[0].runbook == c.RUNBOOK_GPU_OUT_OF_MEMORY
    assert text.splitlines()[report.findings[0].evidence[0].line - 1].startswith("[TensorRT-LLM][ERROR] CUDA")


STARTUP = [e for e in TESTED if e.logger == "tensorrt-llm" and e.kind in ("harmless", "serving")]
"""What TensorRT-LLM's own logger writes on a healthy start (its runtime's and the backend's parameter
defaults, engine config fallbacks, KV cache sizing, plugin notices), each wording once."""


def start_up_log(block: str, place: str) -> str:
    """The block in the healthy log (folded under the I line before it), or pasted alone (one raw block)."""
    return block if place == "paste" else healthy_with(block, place)


@pytest.mark.parametrize("place", ["load", "serve", "paste"])
def test_a_healthy_tensorrt_llm_start_up_all_at_once_gives_no_error_finding(place: str) -> None:
    block = "".join(glog(e) for e in STARTUP)
    assert len(STARTUP) > 50 and block.count("[TensorRT-LLM][WARNING] ") > 45
    report = diagnose_events(parse_text(start_up_log(block, place)))
    assert not report.has_failure
    assert c.IMPACT_CRITICAL not in [f.severity for f in report.findings]
    assert report.serving_lines == sum(e.kind == "serving" for e in STARTUP)


@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        # gptAttentionCommon.cpp's plugin length check in the wording of the later stored versions
        (
            "[TensorRT-LLM][ERROR] Assertion failed: Expected length (1136) != real length (1140). This is "
            "often caused by using different TensorRT-LLM version to build engine and run engine. "
            "(/workspace/tensorrt_llm/cpp/tensorrt_llm/plugins/gptAttentionCommon/gptAttentionCommon.cpp:404)",
            c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        ),
        # trtGptModelInflightBatching.cpp's std::runtime_error, quoted by the backend's load failure
        (
            "E1207 02:58:08.500000 20714 model_lifecycle.cc:642] \"failed to load 'tensorrt_llm' version 1: "
            "Internal: unexpected error when creating modelInstanceState: Attention window too large to fit "
            "even a single sequence in the KV cache. Failing fast rather than attempting an adjustment of "
            'the window sizes. Old: [131072], New: [70912]"',
            c.RUNBOOK_LLM_BACKEND_CONFIG,
        ),
    ],
)
@pytest.mark.parametrize("place", ["load", "paste"])
def test_a_failure_after_the_healthy_start_up_warnings_keeps_its_page(
    line: str, runbook: str, place: str
) -> None:
    block = "".join(glog(e) for e in STARTUP) + line + "\n"
    text = start_up_log(block, place)
    report = diagnose_events(parse_text(text))
    assert report.findings[0].runbook == runbook
    assert text.splitlines()[report.findings[0].evidence[0].line - 1] == line


def test_a_serving_line_is_counted_and_said() -> None:
    entry = next(e for e in ENTRIES if e.id == "server-e-failed-stop-http-service")
    report = diagnose_events(parse_text(healthy_with(glog(entry), "stop")))
    assert report.serving_lines == 1
    assert "1 error line(s) Triton writes while it serves or stops" in to_text(report)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (("class: serving", "class: maybe"), "class 'maybe'"),
        (("level: error", "level: fatal"), "level 'fatal'"),
        (("releases: [r23.06, r25.12]", "releases: [r25.12, r23.06]"), "releases"),
        (("class: serving", "class: relay"), "a relay has no example"),
    ],
)
def test_a_malformed_entry_is_refused_by_name(change: tuple[str, str], words: str) -> None:
    text = (
        "schema: 1\nentries:\n- id: x-1\n  component: core\n  level: error\n  source: src/a.cc\n"
        "  releases: [r23.06, r25.12]\n  class: serving\n  template: 'failed <v>'\n  example: 'failed x'\n"
        "  why: because\n"
    )
    assert parse_level_inventory(text)[0].id == "x-1"
    with pytest.raises(LevelInventoryError, match=re.escape(words)) as raised:
        parse_level_inventory(text.replace(*change))
    assert "x-1" in str(raised.value)


@pytest.mark.server
def test_the_real_server_under_bad_requests_a_cancel_an_unload_and_a_stop_gives_no_finding(
    tmp_path: Path,
) -> None:
    from normal_operation_capture import capture

    text = capture(tmp_path, verbose=1).read_text()
    assert diagnose_events(parse_text(text)).findings == ()
    assert "Infer failed: " in text and "Issuing cancellation for" in text
    assert "successfully unloaded 'echo'" in text
