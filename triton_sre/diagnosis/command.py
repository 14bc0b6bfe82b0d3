"""`triton-sre triage [FILE|-]`: diagnose a Triton log (or a live server) and print the findings.

Exit codes: 0 no failure found, 1 failures found (any critical finding), 2 usage or input error
(unreadable file, corrupt .gz, binary data, unreachable server, broken runbook catalog), 3 a compressed
log cut short whose decoded part shows no failure (the cause may be in the part lost).
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import chain
from typing import TYPE_CHECKING, Any, TextIO

from triton_sre import conventions as c
from triton_sre.checks import path_text_arg, runbook_base_arg
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
            "index instead. Exit codes: 0 no failure found, 1 failures found, 2 usage or input error, 3 a "
            "compressed log cut short with no failure in the part that decoded."
        ),
        epilog=epilog,
    )
    triage.add_argument(
        "file", nargs="?", default="-", type=path_text_arg, help="log file, .gz, or - for stdin (default: -)"
    )
    triage.add_argument(
        "--format", choices=["text", "json", "markdown"], default="text", help="output format (default text)"
    )
    triage.add_argument("--triton-url", help="diagnose this live Triton (HTTP endpoint) instead of a log")
    triage.add_argument(
        "--runbook-base-url",
        type=runbook_base_arg,
        help="link runbooks as <URL><id>.md (default: the repository path runbooks/<id>.md)",
    )
    triage.add_argument(
        "--runbooks",
        type=path_text_arg,
        help=f"runbook folder (default: ${c.ENV_RUNBOOKS_DIR}, else the packaged runbooks/)",
    )
    triage.set_defaults(handler=run_triage)


def _err(message: str) -> None:
    print(f"triton-sre triage: {message}", file=sys.stderr)


class _Progress(Progress):
    def __call__(self, consumed: int) -> None:
        rate = consumed / max(time.monotonic() - self.started, 1e-9) / 1e6
        self.show(f"triage: {consumed / 1e6:,.0f} MB read ({rate:,.0f} MB/s)")


def not_loaded_note(index: list[dict[str, Any]]) -> str:
    """What a live diagnosis says of the index entries without a state (empty when there are none): Triton
    lists a model it could not read (a config.pbtxt it refused while polling the repository) by its name
    alone, with no version, state or reason, as it lists a model nobody asked to load."""
    names = sorted({str(e.get("name")) for e in index if not e.get("state") and e.get("name")})
    if not names:
        return ""
    return (
        f"Not loaded, with no state or reason in the repository index: {', '.join(names)}. Under "
        "--model-control-mode=none or poll, Triton could not read these models (a config.pbtxt it refused); "
        "the reason is only in its log: `triton-sre triage <log>`, or `triton-sre lint <repository>`. Under "
        "explicit, a model nobody loaded is listed the same way.\n"
    )


def _diagnose(args: argparse.Namespace, catalog: Catalog) -> tuple[Report, str] | None:
    from triton_sre.diagnosis.api import DiagnosisError, diagnose_live, diagnose_log

    if args.triton_url:
        try:
            live = diagnose_live(args.triton_url, catalog.titles, catalog.remediations)
        except DiagnosisError as exc:
            _err(str(exc))
            return None
        return live.report, not_loaded_note(live.index)
    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    if args.file == "-" and sys.stdin is not None and sys.stdin.isatty():
        _err("reading the log from stdin (end with Ctrl-D; or give a file, or pipe `docker logs` in)")
    try:
        return diagnose_log(args.file, catalog.titles, catalog.remediations, progress), ""
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
    diagnosed = _diagnose(args, catalog)
    if diagnosed is None:
        return c.EXIT_USAGE
    report, note = diagnosed
    _cut_warning(args.file, report)
    write_report(report, args.format, sys.stdout, args.runbook_base_url)
    if note:  # after the answer; beside JSON on stderr, so stdout stays one document
        out = sys.stderr if args.format == "json" else sys.stdout
        out.write(("\n" if out is sys.stdout else "") + note)
        out.flush()
    if report.has_failure:
        return c.EXIT_FAILURE
    if report.cut_short:
        return c.EXIT_INCONCLUSIVE
    return c.EXIT_OK


def _cut_warning(name: str, report: Report) -> None:
    """Say on stderr, before the findings, that the log was cut and where (the findings are of its part)."""
    from triton_sre.redact import shown_path

    cut = report.cut_short
    if cut is None:
        return
    failing = "" if report.has_failure else ": no failure in it, but the cause may be in the part lost"
    _err(
        f"{shown_path(name)}: the {cut.compression} data is cut short at byte {cut.at_byte:,} of the "
        f"compressed stream (it ends before its end-of-stream marker); diagnosed the part that decoded"
        + failing
    )


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
