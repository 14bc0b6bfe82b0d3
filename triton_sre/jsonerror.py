"""Leaf: `--format json` stays JSON on error paths.

A command asked for JSON that fails before writing any (a usage error, a file it cannot read, a
server that does not answer, Ctrl-C) writes its one-line message to stderr as always, and on stdout
one object, ``{"error": MESSAGE, "exit_code": N}``, so a script piping stdout into a JSON parser reads
why instead of failing on an empty input. `cli.main` watches stdout and stderr for the run
(`JsonErrors`); nothing changes when the command wrote to stdout, or when stdout went away (141).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from triton_sre.redact import redact

__all__ = ["JsonErrors", "json_requested"]

MAX_MESSAGE_CHARS = 2000


def json_requested(argv: Sequence[str]) -> bool:
    """`--format json` among the arguments, before argparse has read them, read as argparse reads them:
    `--format=json`, an abbreviation (`--fo json`, `--form=json`: argparse takes any prefix of an
    option), the last one given winning."""
    args = list(argv)
    chosen = None
    for i, arg in enumerate(args):
        if arg == "--":
            break
        name, equals, value = arg.partition("=")
        if len(name) < 3 or not name.startswith("--") or not _FORMAT_FLAG.startswith(name):
            continue
        chosen = value if equals else (args[i + 1] if i + 1 < len(args) else None)
    return chosen == "json"


_FORMAT_FLAG = "--format"


class _Watched:
    """A text stream that remembers whether anything was written to it, and keeps the last lines."""

    def __init__(self, stream: TextIO, keep: bool = False) -> None:
        self._stream = stream
        self._keep = keep
        self.written = False
        self.text = ""

    def write(self, text: str) -> int:
        if text:
            self.written = True
            if self._keep:  # redacted before it is cut: a cut credential (`ssword=...`) is not found
                self.text = redact(self.text + text, queries=False)[-MAX_MESSAGE_CHARS:]
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class JsonErrors:
    """Wraps a run's stdout and stderr; `finish(code)` writes the error object when it is due."""

    def __init__(self, stdout: TextIO, stderr: TextIO, prog: str = "") -> None:
        self.stdout = _Watched(stdout)
        self.stderr = _Watched(stderr, keep=True)
        self.prog = prog

    def message(self, last: str | None = None) -> str:
        """The last line written to stderr that begins with the program's name (a message may carry
        lines under it: `stack up`'s log tail), else its last line; or `last` (a line still to be
        written: an escaping exception's)."""
        text = self.stderr.text if last is None else last
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        own = [line for line in lines if self.prog and line.startswith(self.prog)]
        found = own or lines
        return redact(found[-1], queries=False) if found else ""

    def due(self, code: int, broken_pipe: int) -> bool:
        return code not in (0, broken_pipe) and not self.stdout.written

    def finish(self, code: int, broken_pipe: int, last: str | None = None) -> None:
        if self.due(code, broken_pipe):
            self.stdout.write(json.dumps({"error": self.message(last), "exit_code": code}) + "\n")
            self.stdout.flush()
