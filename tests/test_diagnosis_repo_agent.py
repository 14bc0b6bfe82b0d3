"""A repository agent the model's config names (``model_repository_agents``): a library the server cannot find,
and the checksum agent refusing a file whose digest differs from the config's.

The capture is the real 2.51 server (nvidia-pytriton ships no repository agent) on a repository whose model asks
for the checksum agent (`tests/data/logs/real/repo-agent-missing.log`; the live test repeats it). The checksum
agent's own refusal is quoted from its source (checksum_repository_agent src/checksum.cc, r21.03 on) in core's
poll line, as Triton's own QA test greps it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from corpus import FIXTURES, OK_PY, build_repository, config_pbtxt

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

CAPTURE = FIXTURES / "repo-agent-missing.log"
AGENT = 'model_repository_agents { agents [ { name: "checksum" parameters [ { key: "MD5:1/model.py" value: "0" } ] } ] }\n'


def check(report: Report) -> None:
    by_model = {f.model: f for f in report.findings}
    assert set(by_model) == {"agent"}, report.findings  # `ok` loaded: no finding
    finding = by_model["agent"]
    assert finding.runbook == c.RUNBOOK_BACKEND_NOT_FOUND
    assert "for repo agent 'checksum'" in finding.evidence[0].text


def test_the_captured_log_names_the_missing_agent() -> None:
    check(diagnose_events(parse_text(CAPTURE.read_text())))


def test_the_checksum_agents_refusal_is_an_invalid_file() -> None:
    text = (
        "E0101 00:00:00.000000 1 model_repository_manager.cc:1234] Poll failed for model directory 'identity_int32':"
        " Mismatched MD5 hash for file 1/libtriton_identity.so, expect: 0a2b4c6d, got: 9f8e7d6c\n"
    )
    [finding] = diagnose_events(parse_text(text)).findings
    assert (finding.model, finding.runbook) == ("identity_int32", c.RUNBOOK_MODEL_FILE_INVALID)


def serve(tmp: Path) -> Path:
    models = {
        "agent": ({"config.pbtxt": config_pbtxt("agent") + AGENT, "1/model.py": OK_PY}, None),
        "ok": ({"config.pbtxt": config_pbtxt("ok"), "1/model.py": OK_PY}, None),
    }
    repo = build_repository(tmp / "repo", models)
    log = tmp / "triton.log"
    server = LocalTriton(repo, workdir=tmp / "triton", log_path=log, strict_readiness=False)
    with contextlib.suppress(LocalTritonError):
        server.start()
    server.stop()
    return log


@pytest.mark.triton
def test_the_real_server_cannot_find_the_agent(tmp_path: Path) -> None:
    check(diagnose_events(parse_text(serve(tmp_path).read_text())))


if __name__ == "__main__":  # regenerate the capture: python tests/test_diagnosis_repo_agent.py (from tests/)
    import datetime
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        body = serve(Path(tmp)).read_text()
    day = datetime.date.today().isoformat()
    header = (
        f"# tritonserver 2.51 (nvidia-pytriton, this machine, {day}): model 'agent' names the checksum repository"
        " agent, which the wheel does not ship; model 'ok' has none\n"
    )
    CAPTURE.write_text(header + body)
