"""The `triton-sre` command: argument parsing and dispatch only.

Exit codes (all commands): 0 success, 1 the work failed (e.g. a component did not start),
2 usage, configuration or input error, or an output that cannot be written (a full disk, a path
under a regular file), 130 interrupted by Ctrl-C (SIGINT) before the work was done, 141 the reader
of stdout went away (`| head`; nothing printed). The services (export, bot, demo) take SIGINT,
SIGTERM and SIGHUP as their normal stop, log which one stopped them, and exit 0.

`main` is the one place where errors become messages: every stderr line and log record passes
through `redact`, and no traceback reaches a user (`--log-level debug` logs it).
"""

from __future__ import annotations

import argparse
import errno
import importlib
import io
import logging
import os
import socket
import sys
import traceback
from collections.abc import Sequence
from typing import IO

from triton_sre import __version__
from triton_sre import conventions as c
from triton_sre.shutdown import stop_on_signals, stopping_early, wait_until_set

EXIT_CODES_HELP = (
    "exit codes: 0 success, 1 failure while running, 2 usage/configuration/input/output error, "
    "130 interrupted (Ctrl-C), 141 stdout closed by its reader; export, bot and demo stop on "
    "SIGINT, SIGTERM or SIGHUP with 0"
)
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_LEVEL_FLAG = "--log-level"  # the one option of the main parser that takes a value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 already; keep its message format
        self.print_usage(sys.stderr)
        self.exit(c.EXIT_USAGE, f"{self.prog}: error: {message}\n")

    def _print_message(self, message: str, file: IO[str] | None = None) -> None:
        """argparse drops a write that fails: `triton-sre --help > /dev/full` exited 0, nothing shown.
        `--help` and `--version` fail now as any output to stdout does: 2 naming it, 141 for a closed pipe."""
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            stream.flush()
        except OSError as exc:
            if stream is sys.stderr:
                return  # a usage message nobody can read: its exit code still tells
            _silence_stdout()
            if isinstance(exc, BrokenPipeError):
                raise SystemExit(c.EXIT_BROKEN_PIPE) from None
            print(f"{self.prog}: cannot write (standard output): {exc.strerror or exc}", file=sys.stderr)
            raise SystemExit(c.EXIT_USAGE) from None


PROG = "triton-sre"  # the command's name, which begins each of its messages on stderr


