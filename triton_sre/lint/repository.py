"""Read a Triton model repository from disk into a `Repository` the checks inspect without I/O.

``config.pbtxt`` is parsed with protobuf ``text_format`` into Triton's own schema
(``tritonclient.grpc.model_config_pb2.ModelConfig``); a syntax error keeps its line and column.
Line numbers of fields come from protobuf's own text tokenizer (`field_lines`), never from regexes.

A config larger than `MAX_CONFIG_BYTES` is not read, and one nested deeper than
`MAX_CONFIG_DEPTH` is not parsed: both are parse errors at once, so lint's time and memory stay
bounded whatever the repository holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triton_sre.inputs import MAX_CONFIG_BYTES, InputFileError, read_bounded, what_is
from triton_sre.redact import shown_path

__all__ = [
    "CONFIG_FILE",
    "ConfigError",
    "ModelDir",
    "NotARepository",
    "Repository",
    "SchemaMissing",
    "field_lines",
    "load_repository",
]

CONFIG_FILE = "config.pbtxt"
MAX_CONFIG_DEPTH = 32
"""Deepest nesting of { } / < > / [ ] lint parses; Triton's schema needs fewer than 10 levels."""
MAX_LISTED_FILES = 2000
"""Files listed per version folder (a folder of thousands of shards is not walked further)."""


class NotARepository(ValueError):
    """The folder cannot be a model repository: it is empty, or it is one model's directory."""


class SchemaMissing(RuntimeError):
    """tritonclient (Triton's model-config schema) is not installed."""


def _schema() -> Any:
    try:
        from tritonclient.grpc import model_config_pb2
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise SchemaMissing(
            f"Triton's model-config schema is not importable ({exc}); pip install 'triton-sre[server]'"
        ) from None
    return model_config_pb2


@dataclass(frozen=True, slots=True)
class ConfigError:
    line: int
    column: int
    message: str
    unreadable: bool = False
    """The file could not be read at all (permissions), not a syntax problem."""


@dataclass(slots=True)
class ModelDir:
    """One model directory: its listing, its parsed config and where each config field is written."""

    name: str
    path: Path
    files: tuple[str, ...]
    """Top-level files (not directories) of the model directory."""
    dirs: tuple[str, ...]
    """Top-level directories of the model directory."""
    broken: tuple[tuple[str, str], ...] = ()
    """Top-level entries that cannot be read (name, why): a symlink loop."""
    version_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Every directory -> the names of the entries in it (files and folders)."""
    unlisted: dict[str, str] = field(default_factory=dict)
    """Folders that cannot be listed (permissions) -> why: "" for the model's own folder, else a
    folder in it; what is in them is unknown, not missing."""
    config_text: str | None = None
    config: Any = None
    """The `ModelConfig` message, or None (no config file, or unparsable)."""
    config_error: ConfigError | None = None
    lines: Mapping[str, list[int]] = field(default_factory=dict)
    """Dotted field path (``dynamic_batching.max_queue_delay_microseconds``) -> line of each occurrence."""

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def version_dirs(self) -> list[str]:
        return sorted((d for d in self.dirs if d.isdigit()), key=int)

    def line_of(self, *paths: str) -> int:
        """First line that writes one of ``paths`` (1 when none does: the file itself)."""
        for path in paths:
            found = self.lines.get(path)
            if found:
                return found[0]
        return 1


@dataclass(slots=True)
class Repository:
    root: Path
    models: dict[str, ModelDir]
    stray_files: tuple[str, ...] = ()
    """Files at the repository's top level (Triton ignores them)."""
    broken: tuple[tuple[str, str], ...] = ()
    """Top-level entries that cannot be read (name, why): a symlink loop."""


def field_lines(text: str) -> dict[str, list[int]]:
    """Dotted field path -> 1-based line of each occurrence, from protobuf's text tokenizer.

    A field inside ``input [ { ... } ]`` is ``input.name``; each element start of a repeated
    message is recorded under the field's own path.
    """
    from google.protobuf import text_format

    tokens: list[tuple[str, int]] = []
    tokenizer = text_format.Tokenizer(text.splitlines())
    try:
        while not tokenizer.AtEnd():
            tokens.append((tokenizer.token, tokenizer._line + 1))
            tokenizer.NextToken()
    except text_format.ParseError:
        pass  # the parse error itself is reported by the parser
    out: dict[str, list[int]] = {}
    path: list[str] = []  # names of the enclosing messages
    frames: list[tuple[str, str]] = []  # ("msg" | "list", field name)
    i = 0
    while i < len(tokens):
        token, line = tokens[i]
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if token in ("}", ">", "]"):
            if frames:
                kind, _name = frames.pop()
                if kind == "msg" and path:
                    path.pop()
        elif token in ("{", "<") and frames and frames[-1][0] == "list":
            name = frames[-1][1]  # an element of a repeated message
            frames.append(("msg", name))
            path.append(name)
            out.setdefault(".".join(path), []).append(line)
        elif (token[:1].isalpha() or token[:1] == "_") and nxt in (":", "{", "<", "["):
            j = i + 2 if nxt == ":" else i + 1
            opener = tokens[j][0] if j < len(tokens) else ""
            out.setdefault(".".join([*path, token]), []).append(line)
            if opener == "[":
                frames.append(("list", token))
                i = j + 1
                continue
            if opener in ("{", "<"):
                frames.append(("msg", token))
                path.append(token)
                i = j + 1
                continue
        i += 1
    return out


