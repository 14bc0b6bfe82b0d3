"""Start-up faults (``runtime_faults.STARTUP``) on the REAL Triton 2.51 (diag28).

One short server per fault (the default log shape): each failure gets a critical first finding on its
labelled runbook, about its model or server-wide, quoting a line of the log; a setting 2.51 accepts leaves
a healthy log, which gets no finding. The captures are committed under ``tests/data/logs/real/startup-*.log``
(regenerate them with ``python tests/test_diagnosis_startup_faults.py``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from corpus import FIXTURES, build_repository, diagnose_file
from runtime_faults import (
    OK,
    STARTUP,
    FaultServer,
    capture_all,
    quotes_its_line,
    run_or_serve,
    same_both_ways,
)
from test_diagnosis_schema_faults import first_findings

from triton_sre import conventions as c


def capture_startup(
    name: str,
    workdir: Path,
    log_path: Path,
    table: dict = STARTUP,
    serving: tuple[str, ...] = (),
    wait: float = 40,
) -> int | None:
    """Run the server of one start-up fault until it exits (``wait`` seconds at most: a failure) or serves
    (then stop it); ``serving`` names failures the server serves through (a failed model beside ok_model)."""
    kwargs, prepare, runbook, _about = table[name]
    repo = build_repository(workdir / "repo", OK)
    server = FaultServer(
        repo,
        prepare=prepare,
        workdir=workdir / "triton",
        log_path=log_path,
        startup_timeout=wait,
        **kwargs,  # type: ignore[arg-type]
    )
    return run_or_serve(server, runbook is not None and name not in serving, name, wait)


def check_startup(name: str, path: Path, table: dict = STARTUP) -> None:
    _kwargs, _prepare, runbook, about = table[name]
    report = diagnose_file(path)
    if runbook is None:
        assert not report.findings, (
            f"{name}: a healthy log got {[(f.model, f.runbook) for f in report.findings]}"
        )
    else:
        first = report.findings[0] if about is None else first_findings(report).get(about)
        assert first is not None, f"{name}: no finding about {about or 'the server'}"
        assert (first.model, first.runbook, first.severity) == (about, runbook, c.IMPACT_CRITICAL), name
        assert first.evidence and quotes_its_line(path, first.evidence[0]), name
    same_both_ways(path, report)


@pytest.mark.parametrize("name", sorted(STARTUP))
def test_committed_startup_capture(name: str) -> None:
    path = FIXTURES / f"startup-{name}.log"
    assert path.exists(), f"missing fixture {path}: run python {Path(__file__).name}"
    check_startup(name, path)


@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """Every start-up fault again from the real server (three at a time), diagnosed as committed."""
    started = time.monotonic()
    codes = capture_all(STARTUP, lambda n: capture_startup(n, tmp_path / n, tmp_path / f"startup-{n}.log"), 3)
    print(f"\n{len(codes)} start-up captures in {time.monotonic() - started:.1f}s")
    for name in STARTUP:
        path = tmp_path / f"startup-{name}.log"
        try:
            check_startup(name, path)
        except AssertionError:
            print(f"--- {path.name} ---\n{path.read_text(errors='replace')}")
            raise
        if STARTUP[name][2] is not None and STARTUP[name][0].get("exit_on_error"):
            assert codes[name] not in (None, 0), (name, codes[name])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for fault in STARTUP:
            log = FIXTURES / f"startup-{fault}.log"
            log.unlink(missing_ok=True)
            capture_startup(fault, Path(tmp) / fault, log)
            check_startup(fault, log)
            print(fault, log.stat().st_size, "bytes")
    shutil.rmtree(FIXTURES / "__pycache__", ignore_errors=True)
    sys.exit(0)
