"""The server's flags handed to an image without the server: its entrypoint's ``exec "$@"`` refuses the first
flag, in bash's words (``exec: --: invalid option``: the builtin reads ``--x`` as options) or dash's (``exec:
--x: not found``). The whole log is that one line; it is the server's command line that is wrong
(server-option-invalid), while a command that is not a flag and not found stays the fallback."""

from __future__ import annotations

import pytest

from triton_sre.conventions import RUNBOOK_SERVER_OPTION_INVALID, RUNBOOK_UNKNOWN_LOAD_FAILURE
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        (
            "/opt/tritonserver/nvidia_entrypoint.sh: line 93: exec: --: invalid option",
            RUNBOOK_SERVER_OPTION_INVALID,
        ),
        (
            "/opt/nvidia/nvidia_entrypoint.sh: line 67: exec: -m: invalid option",
            RUNBOOK_SERVER_OPTION_INVALID,
        ),
        (
            "/opt/nvidia/nvidia_entrypoint.sh: 67: exec: --model-repository=/models: not found",
            RUNBOOK_SERVER_OPTION_INVALID,
        ),
        (
            "/opt/nvidia/nvidia_entrypoint.sh: line 67: exec: tritonserverr: not found",
            RUNBOOK_UNKNOWN_LOAD_FAILURE,
        ),
    ],
)
def test_the_entrypoints_exec_of_a_flag(line: str, runbook: str) -> None:
    findings = diagnose_events(parse_text(line + "\n")).findings
    assert [f.runbook for f in findings] == [runbook]
    assert findings[0].evidence[0].text == line
