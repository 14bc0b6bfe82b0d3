"""Load failures swept from the model-config schema (``schema_faults.SCHEMA_FAULTS``) on the REAL Triton 2.51.

One server per log shape, in explicit model control as `triton-sre stack up` runs it: ``ok_model`` is loaded
first (the ensembles' step), then every other model by a load request, in parallel. The shapes are the
default glog format and ``--log-format ISO8601``, each with Triton's escaped quoted messages (the default
since 24.06) and unescaped (``TRITON_SERVER_ESCAPE_LOG_MESSAGES=0``). Every failed model must get a critical
finding whose runbook is the one its fault was labelled with and whose evidence is a line of the log; every
model that loads gets none. The live test also reads each server's repository index (``triage
--triton-url``): a model whose config the server refused has no reason there, and must then be named by
the note instead of being dropped.

The captures are committed under ``tests/data/logs/real/schema-*.log`` (regenerate them with
``python tests/test_diagnosis_schema_faults.py``).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from corpus import FIXTURES, build_repository, diagnose_file
from schema_faults import SCHEMA_FAULTS, WARMUP_EXECUTE_RAISES

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_live
from triton_sre.diagnosis.command import not_loaded_note
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, ServerInstall

ESCAPE_VARIABLE = "TRITON_SERVER_ESCAPE_LOG_MESSAGES"
# capture name -> (--log-format, the escape variable's value)
SHAPES: dict[str, tuple[str | None, str]] = {
    "schema-default": (None, "1"),
    "schema-default-unescaped": (None, "0"),
    "schema-iso8601": ("ISO8601", "1"),
    "schema-iso8601-unescaped": ("ISO8601", "0"),
}
FAILING = {m: rb for m, (_files, rb) in SCHEMA_FAULTS.items() if rb is not None}
LOADING = {m for m, (_files, rb) in SCHEMA_FAULTS.items() if rb is None}
STEP = "ok_model"  # the ensembles' step, loaded before them


class _Server(LocalTriton):
    def __init__(self, *args: Any, escape: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.escape = escape

    def environment(self, install: ServerInstall) -> dict[str, str]:
        return {**super().environment(install), ESCAPE_VARIABLE: self.escape}


def _phases() -> list[list[str]]:
    """The loads after the step's, in two rounds: the models in parallel, then the ensembles (whose loads
    reload their step)."""
    ensembles = [m for m, (fs, _rb) in SCHEMA_FAULTS.items() if '"ensemble"' in fs.get("config.pbtxt", "")]
    return [[m for m in SCHEMA_FAULTS if m not in {STEP, *ensembles}], ensembles]


def capture(name: str, workdir: Path, log_path: Path) -> tuple[dict[str, int], Report, str, set[str]]:
    """Run one explicit-control server, request every load; (HTTP status of each load, the live
    diagnosis of its repository index, the live note, the names in the index). The log is left at
    ``log_path``."""
    log_format, escape = SHAPES[name]
    repo = build_repository(workdir / "repo", SCHEMA_FAULTS)
    server = _Server(
        repo,
        escape=escape,
        workdir=workdir / "triton",
        log_path=log_path,
        model_control_mode="explicit",
        log_format=log_format,  # type: ignore[arg-type]
        startup_timeout=60,
    )
    server.start()
    try:

        def load(model: str) -> tuple[str, int]:
            url = f"{server.http_url}/v2/repository/models/{model}/load"
            return model, requests.post(url, timeout=120).status_code

        status = dict([load(STEP)])
        with ThreadPoolExecutor(max_workers=8) as pool:
            for phase in _phases():
                status.update(pool.map(load, phase))
        live = diagnose_live(server.http_url, {}, None)
        names = {str(entry.get("name")) for entry in live.index}
        return status, live.report, not_loaded_note(live.index), names
    finally:
        server.stop()


def first_findings(report: Report) -> dict[str, Any]:
    first: dict[str, Any] = {}
    for finding in report.findings:
        if finding.model is not None:
            first.setdefault(finding.model, finding)
    return first


def check_capture(path: Path, failing: dict[str, str] = FAILING) -> None:
    report = diagnose_file(path)
    lines = set(path.read_text(errors="replace").splitlines())
    first = first_findings(report)
    got = {m: getattr(first.get(m), "runbook", None) for m in failing}
    assert got == failing, f"{path.name}: first findings differ from the injected faults"
    for model in failing:
        finding = first[model]
        assert finding.severity == c.IMPACT_CRITICAL, model
        assert finding.evidence and finding.evidence[0].text in lines, f"{model}: evidence is no log line"
    assert not LOADING & {f.model for f in report.findings}, "a model that loaded got a finding"
    # every line is some model's: a cause line left model-less is a finding for no model (a server-wide one)
    modelless = [f.evidence[0].text[:120] for f in report.findings if f.model is None]
    assert not modelless, modelless
    assert not report.unmatched, report.unmatched
    assert diagnose_events(parse_text(path.read_text(errors="replace"))).findings == report.findings


def test_a_server_crash_on_a_failed_warmup_is_told_after_the_models_error() -> None:
    """2.51 crashed (signal 11) right after the warmup sample of a model whose execute raises failed (the
    sweep's model set, loaded as the live test loads it, with that model last and alone). The model's first
    finding is its own error (python-model-error, quoting the stub's line): that is what its owner fixes, and
    without it no warmup fails and nothing crashes. The crash is told too, as a server-wide finding quoting
    the signal line (diag28; docs/triage.md, the tie-break). Every other model keeps its own finding."""
    path = FIXTURES / "schema-warmup-crash.log"
    text = path.read_text()
    assert "boom in execute" in text and "Signal (11) received." in text
    report = diagnose_file(path)
    first = first_findings(report)
    # (captured before the sweep's second round: its models are not in it)
    expected = {m: rb for m, rb in FAILING.items() if re.search(rf"\b{m}\b", text)}
    expected[WARMUP_EXECUTE_RAISES] = c.RUNBOOK_PYTHON_MODEL_ERROR
    assert {m: getattr(first.get(m), "runbook", None) for m in expected} == expected
    found = first[WARMUP_EXECUTE_RAISES]
    assert found.severity == c.IMPACT_CRITICAL
    assert "boom in execute" in found.evidence[0].text
    crashes = [f for f in report.findings if f.runbook == c.RUNBOOK_SERVER_CRASHED]
    assert [(f.model, f.severity) for f in crashes] == [(None, c.IMPACT_CRITICAL)]
    assert crashes[0].evidence[0].text == "Signal (11) received."
    assert text.splitlines()[crashes[0].evidence[0].line - 1] == "Signal (11) received."
    assert not LOADING & {f.model for f in report.findings}
    assert diagnose_events(parse_text(text)).findings == report.findings


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_committed_capture_diagnosis(name: str) -> None:
    path = FIXTURES / f"{name}.log"
    assert path.exists(), f"missing fixture {path}: run python {Path(__file__).name}"
    check_capture(path)


def test_the_captures_hold_their_shape() -> None:
    """The four captures differ in the way they are meant to (a capture of the wrong shape tests nothing)."""
    texts = {name: (FIXTURES / f"{name}.log").read_text(errors="replace") for name in SHAPES}
    for name, (log_format, escape) in SHAPES.items():
        has_iso = "Z E " in texts[name]
        assert has_iso == (log_format == "ISO8601"), name
        quoted = "\"failed to load 'dims_missing' version 1" in texts[name]
        assert quoted == (escape == "1"), name


@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """Every shape again from the real server (about 30 s a server, two at a time), and its live index."""
    started = time.monotonic()
    names = sorted(SHAPES)
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(
            zip(
                names,
                pool.map(lambda n: capture(n, tmp_path / n, tmp_path / f"{n}.log"), names),
                strict=True,
            )
        )
    print(f"\n{len(runs)} explicit-control captures in {time.monotonic() - started:.1f}s")
    for name, (status, live, note, indexed) in runs.items():
        failed = {m for m, code in status.items() if code != requests.codes.ok}
        assert failed == set(FAILING), f"{name}: the models that failed to load are not the faulty ones"
        try:
            check_capture(tmp_path / f"{name}.log")
        except AssertionError:
            print(f"--- {name}.log ---\n{(tmp_path / f'{name}.log').read_text(errors='replace')}")
            raise
        # Live: a failed model with a reason in the index gets its finding; one listed without a state is in
        # the note. A load that found no version under the model's version policy leaves no index entry at
        # all (2.51): the index cannot name those, only the log can.
        live_first = first_findings(live)
        for model, runbook in FAILING.items():
            if model in live_first:
                assert live_first[model].runbook == runbook, (name, model)
            elif model in indexed:
                assert model in note, f"{name}: {model} is neither a live finding nor in the note"
            else:
                assert runbook == c.RUNBOOK_VERSION_DIR_INVALID, f"{name}: {model} left the index"
        assert not LOADING & set(live_first)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for shape in SHAPES:
            log = FIXTURES / f"{shape}.log"
            log.unlink(missing_ok=True)
            capture(shape, Path(tmp) / shape, log)
            # the repository path of this run is in the log: keep it, it is the real server's text
            check_capture(log)
            print(shape, log.stat().st_size, "bytes")
    sys.exit(0)
