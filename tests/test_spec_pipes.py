"""`--spec` from a pipe (tidy36): ``--spec /dev/stdin`` fed by a pipe, ``--spec <(cat slos.yaml)``, a named
FIFO. The spec is read once, under the same size limit and with the same YAML loader, and a command that
reads it again (lint, report, stack up's summary) gets the same bytes; what is not a spec (a folder, a
device such as /dev/zero) is still refused, at once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from triton_sre import inputs
from triton_sre.demo import SAMPLE_REPOSITORY
from triton_sre.inputs import MAX_SPEC_BYTES, read_once, unpiped
from triton_sre.slo import SpecError, load_spec

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "slos.yaml"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "triton_sre", *args],
        input=stdin,
        capture_output=True,
        env=ENV,
        timeout=300,
        check=False,
    )


def _tree(root: Path, name: bytes) -> dict[str, bytes]:
    """Each file, the spec's file name its header and the SLO dashboard give (``stdin`` when piped) made the
    file's."""
    named = re.compile(rb"\b(from|in) " + re.escape(name))
    own = rb"\1 " + SPEC.name.encode()
    return {str(p.relative_to(root)): named.sub(own, p.read_bytes()) for p in root.rglob("*") if p.is_file()}


def test_generate_reads_the_spec_from_standard_input(tmp_path: Path) -> None:
    out = str(tmp_path / "piped")
    piped = _cli("generate", "--spec", "/dev/stdin", "--out", out, stdin=SPEC.read_bytes())
    assert piped.returncode == 0, piped.stderr
    assert _cli("generate", "--spec", str(SPEC), "--out", str(tmp_path / "file")).returncode == 0
    assert _tree(tmp_path / "piped", b"stdin") == _tree(tmp_path / "file", b"slos.yaml")
    assert _tree(tmp_path / "piped", b"stdin") != _tree(tmp_path / "piped", b"nothing")


def test_lint_reads_a_piped_spec_twice_and_gets_it_twice() -> None:
    """lint reads the spec for its latency thresholds and again for the startup-probe budget."""
    lint = ("lint", str(SAMPLE_REPOSITORY), "--format", "json", "--spec")
    from_file = _cli(*lint, str(SPEC))
    piped = _cli(*lint, "/dev/stdin", stdin=SPEC.read_bytes())
    assert piped.returncode == from_file.returncode in (0, 1), piped.stderr
    assert piped.stderr == from_file.stderr == b""
    assert piped.stdout == from_file.stdout


def test_a_pipe_is_read_once_and_its_bytes_given_again() -> None:
    read, write = os.pipe()
    os.write(write, SPEC.read_bytes())  # (fits in the pipe's buffer)
    os.close(write)
    path = f"/dev/fd/{read}"
    try:
        assert read_once(path, MAX_SPEC_BYTES) == SPEC.read_bytes()
        assert read_once(path, MAX_SPEC_BYTES) == SPEC.read_bytes()  # the pipe itself is empty by now
        assert load_spec(path).slos == load_spec(SPEC).slos
    finally:
        os.close(read)


def test_a_named_fifo_waits_for_its_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "slos.fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        time.sleep(0.3)
        with fifo.open("wb") as f:
            f.write(SPEC.read_bytes()[:10])
            f.flush()
            time.sleep(0.2)
            f.write(SPEC.read_bytes()[10:])

    thread = threading.Thread(target=writer)
    thread.start()
    spec = load_spec(fifo)
    thread.join()
    assert spec.slos == load_spec(SPEC).slos
    copy = unpiped(fifo, tmp_path, MAX_SPEC_BYTES)
    assert copy != fifo and copy.read_bytes() == SPEC.read_bytes()
    assert unpiped(SPEC, tmp_path, MAX_SPEC_BYTES) == SPEC


def test_a_named_fifo_nobody_writes_to_is_refused_after_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "slos.fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(inputs, "PIPE_WAIT_S", 0.3)
    start = time.monotonic()
    with pytest.raises(SpecError, match=r"FIFO \(named pipe\) whose writer did not finish within 0\.3 s"):
        load_spec(fifo)
    assert time.monotonic() - start < 5


def test_a_pipe_over_the_limit_is_refused() -> None:
    big = b"# " + b"x" * MAX_SPEC_BYTES + b"\nslos: []\n"
    done = _cli("generate", "--check", "--spec", "/dev/stdin", stdin=big)
    assert done.returncode == 2
    assert f"cannot read: larger than {MAX_SPEC_BYTES} bytes".encode() in done.stderr


@pytest.mark.parametrize(("path", "kind"), [("/dev/zero", "a character device"), ("/tmp", "a directory")])
def test_what_is_not_a_spec_is_still_refused_at_once(path: str, kind: str) -> None:
    start = time.monotonic()
    done = _cli("generate", "--check", "--spec", path)
    assert done.returncode == 2
    assert f"{path}: cannot read: {kind}, not a regular file".encode() in done.stderr
    assert time.monotonic() - start < 60
