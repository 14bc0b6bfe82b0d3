"""Processes and ports on this host: free ports, a process group's members, the shared memory they
map, and a child that dies with its parent (Linux ``/proc`` and ``prctl``)."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["death_signal_hook", "free_port", "free_ports", "mapped_shm", "process_group_members"]

SHM_PREFIX = "triton_python_backend_shm_region_"
"""The name prefix of the Python backend's shared-memory regions in /dev/shm."""
_PR_SET_PDEATHSIG = 1


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports that are free on ``host`` right now.

    All sockets stay bound until every port is picked, so the ports are distinct.
    """
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    return free_ports(1, host)[0]


def process_group_members(pgid: int) -> list[int]:
    """Pids (Linux ``/proc``) whose process group is ``pgid``, zombies left out."""
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return sorted(members)


def mapped_shm(pids: Sequence[int]) -> set[Path]:
    """Python backend shared-memory regions mapped by ``pids``."""
    found: set[Path] = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue
        for line in maps.splitlines():
            parts = line.split(maxsplit=5)
            path = parts[5] if len(parts) == 6 else ""
            if path.startswith(f"/dev/shm/{SHM_PREFIX}"):
                found.add(Path(path.removesuffix(" (deleted)")))
    return found


def death_signal_hook(sig: int = signal.SIGKILL) -> Callable[[], None] | None:
    """A preexec hook making the child get `sig` (SIGKILL: die) if this process dies without cleaning up.

    Linux sends the signal when the *thread* that forked exits, so it is only armed from the main
    thread; atexit covers every normal exit.
    """
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died between the fork and the prctl
            os.kill(os.getpid(), int(sig))

    return hook
