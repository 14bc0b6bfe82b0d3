"""Reading a user's file safely: a regular file under a size limit, checked before reading.

A leaf (standard library and PyYAML). The SLO spec, the exporter's and the bot's config files, lint's
config.pbtxt and model.py files go through `read_bounded`: a FIFO does not hang (opened without
waiting for a writer, then refused), a directory, a dangling link or a device such as /dev/zero
is refused with its kind named, and a file over the limit is refused before it is read (and the
read itself stops at the limit, in case the file grows). Logs are streamed instead (diagnosis/api).
The SLO spec is also read from a pipe (`read_once`: ``--spec /dev/stdin``, ``--spec <(cat slos.yaml)``, a
named FIFO) under the same limit, waiting at most `PIPE_WAIT_S` for its writer, once per process.
`load_yaml` loads such a file's YAML safely and refuses aliases and deep nesting.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import time
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_SOURCE_BYTES",
    "MAX_SPEC_BYTES",
    "MAX_YAML_DEPTH",
    "InputFileError",
    "load_yaml",
    "not_regular",
    "read_bounded",
    "read_once",
    "stdin_alias",
    "unpiped",
]

MAX_SPEC_BYTES = 4 << 20
"""An SLO spec: thousands of SLOs fit in well under a megabyte."""
MAX_CONFIG_BYTES = 1 << 20
"""A config file (exporter, bot, a model's config.pbtxt): kilobytes in practice."""
MAX_SOURCE_BYTES = 8 << 20
"""A model's Python source."""
PIPE_WAIT_S = 10.0
"""How long a file read from a pipe waits for its writer to write it all (a named FIFO nobody opens)."""
MAX_YAML_DEPTH = 64
"""Nesting levels of a user's YAML document: the SLO spec needs five; PyYAML composes recursively,
so `[[[[...]]]]` 50,000 deep was a RecursionError (an internal error) after seconds."""


class InputFileError(OSError):
    """The file is not a regular file, is too large, or cannot be opened; the message says which."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def what_is(path: str | os.PathLike[str]) -> str:
    """What `path` is, for a message saying why it is not what was asked for: `a regular file`, `a FIFO
    (named pipe)`, `a symbolic link loop`, `a dangling symbolic link`, `nothing there`..."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a dangling symbolic link" if os.path.islink(path) else "nothing there"
    except OSError as exc:
        return "a symbolic link loop" if exc.errno == errno.ELOOP else (exc.strerror or str(exc))
    return "a regular file" if stat.S_ISREG(mode) else _kind(mode)


def not_regular(path: str | os.PathLike[str]) -> str | None:
    """What an existing path is when it is not a regular file (`a FIFO (named pipe), not a regular
    file`), without opening it (opening a FIFO waits for a writer); None for a regular file or a
    path that does not exist (yet)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else f"{_kind(mode)}, not a regular file"


def read_bounded(path: str | os.PathLike[str], max_bytes: int, pipe: bool = False) -> bytes:
    """The bytes of a regular file (with ``pipe``, or a pipe's) of at most `max_bytes`; InputFileError (an
    OSError whose message names the problem, without the path: callers name the file) otherwise."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is then refused as not regular)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if isinstance(exc, FileNotFoundError) and Path(path).is_symlink():
            raise InputFileError("a dangling symbolic link (its target does not exist)") from None
        raise InputFileError(f"cannot open: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    too_large = f"larger than {max_bytes} bytes"
    if pipe and stat.S_ISFIFO(info.st_mode):
        return _read_pipe(fd, max_bytes, too_large)
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputFileError(f"{_kind(info.st_mode)}, not a regular file")
        raise InputFileError(f"{info.st_size} bytes, {too_large}")
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputFileError(too_large)
    return data


def _read_pipe(fd: int, max_bytes: int, too_large: str) -> bytes:
    """Everything written to a pipe (``fd``, opened without waiting) until its writer closes it: at most
    `max_bytes`, within `PIPE_WAIT_S`; closes ``fd``."""
    deadline = time.monotonic() + PIPE_WAIT_S
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise InputFileError(
                    f"a pipe or FIFO (named pipe) whose writer did not finish within {PIPE_WAIT_S:g} s"
                )
            try:
                chunk = os.read(fd, min(1 << 16, max_bytes + 1 - size))
            except BlockingIOError:  # woken, but nothing to read yet
                continue
            if not chunk:  # the writer closed it (a named FIFO with no writer waits above)
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise InputFileError(too_large)
    finally:
        os.close(fd)


_PIPED: dict[tuple[int, int], bytes] = {}
"""A pipe's bytes by its (device, inode): a pipe is read once, and a command reading the file again gets
them again."""


def read_once(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """`read_bounded` of a regular file or a pipe; a pipe read earlier in this process gives the same bytes
    again, without reading it."""
    try:
        info = os.stat(path)
    except OSError:
        info = None
    key = (info.st_dev, info.st_ino) if info is not None and stat.S_ISFIFO(info.st_mode) else None
    if key is not None and key in _PIPED:
        return _PIPED[key]
    data = read_bounded(path, max_bytes, pipe=True)
    if key is not None:
        _PIPED[key] = data
    return data


def stdin_alias(path: str | os.PathLike[str]) -> Path:
    """``-`` names standard input, as ``triage -`` reads it: ``/dev/stdin``, so a pipe and a redirected file
    read as they would by that name (a pipe once, by `read_once`); any other path unchanged."""
    return Path("/dev/stdin") if os.fspath(path) == "-" else Path(path)


def unpiped(path: Path, folder: Path, max_bytes: int) -> Path:
    """``path`` when it is a file of its own; a file behind a descriptor's name (``-``, ``/dev/stdin``) by
    its own name; else (a pipe) a file in ``folder`` holding its bytes (`read_once`), for the child
    processes that read the file after this one (a pipe read once is empty to them, and their
    standard input is not this one's)."""
    path = stdin_alias(path)
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        if path.absolute().parts[1:2] in (("dev",), ("proc",)):
            return Path(os.path.realpath(path))
        return path
    copy = folder / f"{path.name}.from-pipe.yaml"
    copy.write_bytes(read_once(path, max_bytes))
    return copy


class _NoAliasLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses aliases: a 525-byte "billion laughs" document is refused at
    its first alias instead of expanding (in a repr, a walk, an error message) to gigabytes. It also
    refuses a key given twice in one mapping (`objective: 99.9` then `objective: 50`), which PyYAML
    would silently resolve to the last value."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            first_line: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<:`, resolved by SafeLoader
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    if key in first_line:
                        shown = repr(key) if len(repr(key)) <= 60 else repr(key)[:57] + "..."
                        raise yaml.constructor.ConstructorError(
                            None,
                            None,
                            f"duplicate key {shown} (first at line {first_line[key]})",
                            key_node.start_mark,
                        )
                    first_line[key] = key_node.start_mark.line + 1
                except TypeError:  # an unhashable key: SafeLoader's own error follows
                    continue
        return super().construct_mapping(node, deep=deep)

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases (*name) are not accepted here: write the value out", mark
            )
        depth = getattr(self, "_depth", 0)
        if depth >= MAX_YAML_DEPTH:
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(
                None, None, f"the document is nested more than {MAX_YAML_DEPTH} levels deep", mark
            )
        self._depth = depth + 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth = depth


def load_yaml(text: str) -> Any:
    """The document of a user's YAML file: loaded safely, aliases, repeated keys and nesting past
    `MAX_YAML_DEPTH` refused (yaml.YAMLError)."""
    return yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader subclass


def yaml_problem(exc: yaml.YAMLError) -> str:
    """One line for a YAML error: `invalid YAML at line L, column C: <problem>`, without the
    multi-line excerpt of the document PyYAML's own text carries."""
    mark = getattr(exc, "problem_mark", None)
    at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = " ".join(str(getattr(exc, "problem", None) or "").split())
    return f"invalid YAML{at}: {problem or type(exc).__name__}"