# Each command's module and the function that adds its parser, in the order `--help` lists them (after
# `export`, whose parser is written above).
COMMAND_PARSERS: dict[str, tuple[str, str]] = {
    "demo": ("triton_sre.demo.command", "add_demo_parser"),
    "generate": ("triton_sre.generate.command", "add_generate_parser"),
    "triage": ("triton_sre.diagnosis.command", "add_triage_parser"),
    "bot": ("triton_sre.bot.command", "add_bot_parser"),
    "lint": ("triton_sre.lint.command", "add_lint_parser"),
    "report": ("triton_sre.report.command", "add_report_parser"),
    "rollout": ("triton_sre.rollout.check", "add_rollout_parser"),
    "stack": ("triton_sre.stack.command", "add_stack_parser"),
    "doctor": ("triton_sre.doctor.command", "add_doctor_parser"),
    "gameday": ("triton_sre.gameday.command", "add_gameday_parser"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` (a command `command_named` found), that command's parser and
    no other: the other commands' modules are not imported (0.2 s of every run's start-up)."""
    parser = _Parser(
        prog=PROG,
        description="Observability and SRE companion for NVIDIA Triton Inference Server.",
        epilog=EXIT_CODES_HELP,
    )
    parser.add_argument("--version", action="version", version=f"triton-sre {__version__}")
    parser.add_argument(
        LOG_LEVEL_FLAG,
        default=os.environ.get(c.ENV_LOG_LEVEL, "").strip().lower() or "info",
        choices=LOG_LEVELS,
        help=f"log verbosity on stderr (${c.ENV_LOG_LEVEL}; default: info)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    export = commands.add_parser(
        "export",
        help="run the exporter sidecar next to a Triton server",
        description=(
            "Poll Triton's metrics, repository index, statistics and model configs on a fixed interval "
            "and serve derived metrics (batching ratio, stage split, cost, model state) on /metrics, "
            "with /healthz and /readyz. Each flag can also be set by the environment variable shown."
        ),
        epilog=EXIT_CODES_HELP,
    )
    export.add_argument(
        "--triton-url", help=f"Triton HTTP endpoint (${c.ENV_TRITON_URL}; default {c.DEFAULT_TRITON_URL})"
    )
    export.add_argument(
        "--metrics-url",
        help=(
            f"Triton metrics endpoint (${c.ENV_METRICS_URL}; "
            f"default same host, port {c.TRITON_METRICS_PORT}, /metrics)"
        ),
    )
    export.add_argument(
        "--listen", help=f"HOST:PORT to serve on (${c.ENV_LISTEN}; default {c.DEFAULT_LISTEN})"
    )
    export.add_argument(
        "--interval",
        type=float,
        help=f"seconds between polls of Triton (${c.ENV_INTERVAL}; default {c.DEFAULT_INTERVAL_SECONDS:g})",
    )
    export.add_argument(
        "--window",
        type=float,
        help=(
            f"seconds of history the derived values cover (${c.ENV_WINDOW}; "
            f"default {c.DEFAULT_WINDOW_SECONDS:g})"
        ),
    )
    from triton_sre.checks import path_text_arg

    export.add_argument(
        "--config",
        type=path_text_arg,
        help=f"YAML config file: pricing and exporter settings (${c.ENV_CONFIG})",
    )
    export.set_defaults(handler=_cmd_export)

    for name, (module, adder) in COMMAND_PARSERS.items():
        if only is None or name == only:
            getattr(importlib.import_module(module), adder)(commands, EXIT_CODES_HELP)
    _check_endpoints(parser)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` runs, where nothing before it needs the other commands' parsers: only
    ``--log-level`` (whole, abbreviated or with ``=``) in front of it. None (build them all) for
    anything else (``--help``, ``--version``, an unknown word, no command): what argparse prints
    then lists every command."""
    words = iter(argv)
    for word in words:
        if word == "--":
            word = next(words, "")
        elif word.startswith("-"):
            flag, has_value, _ = word.partition("=")
            if len(flag) < 3 or not LOG_LEVEL_FLAG.startswith(flag):
                return None
            if not has_value and next(words, "-").startswith("-"):
                return None
            continue
        return word if word in COMMAND_PARSERS or word == "export" else None
    return None


def _check_endpoints(parser: argparse.ArgumentParser) -> None:
    """Every endpoint flag of every command (``--*-url``, ``--prometheus``) is parsed by the one
    `checks.url_arg`: ``http://[::1`` is a usage error by name, not a ValueError deep in requests.
    Runbook bases are link prefixes (a repository path will do) and keep their own type."""
    from triton_sre.checks import full_url_arg, url_arg

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                _check_endpoints(sub)
        elif action.type is None and any(
            (flag.endswith("-url") and "runbook" not in flag) or flag == "--prometheus"
            for flag in action.option_strings
        ):
            action.type = full_url_arg if _WHOLE_URL_FLAG in action.option_strings else url_arg


_WHOLE_URL_FLAG = "--metrics-url"  # the exporter reads Triton's metrics at this URL as given, no path added


def _cmd_export(args: argparse.Namespace) -> int:
    from triton_sre.checks import ConfigError
    from triton_sre.config import resolve_settings
    from triton_sre.exporter.heap import keep_heap
    from triton_sre.exporter.service import Exporter, ExporterServer
    from triton_sre.httpserve import listening_on

    settings = resolve_settings(vars(args))
    host, port = settings.listen_address
    try:
        keep_heap()  # the sidecar's process: a poll's freed buffers are reused by the next
        server = ExporterServer(Exporter(settings), host, port)
    except socket.gaierror as exc:  # the flag's host does not resolve: the input, not the machine (exit 2)
        reason = exc.strerror or exc
        raise ConfigError(f"--listen {settings.listen}: its host does not resolve ({reason})") from None
    except OSError as exc:
        print(
            f"triton-sre export: cannot listen on {settings.listen}: {exc.strerror or exc}", file=sys.stderr
        )
        return c.EXIT_FAILURE
    stop = stop_on_signals()
    bound = listening_on(host, server.port)  # --listen HOST:0: the port the OS chose
    logging.getLogger("triton_sre").info(
        "exporting %s (metrics %s) on %s every %gs, window %gs",
        settings.triton_url,
        settings.resolved_metrics_url,
        bound,
        settings.interval,
        settings.window,
    )
    with server:
        wait_until_set(stop)
    logging.getLogger("triton_sre").info("exporter stopped by %s", stop.by)
    return c.EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    from triton_sre.jsonerror import json_requested
    from triton_sre.redact import RedactingStream

    _closed_standard_streams()
    _lenient_output()
    if not isinstance(sys.stderr, RedactingStream):
        sys.stderr = RedactingStream(sys.stderr)  # type: ignore[assignment]  # prints and logs alike
    args = sys.argv[1:] if argv is None else list(argv)
    with stopping_early(args):  # a service's stop signals count from here, not once its parser is built
        return _main_json(args) if json_requested(args) else _main(args, sys.stderr)


def _main_json(args: list[str]) -> int:
    from triton_sre.jsonerror import JsonErrors

    log_stream = sys.stderr
    # --format json: a failure that wrote no JSON still gets one object on stdout (jsonerror.py)
    watch = JsonErrors(sys.stdout, sys.stderr, PROG)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = watch.stdout, watch.stderr  # type: ignore[assignment]
    code: int = c.EXIT_USAGE
    last: str | None = None  # the line Python prints for what escapes, after main has returned
    try:
        code = _main(args, log_stream)
        return code
    except SystemExit as exc:  # argparse: a usage error (2), --help or --version (0); sys.exit(...)
        if isinstance(exc.code, int) or exc.code is None:
            code = exc.code or c.EXIT_OK
        else:  # Python prints the object and exits 1
            code, last = c.EXIT_FAILURE, str(exc.code)
        raise
    except BaseException as exc:  # a traceback follows: Python exits 1 (130 for Ctrl-C)
        code = c.EXIT_INTERRUPTED if isinstance(exc, KeyboardInterrupt) else c.EXIT_FAILURE
        last = traceback.format_exception_only(exc)[-1]
        raise
    finally:
        sys.stdout, sys.stderr = saved
        try:
            watch.finish(code, c.EXIT_BROKEN_PIPE, last)
        except OSError:  # stdout cannot take the object either (a full disk, a closed pipe)
            _silence_stdout()


def _main(argv: Sequence[str], log_stream: object) -> int:
    from triton_sre.redact import bounded, install_redaction, one_line, redact, shown_path

    parser = build_parser(command_named(argv))
    args = parser.parse_args(argv)
    if args.log_level not in LOG_LEVELS:  # argparse checks the flag's choices, not its default
        choices = ", ".join(LOG_LEVELS)
        parser.error(f"${c.ENV_LOG_LEVEL}: expected one of {choices}, got {bounded(args.log_level)}")
    logging.basicConfig(
        level=args.log_level.upper(),
        stream=log_stream,  # type: ignore[arg-type]  # log records are not a --format json error
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    install_redaction()  # no query string or credential in any log line, at any level
    name = f"triton-sre {args.command}"
    try:
        code = _dispatch(args)
        sys.stdout.flush()  # a full disk shows here, inside the handling below
        return code
    except BrokenPipeError:
        _silence_stdout()
        return c.EXIT_BROKEN_PIPE
    except OSError as exc:  # a write (or read) the command did not expect to fail: ENOSPC, EROFS...
        if not exc.filename:  # stdout itself failed; a named file's error leaves stdout usable
            _silence_stdout()
        where = f": {shown_path(exc.filename)}" if exc.filename else " (standard output)"
        print(f"{name}: cannot write{where}: {exc.strerror or exc}", file=sys.stderr)
        return c.EXIT_USAGE
    except Exception as exc:  # a bug: say what, keep the traceback for --log-level debug
        logging.getLogger("triton_sre").debug("unexpected error", exc_info=True)
        reason = one_line(redact(str(exc)), 300)  # numpy's ImportError under `ulimit -v` spans 3 lines
        print(f"{name}: internal error: {type(exc).__name__}: {reason}", file=sys.stderr)
        return c.EXIT_USAGE


_DEFAULT_HANDLERS = ("strict", "surrogateescape", "backslashreplace")  # stdout's; stderr's is the last


def _lenient_output() -> None:
    """A character the terminal's encoding cannot show (`PYTHONIOENCODING=ascii`, a Latin-1 locale:
    a model name with `é`, an evidence line with `—`) is written as its escape (`\\u2014`), not an
    `internal error: UnicodeEncodeError` after half the output. Python gives stdout
    `surrogateescape` instead of `strict` under the C locale without its UTF-8 mode (`LC_ALL=C
    PYTHONUTF8=0`: ASCII), which fails on `é` just the same."""
    from triton_sre.redact import BYTES_AS_ESCAPES

    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors in _DEFAULT_HANDLERS:
            stream.reconfigure(errors=BYTES_AS_ESCAPES)  # `\\u2014`; a file name's byte `\\xff`


class _ClosedStdout(io.TextIOBase):
    """Standard output the caller closed (`>&-`): Python leaves `sys.stdout` None, so the first
    print was `internal error: AttributeError: 'NoneType' object has no attribute 'write'`. Every
    write fails as writing to a closed descriptor does (EBADF), which `_main` reports as `cannot
    write (standard output): Bad file descriptor`, exit 2 (GNU tools alike); a command that writes
    nothing there (a service) runs as usual. Its descriptor is /dev/null (`_closed_standard_streams`)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, os.strerror(errno.EBADF))

    def fileno(self) -> int:
        return 1


