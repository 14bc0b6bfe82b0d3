"""The diag29 sweep (``diag29_faults``) on the REAL Triton 2.51: the model faults in one explicit-control
server per log shape (default and ``--log-format ISO8601``, escaped and not), the start-up flags one short
server each (the default shape). Every failing model's first finding is its labelled runbook, critical
when its load failed, quoting a line of the log; a model with no fault gets none; a refused flag gets a
critical server-wide finding; a flag 2.51 accepts leaves a healthy log.

Captures: ``tests/data/logs/real/diag29-*.log`` (regenerate: ``python tests/test_diagnosis_diag29_sweep.py``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from corpus import FIXTURES, build_repository, diagnose_file
from diag29_faults import ENSEMBLES, FLAGS, MODELS, RATE_LIMITER_FLAGS, RUNTIME
from runtime_faults import (
    INPUT,
    OK,
    FaultServer,
    capture_all,
    load_status,
    quotes_its_line,
    run_or_serve,
    same_both_ways,
)
from test_diagnosis_schema_faults import first_findings

from triton_sre import conventions as c

SHAPES: dict[str, tuple[str | None, str]] = {
    "diag29-default": (None, "1"),
    "diag29-default-unescaped": (None, "0"),
    "diag29-iso8601": ("ISO8601", "1"),
    "diag29-iso8601-unescaped": ("ISO8601", "0"),
}
FIRST = ("ok_model", "step")


def capture_models(name: str, workdir: Path, log_path: Path) -> dict[str, int]:
    """One explicit-control server of every model fault; the HTTP status of each load and request."""
    log_format, escape = SHAPES[name]
    server = FaultServer(
        build_repository(workdir / "repo", MODELS),
        escape=escape,
        workdir=workdir / "triton",
        log_path=log_path,
        model_control_mode="explicit",
        log_format=log_format,  # type: ignore[arg-type]
        extra_args=RATE_LIMITER_FLAGS,
        startup_timeout=60,
    )
    server.start()
    try:

        def load(model: str) -> tuple[str, int]:
            return load_status(server, model)

        def infer(model: str) -> tuple[str, int]:
            url = f"{server.http_url}/v2/models/{model}/infer"
            return f"infer {model}", requests.post(url, json=INPUT, timeout=60).status_code

        status = dict(load(m) for m in FIRST)
        rest = [m for m in MODELS if m not in (*FIRST, *ENSEMBLES)]
        with ThreadPoolExecutor(max_workers=6) as pool:
            status.update(pool.map(load, rest))
            status.update(pool.map(load, ENSEMBLES))
            status.update(pool.map(infer, RUNTIME))
        time.sleep(1.0)  # the stubs' last lines
        return status
    finally:
        server.stop()


def check_models(path: Path) -> None:
    report = diagnose_file(path)
    first = first_findings(report)
    failing = {m: rb for m, (_f, rb) in MODELS.items() if rb is not None}
    got = {m: getattr(first.get(m), "runbook", None) for m in failing}
    assert got == failing, f"{path.name}: first findings differ from the injected faults"
    for model in failing:
        finding = first[model]
        if model not in RUNTIME:  # (a request's error: see bench/RESULTS.md diag29 for its severity)
            assert finding.severity == c.IMPACT_CRITICAL, (model, finding.severity)
        assert finding.evidence and quotes_its_line(path, finding.evidence[0]), model
    healthy = {m for m, (_f, rb) in MODELS.items() if rb is None}
    assert not healthy & {f.model for f in report.findings}, "a model with no fault got a finding"
    same_both_ways(path, report)


def capture_flag(name: str, workdir: Path, log_path: Path) -> int | None:
    flags, runbook = FLAGS[name]
    server = FaultServer(
        build_repository(workdir / "repo", OK),
        workdir=workdir / "triton",
        log_path=log_path,
        exit_on_error=True,
        extra_args=flags,
        startup_timeout=40,
    )
    return run_or_serve(server, runbook is not None, name)


def check_flag(name: str, path: Path) -> None:
    runbook = FLAGS[name][1]
    report = diagnose_file(path)
    if runbook is None:
        got = [(f.model, f.runbook) for f in report.findings]
        assert not got, f"{name}: a healthy log got {got}"
    else:
        assert report.findings, f"{name}: no finding"
        first = report.findings[0]
        assert (first.model, first.runbook, first.severity) == (None, runbook, c.IMPACT_CRITICAL), name
        assert first.evidence and quotes_its_line(path, first.evidence[0]), name
    same_both_ways(path, report)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_committed_model_capture(name: str) -> None:
    check_models(FIXTURES / f"{name}.log")


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_committed_flag_capture(name: str) -> None:
    check_flag(name, FIXTURES / f"diag29-flag-{name}.log")


@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """One model server (the default shape) and the flags three at a time, diagnosed as committed."""
    started = time.monotonic()
    status = capture_models("diag29-default", tmp_path / "models", tmp_path / "diag29-default.log")
    codes = capture_all(FLAGS, lambda n: capture_flag(n, tmp_path / n, tmp_path / f"diag29-flag-{n}.log"), 3)
    print(f"\nthe diag29 sweep in {time.monotonic() - started:.1f}s")
    assert {m for m in MODELS if status.get(m) == requests.codes.ok} >= set(FIRST)
    check_models(tmp_path / "diag29-default.log")
    for name in FLAGS:
        check_flag(name, tmp_path / f"diag29-flag-{name}.log")
        if FLAGS[name][1] is not None:
            assert codes[name] not in (None, 0), (name, codes[name])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        only = sys.argv[1:]
        names = [n for n in SHAPES if not only or n in only]
        flags = [n for n in FLAGS if not only or "flags" in only]
        with ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(lambda n: capture_models(n, Path(tmp) / n, FIXTURES / f"{n}.log"), names))
        for n, run in zip(names, runs, strict=True):
            print(n, run)
        capture_all(flags, lambda n: capture_flag(n, Path(tmp) / n, FIXTURES / f"diag29-flag-{n}.log"), 3)
    sys.exit(0)
