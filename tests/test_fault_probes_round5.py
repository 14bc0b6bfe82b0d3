"""Fault probes, round five (branch `probes5`, 2026-12-05): the environment, output that cannot be
written, deeply nested YAML and hostile runbook front matter (docs/failure-behaviour.md, "Fault
probes, round five")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_fault_probes import ROOT

from triton_sre import conventions as c


def run_env(args: list[str], cwd: Path, **env: str) -> tuple[int, str, str]:
    """The CLI in a child process with `env` on top of this one's environment."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    full.pop(c.ENV_CONFIG, None)
    proc = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", *args],
        capture_output=True,
        env=full,
        cwd=cwd,
        timeout=120,
    )
    return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")


def a_log(tmp_path: Path) -> Path:
    log = tmp_path / "triton.log"
    log.write_text("I1204 12:00:00.000 1 server.cc:1] Started\n", encoding="utf-8")
    return log


@pytest.mark.parametrize("value", ["garbage", "5", "verbose"])
def test_a_log_level_from_the_environment_that_is_no_level_is_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    """`TRITON_SRE_LOG_LEVEL=garbage` was argparse's default, never checked against the choices:
    logging.basicConfig raised `ValueError: Unknown level: 'GARBAGE'`, a traceback, exit 1."""
    code, out, err = run_env(["triage", str(a_log(tmp_path))], tmp_path, **{c.ENV_LOG_LEVEL: value})
    assert code == c.EXIT_USAGE and "Traceback" not in err, err
    message = err.strip().splitlines()[-1]  # argparse's own form, as for a bad --log-level
    assert message.startswith("triton-sre: error: "), err
    for needle in (f"${c.ENV_LOG_LEVEL}", repr(value), "debug, info"):
        assert needle in message, err
    assert out == ""


@pytest.mark.parametrize("value", ["DEBUG", " warning ", ""])
def test_a_log_level_from_the_environment_in_any_case_or_blank_is_taken(tmp_path: Path, value: str) -> None:
    code, out, err = run_env(["triage", str(a_log(tmp_path))], tmp_path, **{c.ENV_LOG_LEVEL: value})
    assert code == c.EXIT_OK, err
    assert "Traceback" not in err and out.strip()
