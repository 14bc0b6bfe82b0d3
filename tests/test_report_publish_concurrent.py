"""Two reports publishing into one `--out` at the same time (two real processes): each publish
takes the folder's lock (report/publish.py), so neither removes the generation the other is writing
or has just made current. Before, a report's cleanup removed every generation but its own and the
previous one: the other report's half-written folder went, and its write failed or its `current`
named a removed folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import triton_sre.report.publish as publish_module
from triton_sre.report.publish import CURRENT, PUBLISHED, publish

ROUNDS = 30
NAMES = ("report.md", "report.html", "charts/a.png", "models.csv")
PUBLISHER = """
import sys
from pathlib import Path
from triton_sre.report.publish import publish

out, tag = Path(sys.argv[1]), sys.argv[2]
for i in range({rounds}):
    body = f"{{tag}} {{i}}\\n" * 20000  # a few hundred kB per file: a write that takes a while
    publish(out, {{name: body for name in {names!r}}})
print("published")
"""


def test_two_processes_publishing_into_one_out_both_succeed_and_one_report_stays(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = PUBLISHER.format(rounds=ROUNDS, names=NAMES)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(out), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tag in ("A", "B")
    ]
    results = [proc.communicate(timeout=300) for proc in procs]
    for proc, (stdout, stderr) in zip(procs, results, strict=True):
        assert (proc.returncode, stdout.strip()) == (0, "published"), stderr[-2000:]
    current = out / os.readlink(out / CURRENT)
    assert current.is_dir() and current.parent == out / PUBLISHED
    seen = {name: (out / name).read_bytes() for name in NAMES}
    assert len(set(seen.values())) == 1  # one report's files, whole
    assert f" {ROUNDS - 1}\n".encode() in seen["report.md"]  # the last round of one of them
    assert len([p for p in (out / PUBLISHED).iterdir()]) <= 2  # the current one and the previous one


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_publish_waiting_past_its_bound_names_the_other_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the lock: the publish waits `LOCK_WAIT_SECONDS`, then says why, and
    the folder's report is untouched."""
    out = tmp_path / "out"
    publish(out, {"report.md": "first"})
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out / PUBLISHED)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(publish_module, "LOCK_WAIT_SECONDS", 0.5)
        started = time.monotonic()
        with pytest.raises(OSError, match="another triton-sre report is publishing into it") as caught:
            publish(out, {"report.md": "second"})
        assert 0.5 <= time.monotonic() - started < 5
        assert caught.value.filename == str(out)
    finally:
        holder.kill()
        holder.wait()
    assert (out / "report.md").read_text() == "first"
    publish(out, {"report.md": "third"})  # the holder gone, its lock with it
    assert (out / "report.md").read_text() == "third"
