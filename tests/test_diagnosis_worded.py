"""The last resort (worded.py): a line whose own words report a failure, in a layout no rule reads."""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.report import Report
from triton_sre.diagnosis.worded import (
    FAILURE_WORDS,
    NOT_A_FAILURE,
    NOT_COUNTED,
    START_SUCCEEDED,
    WordedFailures,
)


def _report(text: str) -> Report:
    return diagnose_events(parse_text(text))


# Layouts no rule reads: the first is Scrypted's plugin log (heldout114), the others made up for the test.
UNKNOWN_LAYOUT = [
    "Scrypted Error Log:\n"
    "a OpenVINO Object Detection Plugin failed to load. View Console for more information.",
    "rocm-smi reports one card\nthe runner said: operation could not complete, device lost",
    "[plugin host] shard 2 could not be mapped into the worker",
    "Loading weights from /models/sdxl.safetensors\nmodel worker aborted unexpectedly",
]


@pytest.mark.parametrize("text", UNKNOWN_LAYOUT)
def test_a_failure_worded_in_an_unknown_layout_is_never_an_empty_answer(text: str) -> None:
    report = _report(text)
    assert len(report.findings) == 1
    finding = report.findings[0]
    # no cause class reads these words: a line to read first, not a verdict
    assert finding.severity == c.IMPACT_WARNING
    assert not report.has_failure
    quoted = [e.text for e in finding.evidence]
    assert any(FAILURE_WORDS.search(q) for q in quoted)
    assert finding.message == quoted[0]


def test_the_line_is_read_by_its_cause_class() -> None:
    report = _report("node agent: could not pull image registry.example/triton:24.05")
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_IMAGE_PULL_FAILED]
    # a class reads it, and nothing says the server came up: a start that failed, and why
    assert report.findings[0].severity == c.IMPACT_CRITICAL


def test_no_class_is_the_fallback_page_with_at_most_three_lines() -> None:
    text = "\n".join(f"stage {k}: step aborted" for k in range(6))
    (finding,) = _report(text).findings
    assert finding.runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert [e.text for e in finding.evidence] == [f"stage {k}: step aborted" for k in range(3)]


@pytest.mark.parametrize(
    "text",
    [
        # the server came up after the line: a failure it went on past
        "plugin: could not open cache file, rebuilding\n"
        "I0101 00:00:01.000000 1 server.cc:1] Started GRPCInferenceService at 0.0.0.0:8001",
        "loader: weights shard 2 failed checksum\nINFO:     Application startup complete.",
        "tokenizer download failed\n| m | 1 | READY |",
        # a level word below ERROR in the line's own layout
        "2025-05-22 17:02 [INFO] genai_perf.parser:416 - Model name 'x/y' cannot be used as a directory.",
        "WARNING deprecation.py:50 -- DeprecationWarning: `a` has been deprecated.",
        # counted zero, a condition, a recovery, a heading
        "checked 12 files, 0 errors",
        "the server exits if the model load fails",
        "CUDA provider not available, falling back to CPU",
        "Scoring timeout setting is not found. Use default timeout: 3600000 ms",
        # a sentence wrapped under a NOTE (the NGC banner's shared-memory note, heldout14's kserve-1941)
        "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be\n"
        "   insufficient for the inference server.  NVIDIA recommends the use of the following flags:",
        # a comment and a prompt are what was run, not what failed
        "# this failed last time\n$ make test-error",
        # Triton's own I and W lines: their level decides
        "I0101 00:00:01.000000 1 model.cc:1] unable to find optional file, skipped",
        "W0101 00:00:01.000000 1 metrics.cc:1] Unable to get power limit for GPU 0. Status:Success",
    ],
)
def test_no_worded_finding_where_the_words_say_nothing_failed(text: str) -> None:
    assert _report(text).findings == ()


def test_a_failure_after_the_start_is_still_read() -> None:
    text = "INFO:     Application startup complete.\nworker 2: weights shard could not be mapped"
    report = _report(text)
    (finding,) = report.findings
    assert finding.evidence[0].text == "worker 2: weights shard could not be mapped"
    assert finding.severity == c.IMPACT_WARNING  # the server came up: a line to read first
    assert not report.has_failure


def test_the_last_resort_adds_nothing_to_a_log_with_findings() -> None:
    text = (
        "E0101 00:00:01.000000 1 model_lifecycle.cc:1] failed to load 'm' version 1: Not found: unable to "
        "load shared library: libfoo.so: cannot open shared object file: No such file or directory\n"
        "plugin host: worker exited with code 3"
    )
    findings = _report(text).findings
    assert findings and all(f.runbook != c.RUNBOOK_UNKNOWN_LOAD_FAILURE or f.model for f in findings)
    assert not any(e.text.startswith("plugin host") for f in findings for e in f.evidence)


def test_a_line_under_a_failure_is_not_its_own_failure() -> None:
    (finding,) = _report("loader: shard 2 could not be mapped\n   at offset 0x10 of weights.bin").findings
    assert [e.line for e in finding.evidence] == [1]


def test_the_quoted_comments_re_read_gives_no_worded_finding() -> None:
    assert _report("# note: the start in this thread is clean; nothing fails").findings == ()


def test_a_heading_names_a_section() -> None:
    worded = WordedFailures()
    for event in parse_text("pods listed\nError Set:\nfailed {"):
        worded.note(event)
    assert worded.finding({}, {}) == ()


def test_the_vocabularies_read_what_they_say() -> None:
    assert FAILURE_WORDS.search("unknown flag: --lora-modules")
    assert FAILURE_WORDS.search("cuInit err: 999")
    assert FAILURE_WORDS.search("Illegal instructions")
    assert not FAILURE_WORDS.search("stderr: loading the model")  # 'err' only as a key (err: / err=)
    assert NOT_COUNTED.sub(" ", "trap invalid opcode ip:7f error:0 in libx.so") != ""
    assert FAILURE_WORDS.search(NOT_COUNTED.sub(" ", "trap invalid opcode ip:7f error:0 in libx.so"))
    assert NOT_A_FAILURE.search("UserWarning: TypedStorage is deprecated")
    assert not NOT_A_FAILURE.search("userwarning-free text failed")
    assert START_SUCCEEDED.search("INFO:     Uvicorn running on http://0.0.0.0:8000")
