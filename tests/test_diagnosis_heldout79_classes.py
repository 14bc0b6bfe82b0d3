"""heldout79's empty answer fixed by class from python_backend's source (src/pb_stub.cc, r21.08 on): the
stub's health loop finds its parent gone (``kill(parent_pid, 0)`` fails) and logs ``Non-graceful
termination detected.`` at INFO before it exits. Alone, that is the server process dying under its stubs
(server-crashed); after a failure the server exited on, the stubs only saw it go (the real 2.51 capture in
tests/data/logs/real shows them after a gRPC front end that could not start)."""

from __future__ import annotations

from pathlib import Path

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

REAL = Path(__file__).parent / "data" / "logs" / "real" / "diag31-grpc-ssl-mutual-root-missing.log"


def _findings(text: str) -> list[tuple[str, str]]:
    return [(f.runbook, f.severity) for f in diagnose_events(parse_text(text)).findings]


def test_the_stubs_finding_the_server_gone_is_a_crash() -> None:
    log = "".join(
        f"I0426 08:24:34.06{i}022 {pid} pb_stub.cc:1551]  Non-graceful termination detected.\n"
        for i, pid in enumerate((766, 2026, 1816))
    )
    assert _findings(log) == [(c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)]
    quoted = 'I0426 08:24:34.068022 766 pb_stub.cc:2145] "Non-graceful termination detected. "\n'
    assert _findings(quoted) == [(c.RUNBOOK_SERVER_CRASHED, c.IMPACT_CRITICAL)]


def test_after_the_failure_the_server_exited_on_the_stubs_add_nothing() -> None:
    text = REAL.read_text()
    assert "Non-graceful termination detected" in text
    assert [runbook for runbook, _ in _findings(text)] == [c.RUNBOOK_SERVER_OPTION_INVALID]


def test_a_load_requests_config_that_core_refuses_is_the_config() -> None:
    """Core's load API with a "config" parameter (model_repository_manager.cc, r22.10 on: "Invalid config
    override: <JsonToModelConfig's reason>"): the JSON is no ModelConfig, whatever field the reason names."""
    line = (
        "E0906 09:39:02.018562 1 model_repository_manager.cc:1004] Poll failed for model directory 'bq': "
        'Invalid config override: (parameters[0].value): invalid value "EXECUTION_ENV_PATH" for type '
        "TYPE_MESSAGE\n"
    )
    assert _findings(line)[:1] == [(c.RUNBOOK_CONFIG_PARSE_ERROR, c.IMPACT_CRITICAL)]


def test_the_stubs_line_reads_the_same_whatever_carries_it() -> None:
    """One rule for the line, not for its level: after a failure the server exited on it adds nothing, alone
    it is the crash, also pasted bare under an I line (before, that path read it as a second, server-crashed,
    finding)."""
    failure = "E0906 09:39:02.018562 1 main.cc:245] failed to start GRPC service: Unavailable - Socket "
    failure += "'0.0.0.0:8001' already in use\n"
    stopping = "I0906 09:39:02.100000 1 server.cc:307] Waiting for in-flight requests to complete.\n"
    bare = "Non-graceful termination detected.\n"
    for between in ("", stopping):
        found = [runbook for runbook, _ in _findings(failure + between + bare)]
        assert found == [c.RUNBOOK_SERVER_PORT_IN_USE]
        assert [runbook for runbook, _ in _findings(between + bare)] == [c.RUNBOOK_SERVER_CRASHED]
