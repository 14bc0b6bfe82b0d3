"""Every CLI ends with a message and a documented exit code, never a traceback (issue #28, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from triton_sre import conventions as c

ROOT = Path(__file__).resolve().parents[1]
LOG = next((ROOT / "tests" / "data" / "logs" / "real").rglob("*.log"))


def _run(args: list[str], stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
        check=False,
    )


def test_broken_pipe_ends_quietly(tmp_path: Path) -> None:
    # far more output than a pipe holds (64 KiB), so the writer must meet the closed pipe
    many = tmp_path / "many.log"
    many.write_text(
        "".join(
            f"E1129 17:06:12.139408 10326 model_lifecycle.cc:642] \"failed to load 'm{i}' version 1: "
            f"Invalid argument: unable to find backend library for backend 'b{i}'\"\n"
            for i in range(2000)
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    triage = subprocess.Popen(
        [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json", str(many)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert triage.stdout is not None and triage.stderr is not None
    assert triage.stdout.read(10)
    triage.stdout.close()  # the reader goes away, like `| head -c 10`
    err = triage.stderr.read().decode()
    assert triage.wait(timeout=60) == c.EXIT_BROKEN_PIPE
    assert "Traceback" not in err and "BrokenPipe" not in err, err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_full_device_gives_a_message_and_exit_2() -> None:
    with open("/dev/full", "wb") as full:
        done = _run(["triage", "--format", "json", str(LOG)], stdout=full.fileno())
    err = done.stderr.decode()
    assert done.returncode == c.EXIT_USAGE, err
    assert "No space left on device" in err and "Traceback" not in err


def test_generate_out_under_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = _run(["generate", "--out", str(blocker / "out")])
    err = done.stderr.decode()
    assert done.returncode == c.EXIT_USAGE, err
    assert "Not a directory" in err and str(blocker) in err and "Traceback" not in err
