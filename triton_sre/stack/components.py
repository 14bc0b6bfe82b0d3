"""The components a `stack up` started, as its state file (``<workdir>/stack.json``) records them:
each process with its start time (so a recycled pid is never signalled), `stack status` read from
the file, and `stack down` stopping them, last started first. `stack.local` starts them; this module
starts nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from triton_sre.files import write_atomic
from triton_sre.stack.processes import process_group_members
from triton_sre.stack.statefile import read_state, signallable

STATE_FILE = "stack.json"


@dataclass
class Component:
    name: str
    pid: int
    start_time: int  # /proc/<pid>/stat field 22: identifies this process, not a recycled pid
    url: str
    log: str
    argv: list[str]
    extra: dict[str, Any] = field(default_factory=dict)

    def alive(self) -> bool:
        return process_start_time(self.pid) == self.start_time

    def group_alive(self) -> list[int]:
        """Live members of the component's process group (the group id is the leader's pid)."""
        if self.alive() or _group_is_ours(self):
            return process_group_members(self.pid)
        return []


def process_start_time(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def _group_is_ours(comp: Component) -> bool:
    """Leader gone: the group is still ours if a member was started after the leader."""
    members = process_group_members(comp.pid)
    # a live process with the leader's pid is someone else's (a recycled pid leading its own group)
    return (
        bool(members)
        and comp.pid not in members
        and all((process_start_time(p) or 0) >= comp.start_time for p in members)
    )


# ------------------------------------------------------------------------------------- state
def state_path(workdir: Path) -> Path:
    return workdir / STATE_FILE


def load_state(workdir: Path) -> list[Component]:
    """The recorded components (StateFileError when the file is not what save_state writes)."""
    raw = read_state(state_path(workdir))
    return [Component(**item) for item in raw.get("components", [])] if raw else []


def save_state(workdir: Path, components: list[Component], info: Mapping[str, Any]) -> None:
    state = {"components": [asdict(x) for x in components], **info}
    write_atomic(state_path(workdir), json.dumps(state, indent=2))


def status(workdir: Path) -> dict[str, Any]:
    raw = read_state(state_path(workdir))
    if raw is None:
        return {"workdir": str(workdir), "running": False, "components": []}
    components = [Component(**item) for item in raw.get("components", [])]
    rows = [
        {"name": x.name, "pid": x.pid, "url": x.url, "alive": x.alive(), "log": x.log, **x.extra}
        for x in components
    ]
    return {
        **{k: v for k, v in raw.items() if k != "components"},
        "workdir": str(workdir),
        "running": bool(rows) and all(r["alive"] for r in rows),
        "components": rows,
    }


# ------------------------------------------------------------------------------------- stop
def stop_component(comp: Component, timeout: float = 15.0) -> None:
    """SIGTERM the component's process group, wait, then SIGKILL what is left."""
    if not signallable(comp.pid) or not comp.group_alive():  # killpg(0) is the caller's own group
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(comp.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while comp.group_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if comp.group_alive():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(comp.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while comp.group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)


def stop_with_server(comp: Component) -> None:
    """stop_component, then Triton's own pid (a separate group under run_triton, recorded as the
    component's server_pid and server_start_time) if it outlived its runner."""
    stop_component(comp)
    server_pid = comp.extra.get("server_pid")
    server_start = comp.extra.get("server_start_time")
    if signallable(server_pid) and isinstance(server_start, int):
        stop_component(Component(comp.name, server_pid, int(server_start), comp.url, comp.log, []))


def down(workdir: Path, say: Callable[[str], None]) -> list[str]:
    """Stop every component the state file names, last started first. Returns those running."""
    running = []
    for comp in reversed(load_state(workdir)):
        # a recycled pid (its start time differs) is another process's: named, never signalled
        alive = bool(comp.group_alive())
        other = ", its pid is another process's" if process_start_time(comp.pid) is not None else ""
        say(
            f"stopping {comp.name} (pid {comp.pid})"
            if alive
            else f"{comp.name} (pid {comp.pid}) was not running{other}"
        )
        running += [comp.name] * alive
        stop_with_server(comp)
    state_path(workdir).unlink(missing_ok=True)
    return running[::-1]
