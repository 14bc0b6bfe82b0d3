"""`write_atomic`'s temp files after a SIGKILL (tidy37): the next write removes them, as generate's (tidy36).

Every `write_atomic` caller (the stack's state file, its configs through `write_files`, `run_triton`'s ready
file, the report's files) writes through a temp file ``.<name>.<8 random>.tmp`` holding an exclusive `flock`
until it is renamed (`files._locked_temp`, the one `StagedFiles` uses); the next write of the file removes the
temp files of it that no live process holds (`files.sweep_leftovers`). Before, these temp files had no suffix
and no lock and stayed for ever. The kills are real: the child stops with its temp file written, just before
the rename, and the test sends it SIGKILL. (The report's was already removed with the killed report's
generation folder, by the next publish: kept here as a check.)
"""

from __future__ import annotations

import fcntl
import json
import re
from pathlib import Path

import pytest
from test_generate_leftovers import kill_when_it_says

from triton_sre.files import TEMP_SUFFIX, write_atomic, write_files
from triton_sre.report.publish import publish
from triton_sre.stack.components import STATE_FILE, load_state, save_state

_KILLED_BEFORE_THE_RENAME = """
import os, sys, time
from pathlib import Path
def held(*args, **kwargs):  # the temp file is written; its mode is set next, then it is renamed
    print("written", flush=True)
    time.sleep(120)
os.chmod = held
out = Path(sys.argv[1])
exec(sys.argv[2])
"""
_WRITES = {
    "state": "from triton_sre.stack.components import save_state; save_state(out, [], {'run': 'killed'})",
    "configs": "from triton_sre.files import write_files; write_files({'a/p.yml': 'killed'}, out)",
    "report": "from triton_sre.report.publish import publish; publish(out, {'report.md': 'killed'})",
}
_TEMP = re.compile(rf"\..+\.[a-z0-9_]{{8}}{re.escape(TEMP_SUFFIX)}")


def _temps(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob(".*") if p.is_file())


def _killed_before_the_rename(out: Path, write: str) -> list[Path]:
    """Run ``write`` in a child until its temp file is written, SIGKILL it; the temp files under ``out``."""
    kill_when_it_says(_KILLED_BEFORE_THE_RENAME, "written", str(out), _WRITES[write])
    return _temps(out)


def test_the_stack_state_file_s_next_write_removes_what_a_sigkill_left(tmp_path: Path) -> None:
    save_state(tmp_path, [], {"run": "first"})
    left = _killed_before_the_rename(tmp_path, "state")
    assert len(left) == 1 and _TEMP.fullmatch(left[0].name) and left[0].name.startswith(f".{STATE_FILE}.")
    assert json.loads((tmp_path / STATE_FILE).read_text())["run"] == "first"  # the killed write never landed

    save_state(tmp_path, [], {"run": "next"})

    assert _temps(tmp_path) == []
    assert json.loads((tmp_path / STATE_FILE).read_text())["run"] == "next" and load_state(tmp_path) == []


def test_the_stack_configs_unchanged_still_lose_what_a_sigkill_left(tmp_path: Path) -> None:
    assert write_files({"a/p.yml": "kept"}, tmp_path) == [tmp_path / "a/p.yml"]
    left = _killed_before_the_rename(tmp_path, "configs")
    assert len(left) == 1 and left[0].parent == tmp_path / "a"

    assert (
        write_files({"a/p.yml": "kept"}, tmp_path) == []
    )  # nothing to write, the leftover swept all the same

    assert _temps(tmp_path) == [] and (tmp_path / "a/p.yml").read_text() == "kept"


def test_a_report_killed_while_publishing_leaves_nothing_after_the_next(tmp_path: Path) -> None:
    publish(tmp_path, {"report.md": "first"})
    assert len(_killed_before_the_rename(tmp_path, "report")) == 1
    assert (tmp_path / "report.md").read_text() == "first"

    publish(tmp_path, {"report.md": "next"})

    assert _temps(tmp_path) == [] and (tmp_path / "report.md").read_text() == "next"


@pytest.mark.parametrize("data", ["text", b"bytes"])
def test_a_temp_file_a_live_writer_holds_stays_and_its_own_temp_is_gone(
    tmp_path: Path, data: str | bytes
) -> None:
    target = tmp_path / "ready.json"
    live = tmp_path / f".ready.json.abcd1234{TEMP_SUFFIX}"
    live.write_text("half")
    with live.open("rb") as held:  # what a live writer's temp file holds (another open file: locks conflict)
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        write_atomic(target, data)
        assert _temps(tmp_path) == [live]
    write_atomic(target, data)
    assert _temps(tmp_path) == []
    assert target.read_bytes() == (data if isinstance(data, bytes) else data.encode())
