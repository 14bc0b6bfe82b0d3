"""Pure: a server-wide line that only echoes the failure line right before it joins that line's cause.

tritonserver's main.cc reports a service it could not start as ``failed to start GRPC service: Unavailable -
Socket '<addr>:<port>' already in use `` whatever made the bind fail: server src/grpc/grpc_server.cc words
every failed ``BuildAndStart`` so (r22.05 to r26.09). When gRPC core said why on the line just before (its
SSL credentials refused, an address the host lacks: server-option-invalid), the ``already in use`` line is
that reason's echo, not a second incident: it becomes more evidence of the reason's finding. Alone, or after
gRPC's own ``Address already in use`` (the same runbook), it stays server-port-in-use.
"""

from __future__ import annotations

import dataclasses
import re

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import Obs

__all__ = ["fold_echoes"]

_ECHO = re.compile(r"\bfailed to start [\w ]{1,20} service: [^\n]*\b(?:Socket|Port) '[^'\n]*' already in use")


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
