"""Round 28 of issue 20 (2026-12-03): hostile shapes, and what heldout40/41 taught.

- Hostile shapes (bench/bench_triage_hostile.py measures them): a hard-wrapped paste is rejoined only up
  to the length the scanner keeps of one line; a template's quoted value stops at its closing quote; a
  default instance name is resolved by one lookup. The tests here pin the behaviour, not the speed.
- heldout40's misses by class: a logger that relays Triton's output at its own level (a NIM's
  ``ERROR ... nimutils.py:68] I0424 ...``) is peeled; another program's ``ERROR:`` line is no part of the
  ``I`` line before it; a version folder named -1 (the path's 2^64 - 1) is the folder's fault; a backend
  that cannot find the file in the version folder names a missing model file.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from collections.abc import Callable

import accuracy
import pytest
from test_diagnosis_formats import _body, _evidence

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.inventory import template_regex
from triton_sre.diagnosis.lineshape import MAX_LINE_CHARS
from triton_sre.diagnosis.logparse import parse_text


def test_a_rejoined_hard_wrapped_line_is_cut_where_a_long_line_is() -> None:
    head = (
        "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm' version 1: Internal: " + "x" * 32
    )
    assert len(head) == 120
    rest = ["y" * 120] * 2000  # 240,000 characters of one line, hard-wrapped at 120
    after = "I1203 10:00:01.000000 1 server.cc:1] next"
    events = list(parse_text("\n".join([head, *rest, "z", after]) + "\n"))
    assert len(events) == 2
    assert len(events[0].message) == MAX_LINE_CHARS  # as much as the scanner keeps of one line
    assert events[0].message.startswith("failed to load 'm'") and events[0].message.endswith("y")
    assert events[1].message == "next"


def test_a_quoted_template_value_stops_at_its_closing_quote() -> None:
    pattern = template_regex("failed to load '<model>', no version is available")
    line = "failed to load 'a' " * 50 + "failed to load 'b', no version is available"
    m = pattern.search(line)
    assert m is not None and m.group(0) == "failed to load 'b', no version is available"
    assert pattern.search("failed to load 'a' and 'b', no version is available") is None


def test_a_line_repeating_a_templates_start_still_finds_the_cause_after_it() -> None:
    line = (
        "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm' version 1: "
        + "model 'x' " * 2000
        + "no version is available"
    )
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.model for f in findings] == ["m"]
    text = "E1203 10:00:00.000000 1 model_lifecycle.cc:626] failed to load 'm', no version is available"
    findings = diagnose_events(parse_text(("model '" * 3000) + "\n" + text + "\n")).findings
    assert [f.runbook for f in findings] == [c.RUNBOOK_VERSION_DIR_INVALID]


RELAY = "ERROR 2025-04-24 22:49:{s:02d}.266 nimutils.py:68] "
RELAYED_START = [
    RELAY.format(s=44)
    + "tritonserver: /usr/local/lib/libcurl.so.4: no version information available (required by tritonserver)",
    RELAY.format(s=44)
    + "I0424 22:49:44.265292 98 cache_manager.cc:480] \"Create CacheManager with cache_dir: '/opt/tritonserver/caches'\"",
    RELAY.format(s=45)
    + 'I0424 22:49:45.433448 98 model_config_utils.cc:753] "Server side auto-completed config: "',
    RELAY.format(s=45) + 'name: "yolox"',
    RELAY.format(s=45) + 'platform: "tensorrt_plan"',
    RELAY.format(s=46) + "I0424 22:49:46.433448 98 server.cc:676] ",
]


def test_a_logger_relaying_tritons_lines_at_error_is_no_failure() -> None:
    report = diagnose_events(parse_text("\n".join(RELAYED_START) + "\n"))
    assert not report.findings
    assert not report.has_failure
    events = list(parse_text("\n".join(RELAYED_START) + "\n"))
    assert [e.level for e in events] == ["", "I", "I", "I"]
    assert events[0].message.startswith("tritonserver: ")  # the line before the first relayed one, peeled
    assert events[2].message.endswith('name: "yolox"\nplatform: "tensorrt_plan"')


def test_a_relayed_triton_error_is_still_read() -> None:
    failed = (
        RELAY.format(s=47)
        + "E0424 22:49:47.000000 98 model_lifecycle.cc:626] failed to load 'yolox' version 1: Not found: unable to load shared library: libnvinfer_plugin.so.10: cannot open shared object file: No such file or directory"
    )
    findings = diagnose_events(parse_text("\n".join([*RELAYED_START, failed]) + "\n")).findings
    assert [(f.model, f.severity) for f in findings] == [("yolox", c.IMPACT_CRITICAL)]


def test_an_error_level_prefix_before_no_triton_line_still_counts() -> None:
    # Without a Triton line behind it, the prefix is the program's own: its ERROR stands.
    findings = diagnose_events(
        parse_text(RELAY.format(s=44) + "Model download failed: 403 Forbidden\n")
    ).findings
    assert findings and findings[0].severity == c.IMPACT_CRITICAL


@pytest.mark.parametrize("word", ["ERROR", "FATAL", "CRITICAL"])
def test_another_programs_error_line_is_not_the_info_line_before_it(word: str) -> None:
    text = "\n".join(
        [
            "I1101 13:15:54.841537 103 http_server.cc:180] Started Metrics Service at 0.0.0.0:8002",
            "  > Triton server is ready...",
            f"{word}: illegal value '' specified for bool flag 'asr_service'",
            "One of the processes has exited unexpectedly. Stopping container.",
        ]
    )
    findings = diagnose_events(parse_text(text + "\n")).findings
    assert [(f.runbook, f.evidence[0].line) for f in findings] == [(c.RUNBOOK_UNKNOWN_LOAD_FAILURE, 3)]


def test_an_info_lines_own_multiline_message_keeps_its_lines() -> None:
    text = 'I1101 13:15:54.000000 1 model_config_utils.cc:753] Server side auto-completed config: \nname: "m"\nERRORS: 0\n'
    events = list(parse_text(text))
    assert len(events) == 1 and events[0].message.endswith("ERRORS: 0")


@pytest.mark.parametrize(
    ("cell", "runbook"),
    [
        (
            "unable to find '/models/m/18446744073709551615/model.txt' for model 'm'",
            c.RUNBOOK_VERSION_DIR_INVALID,
        ),
        (
            "unable to find '/models/m/18446744073709551615/model.onnx' for model instance 'm_0'",
            c.RUNBOOK_VERSION_DIR_INVALID,
        ),
        ("unable to find '/models/m/3/model.so' for model 'm'", c.RUNBOOK_MODEL_FILE_MISSING),
    ],
    ids=["minus-one-ibmz", "minus-one-backend-common", "file-in-version-folder"],
)
def test_a_file_missing_from_a_version_folder(cell: str, runbook: str) -> None:
    row = f"| m     | 1       | UNAVAILABLE: Unavailable: {cell} |"
    assert first_runbook(row) == runbook


def first_runbook(text: str) -> str:
    findings = diagnose_events(parse_text(text + "\n")).findings
    assert findings
    return findings[0].runbook


@pytest.mark.parametrize("level", ["ERROR", "INFO"])
def test_the_real_captures_read_the_same_behind_a_relaying_logger(level: str) -> None:
    """Every real capture (glog, ISO8601, verbose, quoted; libprotobuf lines before any log line) with a
    NIM-style relay's prefix on every line gives the plain capture's findings, evidence lines included.
    Not the client's output (``model-control-*``: a script's traceback), which no relay of the server carries."""
    for path in sorted((accuracy.LOGS / "real").glob("*.log")):
        if path.name.startswith("model-control-"):
            continue
        body = _body(path.read_text())
        relayed = "".join(
            f"{level} 2025-04-24 22:49:44.266 nimutils.py:68] {line}\n" for line in body.splitlines()
        )
        plain = diagnose_events(parse_text(body)).findings
        assert _evidence(diagnose_events(parse_text(relayed)).findings) == _evidence(plain), path.name


@pytest.mark.parametrize(
    "shape",
    [
        lambda i, line: f"{i + 1}:{line}",  # grep -n
        lambda i, line: f"triton-7d9f8-abcde triton {line}",  # stern
        lambda i, line: f"> {line}",  # a quoted reply
    ],
    ids=["grep-n", "stern", "quoted"],
)
def test_a_relayed_start_behind_another_prefix_is_no_failure(shape: Callable[[int, str], str]) -> None:
    # The relay is learned on the second line; the first is read again past both prefixes.
    text = "".join(shape(i, line) + "\n" for i, line in enumerate(RELAYED_START))
    report = diagnose_events(parse_text(text))
    assert not report.findings and not report.has_failure
