"""tritonserver refusing its own command line (server src/main.cc, src/command_line_parser.cc): it
prints the usage, then `Bad option: "--flag".` and the parser's reason, and exits 1 before any model
loads. Such a log read "No load failure found.": it is `server-option-invalid`, a server-wide failure
quoting the flag and why (`tests/test_diagnosis_option_invalid.py` has the other start-up settings).

`tests/data/logs/real/bad-option-backend-config.log` is the real 2.51 server's output for
`--backend-config tensorflow`; the live test makes the refusal again for several flags.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

CAPTURE = FIXTURES / "bad-option-backend-config.log"
# flag and value -> the parser's reason, as 2.51 prints it
REFUSALS = {
    ("--backend-config", "tensorflow"): "--backend-config option format is",
    ("--exit-on-error", "maybe"): "invalid value for bool option: maybe",
    ("--model-control-mode", "bogus"): "invalid argument for --model-control-mode",
    ("--http-port", "99999999999"): "Provided option value is out of bound",
}


def refusal(report: Report, flag: str, reason: str) -> None:
    assert len(report.findings) == 1, report.findings
    finding = report.findings[0]
    assert (finding.model, finding.runbook, finding.severity) == (
        None,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        c.IMPACT_CRITICAL,
    )
    assert finding.evidence[0].text.startswith(f'Bad option: "{flag}". ')
    assert reason in finding.evidence[0].text  # the parser's reason is quoted


def test_the_committed_refusal_is_a_server_failure_quoting_the_reason() -> None:
    text = CAPTURE.read_text()
    assert text.splitlines()[1] == "Usage: tritonserver [options]" and len(text.splitlines()) > 300
    refusal(diagnose_events(parse_text(text)), "--backend-config", "--backend-config option format is")


@pytest.mark.parametrize(
    "prefix", ["", "triton-1  | ", "2026-12-03T17:18:01.263509Z "], ids=["plain", "compose", "kubectl-ts"]
)
def test_the_refusal_behind_a_collector_prefix(prefix: str) -> None:
    lines = CAPTURE.read_text().splitlines()
    text = "\n".join(prefix + line for line in lines) + "\n"
    refusal(diagnose_events(parse_text(text)), "--backend-config", "option format is")


def test_build_options_refusal_and_a_healthy_usage_print() -> None:
    built = "Failed to build Triton option:\nunable to set cache config: unknown cache 'redis'\n"
    report = diagnose_events(parse_text(built))
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_SERVER_OPTION_INVALID]
    assert report.findings[0].evidence[0].text == "Failed to build Triton option: " + built.split("\n")[1]
    # `tritonserver --help` prints the same usage and exits 0: no failure
    lines = CAPTURE.read_text().splitlines()
    usage_only = "\n".join(lines[: next(i for i, x in enumerate(lines) if x.startswith("Bad option"))]) + "\n"
    assert not diagnose_events(parse_text(usage_only)).findings


@pytest.mark.triton
@pytest.mark.parametrize(("flag", "value"), list(REFUSALS), ids=[f for f, _ in REFUSALS])
def test_the_real_server_refusing_a_flag(tmp_path: Path, flag: str, value: str) -> None:
    repo = build_repository(
        tmp_path / "repo", {"ok": ({"config.pbtxt": config_pbtxt("ok"), "1/model.py": OK_PY}, None)}
    )
    log = tmp_path / "triton.log"
    server = LocalTriton(
        repo, workdir=tmp_path / "triton", log_path=log, startup_timeout=60, extra_args=[flag, value]
    )
    with contextlib.suppress(LocalTritonError):
        server.start()
    server.stop()
    assert server.returncode not in (0, None), log.read_text()[-500:]
    refusal(diagnose_events(parse_text(log.read_text())), flag, REFUSALS[(flag, value)])
