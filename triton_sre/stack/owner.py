"""A stack that belongs to the command that started it (`gameday`, `demo`), unlike `stack up`'s.

`stack up` leaves its components running on purpose; a gameday's or demo's stack is its own and must
not outlive it, even when the gameday is killed with SIGKILL (no `finally` runs then). Three things
see to it:

- the state file records the owner (pid and start time, so a recycled pid never passes for it);
- a watchdog (``python -m triton_sre.stack.owner``, in its own session so a signal to the owner's
  process group spares it) polls the owner and, once it is gone, stops what the state file names
  (`components.down`: every component started since, restarts included) and exits;
- the workdir is listed in ``~/.cache/triton-sre/owned/``, so `stack status` and `stack down` in
  any workdir find a stack whose owner is gone (if the watchdog was killed too) and name or stop it.

Components started from the owner's main thread also get a parent-death signal (SIGTERM: each
stops cleanly, run_triton stopping tritonserver) as soon as the owner dies.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from triton_sre.stack.components import down, load_state, process_start_time, state_path
from triton_sre.stack.statefile import StateFileError, read_state, signallable

OWNER_KEY = "owner"  # the state file's key: {"pid", "start_time", "command"}
REGISTRY = Path.home() / ".cache" / "triton-sre" / "owned"
WATCH_INTERVAL = 0.5  # seconds between two looks at the owner


def this_process(command: str) -> dict[str, Any]:
    """The owner entry for the calling process."""
    return {"pid": os.getpid(), "start_time": process_start_time(os.getpid()), "command": command}


def owner_gone(raw: dict[str, Any] | None) -> bool:
    """True when the state names an owner and that process (pid and start time) no longer runs."""
    owner = (raw or {}).get(OWNER_KEY)
    if not isinstance(owner, dict):
        return False
    pid, start = owner.get("pid"), owner.get("start_time")
    return not signallable(pid) or process_start_time(int(pid)) != start


def owner_running(workdir: Path) -> str | None:
    """Why `stack down` leaves the stack in workdir alone: its owner runs (it stops the stack when it
    ends, its watchdog if it is killed); None when there is no owner or it is gone."""
    try:
        raw = read_state(state_path(workdir))
    except StateFileError:
        return None  # `down` names what is wrong with the file
    owner = (raw or {}).get(OWNER_KEY)
    if not isinstance(owner, dict) or owner_gone(raw):
        return None
    command, pid = owner.get("command", "its owner"), owner.get("pid")
    return (
        f"the stack in {workdir} belongs to a running {command} (pid {pid}), which stops it when it "
        f"ends: end the {command} instead (Ctrl-C, or `kill {pid}`; its watchdog stops the stack even "
        "after a SIGKILL)"
    )


def _entry(workdir: Path) -> Path:
    return REGISTRY / (hashlib.sha256(str(workdir).encode()).hexdigest()[:16] + ".json")


def register(workdir: Path) -> None:
    """List the workdir as an owned stack's (a read-only home: the watchdog alone covers it)."""
    with contextlib.suppress(OSError):
        REGISTRY.mkdir(parents=True, exist_ok=True)
        _entry(workdir).write_text(json.dumps({"workdir": str(workdir)}), encoding="utf-8")


def unregister(workdir: Path) -> None:
    with contextlib.suppress(OSError):
        _entry(workdir).unlink(missing_ok=True)


def orphaned(exclude: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """The listed stacks whose owner is gone, with their state; entries whose stack is gone are dropped.
    A state file that cannot be read is skipped here (`stack status --workdir` on it says why)."""
    found = []
    for entry in sorted(REGISTRY.glob("*.json")) if REGISTRY.is_dir() else []:
        try:
            workdir = Path(json.loads(entry.read_text(encoding="utf-8"))["workdir"])
            raw = read_state(state_path(workdir))
        except (OSError, ValueError, KeyError, TypeError, StateFileError):
            continue
        if raw is None:
            entry.unlink(missing_ok=True)
        elif workdir != exclude and owner_gone(raw):
            found.append((workdir, raw))
    return found


def stop_orphaned(workdir: Path, say: Callable[[str], None]) -> list[str]:
    """Stop a stack whose owner is gone (nothing when its owner runs); the components that ran."""
    try:
        raw = read_state(state_path(workdir))
    except StateFileError:
        return []
    if not owner_gone(raw):
        return []
    running = down(workdir, say)
    unregister(workdir)
    return running


def start_watchdog(workdir: Path, owner: dict[str, Any], log: Path) -> int:
    """Start the watchdog of `owner`'s stack in workdir; returns its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "triton_sre.stack.owner", f"--workdir={workdir}",
             f"--owner-pid={owner['pid']}", f"--owner-start-time={owner['start_time']}"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    return proc.pid


def watch(workdir: Path, pid: int, start_time: int, interval: float = WATCH_INTERVAL) -> list[str]:
    """Wait until the owner is gone, then stop the stack in workdir (if its owner did not)."""
    while process_start_time(pid) == start_time:
        time.sleep(interval)
    try:
        if not load_state(workdir):
            unregister(workdir)
            return []
    except StateFileError:
        return []

    def say(text: str) -> None:
        print(f"triton-sre stack watchdog: {text}", flush=True)

    say(f"the owner (pid {pid}) is gone: stopping its stack in {workdir}")
    return stop_orphaned(workdir, say)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m triton_sre.stack.owner")
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--owner-pid", type=int, required=True)
    parser.add_argument("--owner-start-time", type=int, required=True)
    args = parser.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGHUP):  # a terminal's Ctrl-C or hang-up is the owner's to handle
        signal.signal(sig, signal.SIG_IGN)
    watch(args.workdir, args.owner_pid, args.owner_start_time)
    return 0


if __name__ == "__main__":
    sys.exit(main())
