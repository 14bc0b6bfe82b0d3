"""What keeps two `stack up` from stepping on each other: one starting stack per workdir at a time
(an exclusive lock held while it starts and while `stack down` stops it), and the ports of a
`--port-base` checked free before anything starts.

Without the lock, a second `stack up` in the first one's render phase (before any process is
recorded in `stack.json`) saw no running stack: it rewrote the first one's configs with its own
ports and `stack.json` with its own processes, leaving the first's untracked (`stack down` never
stopped them). Without the port check, a second stack on the same `--port-base` started its
exporter, whose readiness check was answered by the first stack's exporter on that port.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

LOCK_FILE = ".stack.lock"


class WorkdirBusy(RuntimeError):
    """Another `stack up` or `stack down` (or, by its lock file's name, gameday) holds the workdir."""

    def __init__(self, message: str, holder: str) -> None:
        super().__init__(message)
        self.holder = holder  # "pid N" of the holder, or "another process"


@contextlib.contextmanager
def workdir_lock(workdir: Path, name: str = LOCK_FILE) -> Iterator[None]:
    """Hold the workdir's lock `name` (not waiting: WorkdirBusy names the holder). The lock is the
    kernel's (flock): it goes with the process, a crashed `stack up` leaves none behind."""
    path = workdir / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            holder = f"pid {pid}" if pid else "another process"
            raise WorkdirBusy(
                f"another `triton-sre stack` ({holder}) is starting or stopping the stack in {workdir}: "
                "wait for it to finish, then run `triton-sre stack status`",
                holder,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def port_base_problem(base: int, ports: Mapping[str, int]) -> str | None:
    """Why the ports of `--port-base base` cannot be used (some in use), or None."""
    busy = ports_in_use(ports)
    if not busy:
        return None
    return (
        f"--port-base {base}: in use already: {', '.join(busy)} (another stack or program listens "
        "there); choose another --port-base, or 0 for free ports"
    )


def ports_in_use(ports: Mapping[str, int], host: str = "127.0.0.1") -> list[str]:
    """`name port` of each port something already listens on (a bind that fails)."""
    busy = []
    for name, port in ports.items():
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            # as the components bind (a port in TIME_WAIT is free to them); a listener still refuses
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError:
                busy.append(f"{name} {port}")
    return busy
