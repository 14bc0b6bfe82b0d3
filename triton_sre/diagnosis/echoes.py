"""Pure: a server-wide line that only echoes the failure line right before it joins that line's cause.

tritonserver's main.cc reports a service it could not start as ``failed to start GRPC service: Unavailable -
Socket '<addr>:<port>' already in use `` whatever made the bind fail: server src/grpc/grpc_server.cc words
every failed ``BuildAndStart`` so (r22.05 to r26.09). When gRPC core said why on the line just before (its
SSL credentials refused, an address the host lacks: server-option-invalid), the ``already in use`` line is
that reason's echo, not a second incident: it becomes more evidence of the reason's finding. Alone, or after
gRPC's own ``Address already in use`` (the same runbook), it stays server-port-in-use.

Alone, the same words cannot tell a taken port from an address the host does not have (libevhtp, HTTP and
metrics, prints no reason of its own; Triton 2.51 measured with ``--http-address=192.0.2.1``): where the
quoted socket names a specific address (not a wildcard, not loopback), the fix says so (`bind_note`).
"""

from __future__ import annotations

import dataclasses
import re

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import Obs
from triton_sre.diagnosis.report import Finding
from triton_sre.diagnosis.server_rules import TRITON_BIND_REFUSAL

__all__ = ["bind_note", "fold_echoes"]

_SOCKET = re.compile(r"\bSocket '\[?(?P<host>[^'\n\]]*?)\]?:(?P<port>\d+)' already in use")
_ANY_OR_LOOPBACK = re.compile(r"(?:0\.0\.0\.0|::|127\.\d+\.\d+\.\d+|::1|localhost|)\Z", re.I)
_ECHO = re.compile(r"\bfailed to start [\w ]{1,20} service: [^\n]*" + TRITON_BIND_REFUSAL)


def fold_echoes(orphans: list[Obs]) -> list[Obs]:
    """``orphans`` (model-less causes) with each ``already in use`` echo given the cause of the orphan on
    the event right before it, where that cause is another runbook."""
    if not any(o.runbook == c.RUNBOOK_SERVER_PORT_IN_USE for o in orphans):
        return orphans
    by_index = {o.index: o for o in orphans}
    out = []
    for obs in orphans:
        before = by_index.get(obs.index - 1)
        if (
            obs.runbook == c.RUNBOOK_SERVER_PORT_IN_USE
            and before is not None
            and before.runbook not in (None, c.RUNBOOK_SERVER_PORT_IN_USE)
            and _ECHO.search(obs.reason)
        ):
            obs = dataclasses.replace(obs, runbook=before.runbook)
        out.append(obs)
    return out


def bind_note(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """Each server-wide server-port-in-use finding quoting a specific address: its fix says that the address
    itself may be the fault."""
    out = []
    for f in found:
        m = next((m for e in f.evidence if (m := _SOCKET.search(e.text))), None)
        if f.runbook == c.RUNBOOK_SERVER_PORT_IN_USE and f.model is None and m and not _ANY_OR_LOOPBACK.match(
            m["host"]
        ):
            note = (
                f"Triton says 'already in use' whatever made the bind fail: if no process holds port "
                f"{m['port']}, the address {m['host']} is not one of this host's (check --http-address, "
                "--grpc-address, --metrics-address). Otherwise:"
            )
            f = dataclasses.replace(f, remediation=f"{note} {f.remediation}".strip())
        out.append(f)
    return tuple(out)