def _listing(path: Path, *, strict: bool = False) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Files, folders and unreadable entries (name, why: a symlink loop) of `path`; an unlistable
    folder is empty, or raises OSError when `strict`. One unreadable entry hides nothing else."""
    files: list[str] = []
    dirs: list[str] = []
    broken: list[tuple[str, str]] = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.name == "__pycache__":
                    continue  # written by the Python stub into the repository
                try:
                    is_dir = entry.is_dir()
                except OSError as exc:  # ELOOP: a symlink loop (ln -s b a; ln -s a b)
                    broken.append((entry.name, exc.strerror or str(exc)))
                    continue
                (dirs if is_dir else files).append(entry.name)
    except OSError:
        if strict:
            raise
    return sorted(files), sorted(dirs), sorted(broken)


# Brackets outside string literals and comments (a string may be unterminated: it ends the line).
_NESTING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"?|'(?:[^'\\\n]|\\.)*'?|#[^\n]*|[{<\[]|[}>\]]")


def nesting_error(text: str) -> ConfigError | None:
    """A ConfigError at the first bracket nested deeper than MAX_CONFIG_DEPTH, else None (one regex pass)."""
    depth = 0
    for match in _NESTING.finditer(text):
        char = match.group()[0]
        if char in "{<[":
            depth += 1
            if depth > MAX_CONFIG_DEPTH:
                at = match.start()
                line = text.count("\n", 0, at) + 1
                return ConfigError(
                    line, at - text.rfind("\n", 0, at), f"nested deeper than {MAX_CONFIG_DEPTH} levels"
                )
        elif char in "}>]":
            depth = max(0, depth - 1)
    return None


def parse_config(text: str) -> tuple[Any, ConfigError | None]:
    from google.protobuf import text_format

    schema = _schema()
    message = schema.ModelConfig()
    too_deep = nesting_error(text)
    if too_deep is not None:
        return None, too_deep
    try:
        text_format.Parse(text, message)
    except RecursionError:
        return None, ConfigError(1, 1, "nested too deeply to parse")
    except text_format.ParseError as exc:
        line, column = exc.GetLine() or 1, exc.GetColumn() or 1
        text_ = str(exc)
        prefix = f"{exc.GetLine()}:{exc.GetColumn()} : "
        if text_.startswith(prefix):
            text_ = text_[len(prefix) :]
        return None, ConfigError(line, column, text_)
    return message, None


def load_model(path: Path) -> ModelDir:
    try:
        files, dirs, broken = _listing(path, strict=True)
    except OSError as exc:  # a folder Triton cannot list either: not "no version folder"
        model = ModelDir(name=path.name, path=path, files=(), dirs=(), broken=())
        model.unlisted[""] = exc.strerror or str(exc)
        reason = f"cannot be read: its model folder cannot be listed ({model.unlisted['']})"
        model.config_error = ConfigError(1, 0, reason, unreadable=True)
        return model
    model = ModelDir(name=path.name, path=path, files=tuple(files), dirs=tuple(dirs), broken=tuple(broken))
    for d in dirs:
        try:
            sub_files, sub_dirs, _ = _listing(path / d, strict=True)
        except OSError as exc:
            model.unlisted[d] = exc.strerror or str(exc)
            continue
        model.version_files[d] = tuple(sorted(sub_files + sub_dirs))[:MAX_LISTED_FILES]
    if CONFIG_FILE in files:
        try:
            text = read_config(model.config_path)
        except PermissionError as exc:
            model.config_error = ConfigError(1, 0, f"cannot read: {exc.strerror}", unreadable=True)
            return model
        except (OSError, UnicodeDecodeError) as exc:
            model.config_error = ConfigError(1, 0, f"cannot read: {exc}")
            return model
        model.config_text = text
        model.config, model.config_error = parse_config(text)
        if model.config_error is None or not model.config_error.message.startswith("nested"):
            model.lines = field_lines(text)
    return model


def read_config(path: Path) -> str:
    """The text of a config.pbtxt; OSError when it is not a regular file or over MAX_CONFIG_BYTES
    (checked before reading, and the read itself is capped in case the file grows)."""
    try:
        return read_bounded(path, MAX_CONFIG_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise OSError(f"{CONFIG_FILE}: {exc}") from None


def load_repository(root: str | os.PathLike[str]) -> Repository:
    """Walk ``root`` (a local model repository).

    Raises `NotADirectoryError` (missing, unlistable), `NotARepository`, `SchemaMissing`."""
    base = Path(root)
    try:
        is_dir = base.is_dir()
    except OSError as exc:  # a name too long (ENAMETOOLONG): str(exc) quoted all of it
        raise NotADirectoryError(f"{shown_path(root)}: {exc.strerror or exc}") from None
    if not is_dir:  # say what it is instead: a loop, a FIFO and a missing path read alike before
        raise NotADirectoryError(f"{shown_path(root)}: not a directory: {what_is(base)}")
    _schema()
    try:
        files, dirs, broken = _listing(base, strict=True)
    except OSError as exc:
        raise NotADirectoryError(
            f"{shown_path(root)}: cannot list the repository: {exc.strerror or exc}"
        ) from None
    if CONFIG_FILE in files and not any((base / d / CONFIG_FILE).is_file() for d in dirs):
        raise NotARepository(
            f"{root}: this is one model's directory (it holds {CONFIG_FILE}), not a model repository; "
            f"lint the folder that holds it: {base.resolve().parent}"
        )
    models = {d: load_model(base / d) for d in dirs if not d.startswith(".")}
    if not models and not any(not f.startswith(".") for f in files):
        raise NotARepository(
            f"{root}: the folder is empty: no model to check (a model repository holds one folder per model)"
        )
    return Repository(
        root=base,
        models=models,
        stray_files=tuple(f for f in files if not f.startswith(".")),
        broken=tuple(broken),
    )
