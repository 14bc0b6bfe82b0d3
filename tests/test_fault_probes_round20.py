"""Fault probes, round twenty (branch `probes20`, 2026-12-07): the file system at the edges, numbers at the
edges, the environment, and round nineteen's leftover (names `/etc/hosts` maps to loopback) — the probes
listed in docs/failure-behaviour.md, "Fault probes, round twenty". Each test of a fix failed before it."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from test_fault_probes_round18 import ROOT, _cli

from triton_sre import conventions as c
from triton_sre.files import stale_files


# -- a generated file that is not a regular file ---------------------------------------------------------
@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    done = _cli("generate", "--spec", str(ROOT / "slos.yaml"), "--out", str(out), timeout=180)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_endless_device_in_a_generated_files_place_is_stale_not_waited_on(
    generated: Path, tmp_path: Path, kind: str
) -> None:
    """Before: `generate --check` and `generate` opened `alerts/triton-alerts.yaml` to compare it; a FIFO
    there held the open until a writer came (both still waiting after 20 s, killed), and a link to
    /dev/zero would be read for ever. Now such a file is stale: `--check` names it, a write replaces it."""
    out = tmp_path / "out"
    shutil.copytree(generated, out)
    odd = out / "alerts" / "triton-alerts.yaml"
    odd.unlink()
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to("/dev/zero")
    spec = str(ROOT / "slos.yaml")
    check = _cli("generate", "--spec", spec, "--out", str(out), "--check", timeout=60)
    assert check.returncode == 1, check.stderr
    assert check.stderr.count("triton-alerts.yaml") == 1, check.stderr
    assert "tests/triton-alerts.test.yaml" not in check.stderr  # only the odd one is stale
    write = _cli("generate", "--spec", spec, "--out", str(out), timeout=60)
    assert write.returncode == 0, write.stderr
    assert stat.S_ISREG(odd.lstat().st_mode)
    assert odd.read_text() == (generated / "alerts" / "triton-alerts.yaml").read_text()
    assert _cli("generate", "--spec", spec, "--out", str(out), "--check", timeout=60).returncode == 0


@pytest.mark.timeout(30)  # before the fix it waited for a writer for ever
def test_the_stacks_config_writer_counts_a_fifo_as_stale_without_waiting(tmp_path: Path) -> None:
    """`stack up` writes its configs with `files.write_files`, which reads the files in place through
    `stale_files`: a FIFO there held it as it held `generate --check`."""
    os.mkfifo(tmp_path / "prometheus.yml")
    (tmp_path / "alertmanager.yml").write_text("same\n")
    files = {"prometheus.yml": "x\n", "alertmanager.yml": "same\n"}
    assert stale_files(files, tmp_path) == ["prometheus.yml"]


# -- help and version to an output that fails ----------------------------------------------------------
def _to(path: str, *argv: str) -> subprocess.CompletedProcess[str]:
    with open(path, "w") as target:
        return subprocess.run(
            [sys.executable, "-m", "triton_sre", *argv],
            stdout=target,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )


@pytest.mark.parametrize(
    ("argv", "prog"),
    [(["--help"], "triton-sre"), (["--version"], "triton-sre"), (["triage", "--help"], "triton-sre triage"),
     (["rollout", "check", "--help"], "triton-sre rollout check")],
)  # fmt: skip
def test_help_or_version_to_a_full_disk_is_an_output_error_not_success(argv: list[str], prog: str) -> None:
    """Before: argparse drops a write that fails, so `triton-sre --help > /dev/full` exited 0 with nothing
    shown and nothing said (`ls --help > /dev/full`: `write error`, exit 2). Now as any other output."""
    done = _to("/dev/full", *argv)
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert done.stderr.strip() == f"{prog}: cannot write (standard output): No space left on device"


def test_help_to_a_reader_that_closed_the_pipe_is_141_and_silent() -> None:
    """Before: exit 0, as if the help had been read."""
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as pipe:
        done = subprocess.run(
            [sys.executable, "-m", "triton_sre", "--help"],
            stdout=pipe,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    assert (done.returncode, done.stderr) == (c.EXIT_BROKEN_PIPE, "")


def test_help_to_a_working_stdout_is_unchanged(tmp_path: Path) -> None:
    done = _to(str(tmp_path / "help.txt"), "triage", "--help")
    assert (done.returncode, done.stderr) == (0, "")
    assert (tmp_path / "help.txt").read_text().startswith("usage: triton-sre triage")


# -- a path that is not what the flag asks for -------------------------------------------------------
def _odd_paths(where: Path) -> dict[str, Path]:
    (where / "loop1").symlink_to("loop2")
    (where / "loop2").symlink_to("loop1")
    (where / "dangling").symlink_to(where / "gone")
    os.mkfifo(where / "fifo")
    (where / "folder").mkdir()
    (where / "file").write_text("x\n")
    return {
        "loop1": where / "loop1", "dangling": where / "dangling", "fifo": where / "fifo",
        "folder": where / "folder", "file": where / "file", "missing": where / "missing",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("name", "says"),
    [("loop1", "Too many levels of symbolic links"), ("fifo", "a FIFO (named pipe), not a regular file"),
     ("folder", "a directory, not a regular file"), ("missing", "No such file or directory")],
)  # fmt: skip
def test_doctor_names_what_is_wrong_with_the_spec_path(tmp_path: Path, name: str, says: str) -> None:
    """Before: `SLO spec loop1 does not exist` for a link loop, a FIFO and a folder alike (an `is_file`
    test before the loader); now the loader's reason, as `generate --spec` gives it."""
    done = _cli("doctor", "--spec", str(_odd_paths(tmp_path)[name]), "--triton-url", "http://127.0.0.1:1")
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert done.stderr.startswith("triton-sre doctor: invalid SLO spec: "), done.stderr
    assert says in done.stderr and "does not exist" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("name", "says"),
    [("loop1", "a symbolic link loop"), ("dangling", "a dangling symbolic link"),
     ("fifo", "a FIFO (named pipe)"), ("file", "a regular file"), ("missing", "nothing there")],
)  # fmt: skip
def test_lint_says_what_its_path_is_when_it_is_no_folder(tmp_path: Path, name: str, says: str) -> None:
    """Before: `lint PATH: not a directory` for each of them, a typo and a link loop alike."""
    path = _odd_paths(tmp_path)[name]
    done = _cli("lint", str(path))
    assert done.returncode == c.EXIT_USAGE, done.stderr
    assert done.stderr.strip() == f"triton-sre lint: {path}: not a directory: {says}"
