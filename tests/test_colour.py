"""Colour on a terminal only, and never when NO_COLOR is set or TERM=dumb (https://no-color.org).

The commands run in a subprocess whose stdout is a pseudo-terminal, as a user's shell gives them."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.ttyprogress import colour_on

ROOT = Path(__file__).resolve().parent.parent
REAL_LOGS = ROOT / "tests" / "data" / "logs" / "real"
ESC = b"\x1b["


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _on_a_terminal(args: list[str], **env: str) -> bytes:
    """stdout of `triton-sre ARGS` written to a pseudo-terminal; stderr and stdin are not terminals."""
    environ = {k: v for k, v in os.environ.items() if k not in (c.ENV_NO_COLOR, c.ENV_TERM)}
    environ.update(env, PYTHONPATH=str(ROOT))
    leader, follower = pty.openpty()
    code = "import sys; from triton_sre.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environ,
        cwd=ROOT.anchor,  # not the checkout: PYTHONPATH says which tree runs
    )
    os.close(follower)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(leader)
        proc.wait(timeout=60)
    return out


def test_colour_on_needs_a_terminal_and_no_opt_out() -> None:
    assert colour_on(_Tty(), {})
    assert colour_on(_Tty(), {c.ENV_NO_COLOR: ""})  # set but empty: not an opt-out (no-color.org)
    assert colour_on(_Tty(), {c.ENV_TERM: "xterm-256color"})
    assert not colour_on(_Tty(), {c.ENV_NO_COLOR: "1"})
    assert not colour_on(_Tty(), {c.ENV_TERM: c.TERM_DUMB})
    assert not colour_on(io.StringIO(), {})


@pytest.fixture(scope="module")
def failing_log() -> Path:
    logs = sorted(REAL_LOGS.glob("*.log"))
    assert logs
    return logs[0]


OPT_OUTS = [({}, True), ({c.ENV_NO_COLOR: "1"}, False), ({c.ENV_TERM: c.TERM_DUMB}, False)]


@pytest.mark.parametrize(("env", "coloured"), OPT_OUTS)
def test_triage_on_a_terminal_honours_no_color(
    failing_log: Path, env: dict[str, str], coloured: bool
) -> None:
    out = _on_a_terminal(["triage", str(failing_log)], **env)
    assert b"runbook" in out.lower()  # the findings were written
    assert (ESC in out) is coloured


@pytest.mark.parametrize(("env", "coloured"), [({}, True), ({c.ENV_NO_COLOR: "yes"}, False)])
def test_lint_on_a_terminal_honours_no_color(tmp_path: Path, env: dict[str, str], coloured: bool) -> None:
    model = tmp_path / "models" / "bad"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text('name: "bad" backend: "python"\n')  # no model.py: lint fails
    out = _on_a_terminal(["lint", str(tmp_path / "models"), "--target", "cpu"], **env)
    assert b"bad" in out
    assert (ESC in out) is coloured


def test_the_progress_line_writes_no_escape_code_and_clears_what_it_wrote() -> None:
    """A `TERM=dumb` terminal shows escape codes as text: the line is padded and cleared with spaces."""
    from triton_sre.ttyprogress import Progress

    out = _Tty()
    progress = Progress(out)
    progress.show("triage: 1,200 MB read (400 MB/s)", force=True)
    progress.show("triage: 9 MB", force=True)
    progress.finish()
    text = out.getvalue()
    assert "\x1b" not in text
    frames = text.split("\r")[1:]
    assert frames[0] == "triage: 1,200 MB read (400 MB/s)"
    assert frames[1] == "triage: 9 MB".ljust(len(frames[0]))  # nothing of the longer line is left
    assert frames[2] == " " * len(frames[0]) and frames[3] == ""  # cleared, cursor at the line's start
