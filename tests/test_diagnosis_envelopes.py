"""A log as a shipper stored it (one JSON record per line) reads as the plain log.

The real Triton captures (tests/data/logs/real/, recorded from the Triton 2.51 this project runs)
are wrapped the ways collectors store them: Docker's json-file driver, Fluent Bit with its
kubernetes filter, Cloud Logging's export, `journalctl -o json`, a CloudWatch export, an
Elasticsearch hit list as a JSON array. Each gives the plain capture's findings, evidence lines and
texts included, through both readers (the streaming file path and `parse_text`).
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_stream
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.envelopes import SKIP, unwrap, unwrap_csv
from triton_sre.diagnosis.logparse import parse_text

REAL = Path(__file__).parent / "data" / "logs" / "real"
CAPTURES = (
    "default-exit-false",
    "iso8601-exit-true",
    "verbose-exit-false",
    c.RUNBOOK_SHM_TOO_SMALL,  # the capture is named after its runbook
    "port-in-use-grpc",
)

Wrap = Callable[[str, int], str]
WRAPS: dict[str, Wrap] = {
    "docker-json-file": lambda line, i: json.dumps(
        {"log": line + "\n", "stream": "stderr", "time": f"2024-08-12T22:00:{i % 60:02d}.123456789Z"}
    ),
    "fluent-bit-kubernetes": lambda line, i: json.dumps(
        {
            "date": 1723500000.0 + i,
            "log": line,
            "kubernetes": {"pod_name": "triton-0", "namespace_name": "ml"},
        }
    ),
    "cloud-logging-text": lambda line, i: json.dumps(
        {"insertId": f"x{i}", "resource": {"type": "k8s_container"}, "severity": "ERROR", "textPayload": line}
    ),
    "cloud-logging-json": lambda line, i: json.dumps({"insertId": f"x{i}", "jsonPayload": {"message": line}}),
    "journald": lambda line, i: json.dumps({"__CURSOR": f"s={i}", "_PID": "1", "MESSAGE": line}),
    "cloudwatch-export": lambda line, i: json.dumps(
        {
            "logStreamName": "triton/abc",
            "timestamp": i,
            "message": line,
            "ingestionTime": i,
            "eventId": str(i),
        }
    ),
    "elastic-array": lambda line, i: (
        json.dumps({"_index": "logs", "_source": {"@timestamp": i, "log": line}}) + ","
    ),
}


def _plain(name: str) -> str:
    return (REAL / f"{name}.log").read_text()


def _wrapped(text: str, wrap: Wrap) -> str:
    return "".join(wrap(line, i) + "\n" for i, line in enumerate(text.split("\n")[:-1]))


def _summary(findings: tuple) -> list[tuple]:
    return [(f.model, f.runbook, f.severity, [(e.line, e.text) for e in f.evidence]) for f in findings]


@pytest.mark.parametrize("wrap", sorted(WRAPS))
@pytest.mark.parametrize("name", CAPTURES)
def test_a_shipped_capture_reads_as_the_plain_capture(name: str, wrap: str) -> None:
    plain = _plain(name)
    want = _summary(diagnose_events(parse_text(plain)).findings)
    assert want, name  # every capture here holds a failure
    shipped = _wrapped(plain, WRAPS[wrap])
    assert _summary(diagnose_events(parse_text(shipped)).findings) == want
    streamed = diagnose_stream(io.BytesIO(shipped.encode()), {})
    assert _summary(streamed.findings) == want


def test_a_record_holding_a_whole_traceback_is_read_line_by_line() -> None:
    """Cloud Logging keeps a multi-line write as one record: its lines still join their error line."""
    plain = (
        "E0812 22:00:07.156851 1 model_lifecycle.cc:641] failed to load 'py_model' version 1: Internal: "
        "ModuleNotFoundError: No module named 'sentencepiece'\n"
        "\n"
        "At:\n"
        "  /models/py_model/1/model.py(3): <module>\n"
    )
    shipped = json.dumps({"insertId": "a", "textPayload": plain}) + "\n"
    got = diagnose_events(parse_text(shipped)).findings
    assert _summary(got)[0][:3] == _summary(diagnose_events(parse_text(plain)).findings)[0][:3]
    assert got[0].evidence[0].line == 1


@pytest.mark.parametrize(
    "line",
    [
        # an application's own structured log (KServe's zap): its error is in another field, keep it whole
        '{"level":"error","ts":1605449512.04,"msg":"Failed to load model","error":"rpc error"}',
        '{"message":"INTERNAL: Failed to load Model","modelId":"m__ksp-1","grpcStatus":13}',
        # a backend's configuration cell, no record at all
        '{"cmdline":{"auto-complete-config":"true","backend-directory":"/opt/tritonserver/backends"}}',
        '{"log": 5}',  # not a string
        "{not json at all}",
        "[1, 2, 3]",
        '{"log":' * 20000 + '"x"' + "}" * 20000,  # nested past the JSON parser's recursion limit
    ],
)
def test_other_json_lines_stay_as_written(line: str) -> None:
    assert unwrap(line) is None


def test_a_pod_described_as_json_is_no_log_export() -> None:
    """Only a log export's keys (textPayload, log, insertId, ...) make indented key lines skippable: a pod's
    JSON (`kubectl get pod -o json`) keeps every line, so its OOMKilled container still gives a finding."""
    terminated = {"exitCode": 137, "reason": "OOMKilled"}
    pod = {"status": {"containerStatuses": [{"name": "triton", "lastState": {"terminated": terminated}}]}}
    text = json.dumps(pod, indent=2) + "\n"
    events = parse_text(text)
    assert any('"reason": "OOMKilled"' in e.message for e in events)
    assert diagnose_events(events).has_failure


@pytest.mark.parametrize(
    "line",
    ['  "log": "C:\\path\\to\\model",', '  "textPayload": "bad \\u12 escape",', '"log": "\\x41"'],
)
def test_a_text_key_that_is_not_json_stays_as_written(line: str) -> None:
    """Found by a probe: a key line whose string is no JSON string (invalid escapes) is text, not a crash."""
    events = parse_text(line + "\n")
    assert events[0].text.strip() == line.strip()


def test_random_key_lines_never_raise() -> None:
    """Quotes, backslashes, brackets and export keys in any order (seeded): a report, never an error."""
    rng = random.Random(20261202)
    pieces = [
        '"',
        "\\",
        "u",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "a",
        "0",
        "log",
        "textPayload",
        "insertId",
        "E0812 ",
    ]
    for _ in range(2000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30)))
        for prefix in ("", '  "log": ', '  "textPayload": "', '{"log": "', '  "insertId": "x",\n  '):
            diagnose_events(parse_text(prefix + line + "\n"))


@pytest.mark.parametrize(
    ("line", "want"),
    [
        # CloudWatch Logs Insights' CSV: quotes doubled, a comma inside the quoted line
        (
            '2024-07-23 19:39:35.070,"E0723 19:39:35.070 1 model_lifecycle.cc:642] ""failed to load '
            "'m' version 1: Invalid argument: a, b\"\"\"",
            [
                "E0723 19:39:35.070 1 model_lifecycle.cc:642] \"failed to load 'm' version 1: "
                'Invalid argument: a, b"'
            ],
        ),
        # Kibana/Datadog: the time quoted, more columns before the line
        ('"2024-07-23T19:39:35Z","n1","triton","error: creating server: x"', ["error: creating server: x"]),
        # unquoted
        ("2024-07-23T19:39:35Z,I0723 19:39:35.07 1 server.cc:1] up", ["I0723 19:39:35.07 1 server.cc:1] up"]),
        # the header
        ("@timestamp,@message", SKIP),
        ('"Date","Host","Service","Message"', SKIP),
        # not an export's: Python logging's milliseconds after a comma, a sentence with commas
        ("2024-07-23 19:39:35,070 - app - ERROR - Model load failed", None),
        ("The model, as configured, failed", None),
    ],
)
def test_a_csv_exports_rows_are_read_as_their_line(line: str, want: object) -> None:
    assert unwrap_csv(line) == want


def test_a_csv_export_reads_as_the_plain_log() -> None:
    plain = (
        "I0723 19:39:35.070 1 model_lifecycle.cc:461] loading: m:1\n"
        "E0723 19:39:35.070 1 model_lifecycle.cc:642] failed to load 'm' version 1: Invalid argument: "
        "unexpected inference output 'fc6_1', allowed outputs are: fc6\n"
    )
    export = "@timestamp,@message\n" + "".join(
        '2024-07-23 19:39:35.070,"' + line.replace('"', '""') + '"\n' for line in plain.splitlines()
    )
    def read(findings: tuple) -> list[tuple]:  # the header shifts every line number by one
        return [(f.model, f.runbook, [e.text for e in f.evidence]) for f in findings]

    want = read(diagnose_events(parse_text(plain)).findings)
    assert want[0][1] == c.RUNBOOK_TENSOR_NAME_MISMATCH
    assert read(diagnose_events(parse_text(export)).findings) == want
    assert read(diagnose_stream(io.BytesIO(export.encode()), {}).findings) == want
