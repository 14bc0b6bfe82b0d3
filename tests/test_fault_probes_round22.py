"""Fault probes, round twenty-two (branch `probes22`, 2026-12-07): durations as Prometheus reads them, ... —
the probes listed in docs/failure-behaviour.md, "Fault probes, round twenty-two". Each test of a fix failed
before it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from binaries import binary

from triton_sre.cli import main
from triton_sre.durations import DurationError, parse_duration

# -- durations: Prometheus' grammar, no looser and no stricter -----------------------------------------------
DURATIONS = ["1y", "1w", "2d", "1h30m", "1d1ms", "90s", "500ms", "1m1ms"]
DURATIONS += ["5m5m", "30s1h", "1ms1s", "1d1w", "1h1h"]


def _promtool_reads(tmp_path: Path, duration: str) -> bool:
    rules = tmp_path / "d.yaml"
    rules.write_text(f"groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up == 0\n    for: {duration}\n")
    done = subprocess.run(
        [binary("promtool"), "check", "rules", str(rules)], capture_output=True, text=True, timeout=60
    )
    return done.returncode == 0


def _we_read(duration: str) -> bool:
    try:
        parse_duration(duration, "x")
    except DurationError:
        return False
    return True


def test_a_duration_is_read_exactly_when_promtool_reads_it(tmp_path: Path) -> None:
    """Before: `5m5m`, `30s1h`, `1ms1s` were read (as 10m, 1h30s, 1.001s) where promtool and rule loading
    say "not a valid duration string", and `1y` was refused where Prometheus reads a year."""
    promtool = {d: _promtool_reads(tmp_path, d) for d in DURATIONS}
    assert {d: _we_read(d) for d in DURATIONS} == promtool
    assert not promtool["5m5m"] and promtool["1y"]  # the real tool does tell the two kinds apart
    assert parse_duration("1y", "x") == 365 * 86400


def test_units_out_of_order_say_how_prometheus_writes_them(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["rollout", "check", "--prometheus", "http://127.0.0.1:9", "--model", "m", "--window", "5m5m"]
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "--window: units go largest first, each once, as Prometheus reads them (1h30m), got '5m5m'" in (
        capsys.readouterr().err
    )
