"""`triton-sre triage [FILE|-]`: diagnose a Triton log (or a live server) and print the findings.

Exit codes: 0 no failure found, 1 failures found (any critical finding), 2 usage or input error
(unreadable file, corrupt .gz, binary data, unreachable server, broken runbook catalog).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import sys
import time
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

from triton_sre import conventions as c

if TYPE_CHECKING:  # the engine and its rule tables load when triage runs, not when the CLI starts
    from triton_sre.diagnosis.catalog import Catalog
    from triton_sre.diagnosis.engine import Report

GZIP_MAGIC = b"\x1f\x8b"
PROGRESS_EVERY_SECONDS = 0.5


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
    triage.add_argument("--runbooks", help="runbook folder (default: the packaged runbooks/)")
    triage.set_defaults(handler=run_triage)


def _err(message: str) -> None:
    print(f"triton-sre triage: {message}", file=sys.stderr)


class _Progress:
    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.last = 0.0

    def __call__(self, consumed: int) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_SECONDS:
            return
        self.last = now
        rate = consumed / max(now - self.started, 1e-9) / 1e6
        self.stream.write(f"\rtriage: {consumed / 1e6:,.0f} MB read ({rate:,.0f} MB/s)")
        self.stream.flush()

    def done(self) -> None:
        if self.last:
            self.stream.write("\r\033[K")
            self.stream.flush()


@contextlib.contextmanager
def open_log(name: str) -> Iterator[BinaryIO]:
    """The log as a binary stream; gzip is recognised by its magic bytes, not the file name."""
    with contextlib.ExitStack() as stack:
        raw: BinaryIO = sys.stdin.buffer if name == "-" else stack.enter_context(open(name, "rb"))
        peek = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
        if peek == GZIP_MAGIC:
            yield stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]
        else:
            yield raw


def triage_stream(
    stream: BinaryIO, titles: dict[str, str], progress: Any = None, remediations: dict[str, str] | None = None
) -> Report:
    from triton_sre.diagnosis.engine import Diagnoser
    from triton_sre.diagnosis.logparse import parse
    from triton_sre.diagnosis.scan import scan_lines

    diagnoser = Diagnoser(titles, remediations)
    for event in parse(scan_lines(stream, progress=progress)):
        diagnoser.feed(event)
    return diagnoser.finish()


def _triage_log(args: argparse.Namespace, catalog: Catalog) -> Report | None:
    from triton_sre.diagnosis.scan import LogInputError

    progress = _Progress(sys.stderr) if sys.stderr.isatty() else None
    if args.file == "-" and sys.stdin.isatty():
        _err("reading the log from stdin (end with Ctrl-D; or give a file, or pipe `docker logs` in)")
    try:
        with open_log(args.file) as stream:
            report = triage_stream(stream, catalog.titles, progress, catalog.remediations)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        _err(f"{args.file}: corrupt gzip data: {exc or 'unexpected end of file'}")
        return None
    except LogInputError as exc:
        _err(f"{args.file}: {exc}")
        return None
    except OSError as exc:
        _err(f"{args.file}: cannot read: {exc.strerror or exc}")
        return None
    finally:
        if progress is not None:
            progress.done()
    return report


def _triage_live(args: argparse.Namespace, catalog: Catalog) -> Report | None:
    from triton_sre.diagnosis.engine import diagnose_index
    from triton_sre.triton.client import FetchError, TritonClient, default_metrics_url

    client = TritonClient(args.triton_url, default_metrics_url(args.triton_url))
    try:
        index = client.repository_index()
    except FetchError as exc:
        _err(f"cannot read the repository index of {args.triton_url}: {exc}")
        return None
    return diagnose_index(index, catalog.titles, catalog.remediations)


def run_triage(args: argparse.Namespace) -> int:
    from triton_sre.diagnosis.catalog import CatalogError, load_catalog
    from triton_sre.diagnosis.render import to_json, to_markdown, to_text

    try:
        catalog = load_catalog(args.runbooks)
    except CatalogError as exc:
        _err(f"runbook catalog: {exc}")
        return c.EXIT_USAGE
    report = _triage_live(args, catalog) if args.triton_url else _triage_log(args, catalog)
    if report is None:
        return c.EXIT_USAGE
    out = sys.stdout
    if args.format == "json":
        json.dump(to_json(report, args.runbook_base_url), out, indent=2)
        out.write("\n")
    elif args.format == "markdown":
        out.write(to_markdown(report, args.runbook_base_url))
    else:
        out.write(to_text(report, args.runbook_base_url, colour=out.isatty()))
    out.flush()
    return c.EXIT_FAILURE if report.has_failure else c.EXIT_OK
