"""diag32: the diag31 sweep's leftovers, on its real 2.51 captures (``tests/data/logs/real/diag31-*.log``).

Each test reads a capture the real server wrote (``tests/test_diagnosis_diag31_sweep.py`` regenerates them),
or that capture with one part taken out to show which part decides.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from corpus import FIXTURES, build_repository, diagnose_file
from runtime_faults import OK, FaultServer, quotes_its_line, run_until_exit, same_both_ways

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _read(name: str, sweep: str = "diag31") -> str:
    return (FIXTURES / f"{sweep}-{name}.log").read_text(errors="replace")


def _diagnose(text: str) -> Report:
    return diagnose_events(parse_text(text))


# --- a missing second repository with --exit-on-error=false (the options table decides)

MISSING_REPO = "repository-missing-exit-false"
ABSENT = "/nonexistent/triton-sre-diag31"


def test_a_stat_failure_of_a_path_the_table_lists_as_a_repository_is_the_repository() -> None:
    report = _diagnose(_read(MISSING_REPO))
    first = report.findings[0]
    assert (first.model, first.runbook, first.severity) == (
        None,
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        c.IMPACT_CRITICAL,
    )
    assert f"failed to stat file {ABSENT}" in first.evidence[0].text
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_REPOSITORY_PATH_INVALID]


def test_without_the_table_row_the_same_line_stays_a_missing_file() -> None:
    """The row is the only witness: taken out, core's words say a file is missing (as for a model's file)."""
    text = "\n".join(line for line in _read(MISSING_REPO).splitlines() if f"| {ABSENT} " not in line)
    assert "model_repository_path[0]" not in text
    assert _diagnose(text).findings[0].runbook == c.RUNBOOK_MODEL_FILE_MISSING


def test_a_missing_file_under_a_listed_repository_is_still_the_file() -> None:
    """A model's file inside a repository the table lists is that model's missing file, not the repository."""
    text = _read(MISSING_REPO).replace(
        f"failed to stat file {ABSENT}", f"failed to stat file {ABSENT}/ranker/1/model.onnx"
    )
    assert _diagnose(text).findings[0].runbook == c.RUNBOOK_MODEL_FILE_MISSING


def test_the_repository_rows_move_no_other_line() -> None:
    """The rows are noted, not counted as events: a log's event count is what it was before them."""
    text = _read(MISSING_REPO)
    without = "\n".join(line for line in text.splitlines() if "model_repository_path[" not in line)
    assert _diagnose(text).events == _diagnose(without).events


# --- 2.51's "already in use" after gRPC said why (an echo, not a second incident)

REFUSED_GRPC = ("grpc-ssl-files-missing", "grpc-ssl-mutual-root-missing", "grpc-address-not-local")


def test_the_already_in_use_echo_joins_the_grpc_reason_it_follows() -> None:
    for name in REFUSED_GRPC:
        report = _diagnose(_read(name))
        assert [(f.model, f.runbook, f.severity) for f in report.findings] == [
            (None, c.RUNBOOK_SERVER_OPTION_INVALID, c.IMPACT_CRITICAL)
        ], name
        quoted = [e.text for e in report.findings[0].evidence]
        assert "already in use" in quoted[-1] and "failed to start GRPC service" in quoted[-1], name
        assert not any("already in use" in q for q in quoted[:-1]), name


def test_the_already_in_use_line_alone_stays_a_port_in_use() -> None:
    """Without gRPC's reason before it (the same capture, its gRPC core lines taken out), nothing says the
    port is free: server-port-in-use, as for a port another server holds (the real port-in-use captures)."""
    lines = _read("grpc-ssl-files-missing").splitlines()
    text = "\n".join(line for line in lines if "ssl" not in line and "chttp2" not in line)
    assert [f.runbook for f in _diagnose(text).findings] == [c.RUNBOOK_SERVER_PORT_IN_USE]
    for service in ("grpc", "http", "metrics"):
        held = (FIXTURES / f"port-in-use-{service}.log").read_text(errors="replace")
        assert [f.runbook for f in _diagnose(held).findings] == [c.RUNBOOK_SERVER_PORT_IN_USE], service


# --- a bad --http-header-forward-pattern: re2 refuses it, the server serves (a warning naming the flag)


def test_a_header_pattern_re2_refuses_is_a_warning_naming_the_flag_and_pattern() -> None:
    report = _diagnose(_read("http-header-pattern-bad-regex"))
    assert [(f.model, f.runbook, f.severity) for f in report.findings] == [
        (None, c.RUNBOOK_SERVER_OPTION_INVALID, c.IMPACT_WARNING)
    ]
    finding = report.findings[0]
    assert "Error parsing '(?i)(': missing )" in finding.evidence[0].text
    assert "--http-header-forward-pattern '('" in finding.remediation and "(missing ))" in finding.remediation


def test_the_warning_names_the_pattern_and_reason_re2_gave() -> None:
    """Another pattern and reason (re2's own texts): the fix quotes them; the refusal stays unprefixed."""
    text = _read("http-header-pattern-bad-regex").replace(
        "Error parsing '(?i)(': missing ): (?i)(", "Error parsing '(?i)x-[a': missing ]: [a"
    )
    finding = _diagnose(text).findings[0]
    assert finding.severity == c.IMPACT_WARNING
    assert "'x-[a'" in finding.remediation and "(missing ])" in finding.remediation


