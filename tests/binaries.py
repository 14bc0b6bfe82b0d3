"""Tools from Debian the tests run for real: a missing one fails the test, it is never skipped; `stop`
ends a process a test started."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def binary(name: str) -> str:
    """The path of `name`, or a test failure saying how to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: scripts/setup.sh installs it", pytrace=False)
    return path


def stop(proc: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM `proc` and wait for it; SIGKILL it when it has not exited within `timeout` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
