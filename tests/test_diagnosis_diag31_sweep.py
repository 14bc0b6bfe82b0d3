"""The diag31 sweep (``diag31_faults``) on the REAL Triton 2.51: server-level faults, one short server each
(the default log shape). Each failure's first finding is critical on its labelled runbook, about its model
or server-wide, quoting a line of the log; a setting 2.51 accepts leaves a healthy log with no finding.

Captures: ``tests/data/logs/real/diag31-*.log`` (regenerate: ``python tests/test_diagnosis_diag31_sweep.py``).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests
from corpus import FIXTURES, build_repository, diagnose_file
from diag31_faults import ASKED, FAULTS, KNOWN_MISSES, NO_EXIT, SERVING, WAIT, WARNED
from runtime_faults import INPUT, OK, FaultServer, capture_all, quotes_its_line, same_both_ways
from test_diagnosis_startup_faults import capture_startup, check_startup

from triton_sre import conventions as c


def capture(name: str, workdir: Path, log_path: Path) -> int | None:
    if name in ASKED:
        return ask_once(name, workdir, log_path)
    return capture_startup(name, workdir, log_path, FAULTS, SERVING, WAIT.get(name, 40))


def ask_once(name: str, workdir: Path, log_path: Path) -> int | None:
    """Start the server, send ok_model one inference (which may kill it), stop it: its exit code."""
    kwargs = FAULTS[name][0]
    repo = build_repository(workdir / "repo", OK)
    server = FaultServer(repo, workdir=workdir / "triton", log_path=log_path, startup_timeout=40, **kwargs)  # type: ignore[arg-type]
    try:
        server.start()
        with contextlib.suppress(requests.RequestException):
            requests.post(f"{server.http_url}/v2/models/ok_model/infer", json=INPUT, timeout=30)
        time.sleep(1.0)  # the crash report
    finally:
        code = server.stop()
    return code


def check(name: str, path: Path) -> None:
    if name in WARNED:
        report = diagnose_file(path)
        assert [(f.model, f.runbook, f.severity) for f in report.findings] == [
            (None, WARNED[name], c.IMPACT_WARNING)
        ], name
        assert quotes_its_line(path, report.findings[0].evidence[0]), name
        same_both_ways(path, report)
        return
    if name not in KNOWN_MISSES:
        check_startup(name, path, FAULTS)
        return
    report = diagnose_file(path)
    assert report.findings and report.findings[0].severity == c.IMPACT_CRITICAL, name
    assert report.findings[0].evidence and quotes_its_line(path, report.findings[0].evidence[0]), name
    same_both_ways(path, report)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_committed_capture(name: str) -> None:
    check(name, FIXTURES / f"diag31-{name}.log")


@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """Every fault again from the real server (three at a time), diagnosed as committed."""
    started = time.monotonic()
    codes = capture_all(FAULTS, lambda n: capture(n, tmp_path / n, tmp_path / f"diag31-{n}.log"), 3)
    print(f"\nthe diag31 sweep in {time.monotonic() - started:.1f}s")
    for name, (_kwargs, _prepare, runbook, _about) in FAULTS.items():
        check(name, tmp_path / f"diag31-{name}.log")
        if runbook is not None and name not in NO_EXIT:
            assert codes[name] not in (None, 0), (name, codes[name])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        names = [n for n in FAULTS if not sys.argv[1:] or n in sys.argv[1:]]
        print(capture_all(names, lambda n: capture(n, Path(tmp) / n, FIXTURES / f"diag31-{n}.log"), 3))
    sys.exit(0)