def _closed_standard_streams() -> None:
    """Descriptors 0, 1 and 2 the caller closed (`<&-`, `>&-`, `2>&-`) are opened on /dev/null, so a
    file the command opens never takes one (a child such as Prometheus would write its output into
    it). Python set the stream None: stdin stays None (read as closed, `triage -` says so), stdout
    refuses writes (`_ClosedStdout`), stderr's messages are discarded: the exit code still tells
    (it was 120, Python's own, after an `AttributeError` nothing could print)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: `fd` itself
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115  # /dev/null now, for the process's life


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file descriptor (a test's StringIO)
        pass


def _dispatch(args: argparse.Namespace) -> int:
    from triton_sre.checks import ConfigError
    from triton_sre.extras import (
        COMMAND_EXTRAS,
        command_key,
        is_optional,
        missing_extra_message,
        missing_modules,
    )

    key = command_key(args.command, getattr(args, "stack_command", None))
    missing = missing_modules(key)
    if missing:
        print(missing_extra_message(key, missing), file=sys.stderr)
        return c.EXIT_USAGE
    try:
        return int(args.handler(args))
    except ModuleNotFoundError as exc:
        if key not in COMMAND_EXTRAS or not is_optional(exc.name):
            raise
        print(missing_extra_message(key, [str(exc.name)]), file=sys.stderr)
        return c.EXIT_USAGE
    except ConfigError as exc:
        print(f"triton-sre {args.command}: configuration error: {exc}", file=sys.stderr)
        return c.EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl-C: the work is unfinished, so neither 0 nor a finding's 1
        print(f"triton-sre {args.command}: interrupted", file=sys.stderr)
        return c.EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
