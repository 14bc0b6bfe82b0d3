"""`report --out DIR` publishes its files all at once: a stop signal (Ctrl-C here, a real SIGINT
sent to the process) delivered before any one of the publish's file-system steps leaves DIR reading
the whole previous report or the whole new one. Before, the files were renamed into DIR one at a
time: a signal between two renames left the new report.md beside the old report.html."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_prometheus import serve
from test_report_answers import healthy, run

from triton_sre import conventions as c
from triton_sre.report.publish import CURRENT, PUBLISHED

STEPS = ("replace", "rename", "symlink", "link", "mkdir")  # every step that changes DIR's files
READ = ("report.md", "report.html", "models.csv", "recommendations.csv")


@pytest.fixture(scope="module")
def prometheus() -> Iterator[str]:
    httpd = serve(healthy)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _report(url: str, out: Path, end: str) -> tuple[int, str]:
    code, _out, err = run(url, out, "--end", end)
    return code, err


def _seen(out: Path) -> dict[str, bytes | None]:
    """What a reader opening DIR's files reads (None: no such file)."""
    return {
        name: (out / name).read_bytes() if (out / name).exists() else None
        for name in (*READ, *(f"charts/{p.name}" for p in (out / "charts").glob("*.png")))
    }


def _interrupted_at(monkeypatch: pytest.MonkeyPatch, step: int) -> list[int]:
    """os's file-system steps counted; SIGINT sent to this process just before the `step`-th."""
    calls = [0]
    for name in STEPS:
        real = getattr(os, name)

        def hooked(*args: object, _real=real, **kwargs: object) -> object:
            calls[0] += 1
            if calls[0] == step:
                os.kill(os.getpid(), signal.SIGINT)
            return _real(*args, **kwargs)

        monkeypatch.setattr(os, name, hooked)
    return calls


def test_a_signal_before_any_step_leaves_one_whole_report(
    prometheus: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    assert _report(prometheus, before, "1060") == (c.EXIT_OK, "")
    assert _report(prometheus, after, "1070") == (c.EXIT_OK, "")
    old, new = _seen(before), _seen(after)
    assert old["report.md"] != new["report.md"] and old["report.html"] != new["report.html"]
    step, outcomes = 0, set()
    while True:
        step += 1
        out = tmp_path / f"out{step}"
        shutil.copytree(before, out, symlinks=True)
        with monkeypatch.context() as patch:
            calls = _interrupted_at(patch, step)
            code, _err = _report(prometheus, out, "1070")
        seen = _seen(out)
        assert seen in (old, new), (step, {k: seen[k] == new.get(k) for k in seen})
        assert not [p.name for p in out.rglob(".*")], step  # no staged file or link left
        assert len(list((out / PUBLISHED).iterdir())) <= 2, step  # the current and the previous one
        outcomes.add("new" if seen == new else "old")
        if calls[0] < step:  # the run ended before the step: nothing left to interrupt
            assert code == c.EXIT_OK
            break
        assert code in (c.EXIT_INTERRUPTED, c.EXIT_OK), step  # after the last rename: published
    assert outcomes == {"old", "new"} and step > 5


def test_the_files_are_links_into_the_current_report_and_a_format_not_written_is_kept(
    prometheus: str, tmp_path: Path
) -> None:
    """`--format html` after a full report: report.html is new, report.md and the CSV files are
    the previous run's (as when files were replaced in place); every name is a link through
    `current`, which names one folder."""
    out = tmp_path / "out"
    assert _report(prometheus, out, "1060")[0] == c.EXIT_OK
    md = (out / "report.md").read_bytes()
    code, _out, err = run(prometheus, out, "--end", "1070", "--format", "html")
    assert code == c.EXIT_OK, err
    assert (out / "report.md").read_bytes() == md and b"1070" not in md
    assert os.readlink(out / "report.html") == f"{CURRENT}/report.html"
    current = out / os.readlink(out / CURRENT)
    assert current.parent == out / PUBLISHED and (current / "models.csv").is_file()


def _old_layout(made: Path, out: Path) -> None:
    """`made`'s report as an earlier triton-sre wrote it: regular files and a `charts` folder."""
    shutil.copytree(made, out, symlinks=False, ignore=shutil.ignore_patterns(PUBLISHED, CURRENT))
    assert not [p for p in out.rglob("*") if p.is_symlink()] and (out / "charts").is_dir()


def test_the_first_publish_into_an_earlier_layout_leaves_one_whole_report_at_every_step(
    prometheus: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An `--out` of regular files (a report before generations existed) is turned into links
    without a reader meeting the new report.md beside the old report.html: a SIGINT before each
    file-system step in turn leaves every file the old one's or every one the new one's. Before,
    the files were turned into links to the new report one at a time (the signal before the 24th
    step left a new recommendations.csv beside the old report.md)."""
    made, after = tmp_path / "made", tmp_path / "after"
    assert _report(prometheus, made, "1060") == (c.EXIT_OK, "")
    assert _report(prometheus, after, "1070") == (c.EXIT_OK, "")
    old, new = _seen(made), _seen(after)
    step, outcomes = 0, set()
    while True:
        step += 1
        out = tmp_path / f"out{step}"
        _old_layout(made, out)
        assert _seen(out) == old
        with monkeypatch.context() as patch:
            calls = _interrupted_at(patch, step)
            code, _err = _report(prometheus, out, "1070")
        seen = _seen(out)
        assert seen in (old, new), (step, {k: seen[k] == new.get(k) for k in seen})
        assert not [p.name for p in out.rglob(".*")], step
        outcomes.add("new" if seen == new else "old")
        if calls[0] < step:
            assert code == c.EXIT_OK
            break
        assert code in (c.EXIT_INTERRUPTED, c.EXIT_OK), step
    assert outcomes == {"old", "new"} and step > 5
    assert all(os.readlink(out / name) == f"{CURRENT}/{name}" for name in (*READ, "charts"))
    code, _out, err = run(prometheus, out, "--end", "1080")  # the converted folder publishes as any
    assert code == c.EXIT_OK, err
    assert b"00:18:00 UTC" in (out / "report.md").read_bytes()  # 1080 s: the new range's end
