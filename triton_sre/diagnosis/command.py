"""`triton-sre triage [FILE|-]`: diagnose a Triton log (or a live server) and print the findings.

Exit codes: 0 no failure found, 1 failures found (any critical finding), 2 usage or input error
(unreadable file, corrupt .gz, binary data, unreachable server, broken runbook catalog).
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import chain
from typing import TYPE_CHECKING, Any, TextIO

from triton_sre import conventions as c
from triton_sre.ttyprogress import Progress, colour_on

if TYPE_CHECKING:  # the engine and its rule tables load when triage runs, not when the CLI starts
    from triton_sre.diagnosis.catalog import Catalog
    from triton_sre.diagnosis.engine import Report


def add_triage_parser(commands: Any, epilog: str) -> None:
    triage = commands.add_parser(
        "triage",
        help="diagnose why Triton models failed to load, from a log or a live server",
        description=(
            "Read a Triton log (a file, a .gz, or '-' for stdin, e.g. `docker logs triton 2>&1 | "
            "triton-sre triage -`) and report each failed model with its root cause, the evidence lines, "
            "a one-line fix and the runbook. With --triton-url, diagnose a live server from its repository "
            "index instead. Exit codes: 0 no failure found, 1 failures found, 2 usage or input error."
        ),
        epilog=epilog,
    )
    triage.add_argument("file", nargs="?", default="-", help="log file, .gz, or - for stdin (default: -)")
    triage.add_argument(
        "--format", choices=["text", "json", "markdown"], default="text", help="output format (default text)"
    )
    triage.add_argument("--triton-url", help="diagnose this live Triton (HTTP endpoint) instead of a log")
    triage.add_argument(
        "--runbook-base-url",
        help="link runbooks as <URL><id>.md (default: the repository path runbooks/<id>.md)",
    )
    triage.add_argument(
        "--runbooks", help=f"runbook folder (default: ${c.ENV_RUNBOOKS_DIR}, else the packaged runbooks/)"
    )
    triage.set_defaults(handler=run_triage)


def _err(message: str) -> None:
    print(f"triton-sre triage: {message}", file=sys.stderr)


class _Progress(Progress):
    def __call__(self, consumed: int) -> None:
        rate = consumed / max(time.monotonic() - self.started, 1e-9) / 1e6
        self.show(f"triage: {consumed / 1e6:,.0f} MB read ({rate:,.0f} MB/s)")


def _diagnose(args: argparse.Namespace, catalog: Catalog) -> Report | None:
    from triton_sre.diagnosis.api import DiagnosisError, diagnose_live, diagnose_log

    if args.triton_url:
        try:
            return diagnose_live(args.triton_url, catalog.titles, catalog.remediations).report
        except DiagnosisError as exc:
            _err(str(exc))
            return None
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    if args.file == "-" and sys.stdin is not None and sys.stdin.isatty():
        _err("reading the log from stdin (end with Ctrl-D; or give a file, or pipe `docker logs` in)")
    try:
        return diagnose_log(args.file, catalog.titles, catalog.remediations, progress)
    except DiagnosisError as exc:
        _err(str(exc))
        return None
    finally:
        if progress is not None:
            progress.finish()


def run_triage(args: argparse.Namespace) -> int:
    from triton_sre.diagnosis.catalog import CatalogError, load_catalog

    try:
        catalog = load_catalog(args.runbooks)
    except CatalogError as exc:
        _err(f"runbook catalog: {exc}")
        return c.EXIT_USAGE
    report = _diagnose(args, catalog)
    if report is None:
        return c.EXIT_USAGE
    write_report(report, args.format, sys.stdout, args.runbook_base_url)
    return c.EXIT_FAILURE if report.has_failure else c.EXIT_OK


def write_report(report: Report, fmt: str, out: TextIO, base_url: str | None = None) -> None:
    """Write `report` in `fmt` to `out` piece by piece as it is rendered (a finding at a time for text and
    JSON: 50,000 findings are never held as one text); colour only when `out` is a terminal. A reader that
    goes away raises BrokenPipeError here, for the CLI's exit 141."""
    from triton_sre.diagnosis.render import json_chunks, text_chunks, to_markdown

    if fmt == "json":
        chunks = chain(json_chunks(report, base_url), ["\n"])
    elif fmt == "markdown":
        chunks = iter([to_markdown(report, base_url)])
    else:
        chunks = text_chunks(report, base_url, colour=colour_on(out))
    for chunk in chunks:
        out.write(chunk)
    out.flush()
