"""Fault probes, round twenty (branch `probes20`, 2026-12-07): the file system at the edges, numbers at the
edges, the environment, and round nineteen's leftover (names `/etc/hosts` maps to loopback) — the probes
listed in docs/failure-behaviour.md, "Fault probes, round twenty". Each test of a fix failed before it."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from test_fault_probes_round18 import ROOT, _cli

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