def test_re2_refusing_another_pattern_is_not_the_header_flag() -> None:
    """Without Triton's (?i) the pattern is not --http-header-forward-pattern's: no fix names that flag."""
    text = _read("http-header-pattern-bad-regex").replace("Error parsing '(?i)(':", "Error parsing '(':")
    assert not any("--http-header-forward-pattern" in f.remediation for f in _diagnose(text).findings)


# --- a start-up that has not finished: a gs:// repository without network (the real 2.51, diag32's capture)

GS_ARGS = ["--model-repository=gs://triton-sre-absent/models"]
# Labelled before the first run: not a failure (nothing failed; the server waits on the repository), so no
# critical finding. 2.51 printed the CPU host's CUDA lines and then nothing for the 30 s given (diag31 saw
# 5 minutes): the log stops at the driver warning. Read: a cuda-driver-mismatch WARNING whose fix says both
# readings (an old driver on a GPU host; an unfinished start-up on a CPU host).
GS_WAIT = 30.0


def capture_gs(workdir: Path, log_path: Path) -> int | None:
    repo = build_repository(workdir / "repo", OK)
    server = FaultServer(
        repo, workdir=workdir / "triton", log_path=log_path, startup_timeout=GS_WAIT, exit_on_error=True,
        extra_args=GS_ARGS,
    )  # fmt: skip
    return run_until_exit(server, GS_WAIT)


def check_gs(path: Path) -> None:
    report = diagnose_file(path)
    assert [(f.model, f.runbook, f.severity) for f in report.findings] == [
        (None, c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.IMPACT_WARNING)
    ]
    finding = report.findings[0]
    assert quotes_its_line(path, finding.evidence[0])
    assert "start-up had not finished" in finding.remediation and "gs://" in finding.remediation
    same_both_ways(path, report)


def test_a_log_stopping_at_the_driver_warning_is_a_warning_not_a_failure() -> None:
    check_gs(FIXTURES / "diag32-repository-gs.log")


def test_the_driver_finding_stays_critical_where_the_log_needs_a_gpu() -> None:
    """The same lines, and a model instance on a GPU: the driver is the cause (critical, no start-up note)."""
    text = _read("repository-gs", "diag32") + (
        'I1206 19:58:57.000000 31528 model_lifecycle.cc:472] "loading: big:1"\n'
        'E1206 19:58:58.000000 31528 model_lifecycle.cc:642] "failed to load \'big\' version 1: Internal: '
        'instance group big_0 of model big has kind KIND_GPU"\n'
    )
    first = _diagnose(text).findings[0]
    assert first.severity == c.IMPACT_CRITICAL and "start-up had not finished" not in first.remediation


def test_a_log_stopping_after_the_options_table_did_not_stop_at_the_driver() -> None:
    """The s3:// capture cut right after its options table (the server went past the CUDA checks and printed
    its settings): no driver finding, where the same capture cut before the table reads the driver warning."""
    lines = _read("repository-s3").splitlines()
    end = max(i for i, line in enumerate(lines) if line.startswith("+---"))
    after_table = "\n".join(lines[: end + 1])
    assert "model_repository_path[1]" in after_table and "Unable to create S3" not in after_table
    assert not any(f.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH for f in _diagnose(after_table).findings)
    before = "\n".join(line for line in lines[:4])
    assert [f.runbook for f in _diagnose(before).findings] == [c.RUNBOOK_CUDA_DRIVER_MISMATCH]


@pytest.mark.triton
def test_live_gs_capture_agrees(tmp_path: Path) -> None:
    started = time.monotonic()
    code = capture_gs(tmp_path / "gs", tmp_path / "diag32-repository-gs.log")
    print(f"\nthe gs:// start-up in {time.monotonic() - started:.1f}s, exit {code}")
    check_gs(tmp_path / "diag32-repository-gs.log")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(capture_gs(Path(tmp) / "gs", FIXTURES / "diag32-repository-gs.log"))


# --- an address the host lacks: "already in use" is all HTTP and metrics say (the fix names the address)


def test_a_specific_address_already_in_use_names_the_address_in_the_fix() -> None:
    for name, port_word in (("http-address-not-local", "HTTP"), ("metrics-address-not-local", "Metrics")):
        finding = _diagnose(_read(name)).findings[0]
        assert (finding.runbook, finding.severity) == (c.RUNBOOK_SERVER_PORT_IN_USE, c.IMPACT_CRITICAL), name
        assert f"failed to start {port_word} service" in finding.evidence[0].text
        assert "the address 192.0.2.1 is not one of this host's" in finding.remediation, name


def test_a_loopback_port_in_use_keeps_the_runbook_fix_alone() -> None:
    for service in ("grpc", "http", "metrics"):
        finding = _diagnose((FIXTURES / f"port-in-use-{service}.log").read_text(errors="replace")).findings[0]
        assert "not one of this host's" not in finding.remediation, service
