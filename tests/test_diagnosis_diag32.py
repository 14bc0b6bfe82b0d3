"""diag32: the diag31 sweep's leftovers, on its real 2.51 captures (``tests/data/logs/real/diag31-*.log``).

Each test reads a capture the real server wrote (``tests/test_diagnosis_diag31_sweep.py`` regenerates them),
or that capture with one part taken out to show which part decides.
"""

from __future__ import annotations

from corpus import FIXTURES

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _read(name: str) -> str:
    return (FIXTURES / f"diag31-{name}.log").read_text(errors="replace")


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
