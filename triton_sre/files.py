"""Files rendered in memory -> a directory: which are stale, and writing only those, atomically.

`triton-sre generate` (and its `--check`) and `stack up` use it: the same content never rewrites
a file, and a reader never sees a half-written one (temp file in the same folder + rename); a write
that fails (a full disk) leaves no temp file and names the file it was writing.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def stale_files(files: dict[str, str], out: Path) -> list[str]:
    """The relative paths whose file under `out` is missing or differs from `files`."""
    stale = []
    for rel, content in files.items():
        path = out / rel
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != content:
            stale.append(rel)
    return stale


def write_atomic(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """`data` into `path` through a temp file in the same folder and a rename: a reader (and a
    failed write, e.g. a full disk) sees the old file or the new one, never half of one. A write that
    fails leaves no temp file and raises an OSError naming `path`. The file gets `mode`; without it,
    the permissions a write in place gives (`Path.write_text`): the replaced file's, else those the
    umask leaves (a report written under `umask 077` stays private)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    except OSError as exc:  # a folder that cannot be written: its error names the temp file
        raise _naming(exc, path) from exc
    try:
        if mode is None:
            mode = _mode_in_place(path)
        if isinstance(data, bytes):
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:  # a full disk: no half-written temp file left, and the error names the file
        Path(tmp).unlink(missing_ok=True)
        if exc.filename in (None, tmp):  # not the temp file's name, which is gone
            raise _naming(exc, path) from exc
        raise


def _naming(exc: OSError, path: Path) -> OSError:
    """`exc` (of the same class: PermissionError, IsADirectoryError, ...) naming `path`."""
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def _mode_in_place(path: Path) -> int:
    """The permission bits `path` would keep or get if it were written in place."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0o022)  # read it (a process-wide setting: no other way to read it portably)
        os.umask(umask)
        return 0o666 & ~umask


def write_files(files: dict[str, str], out: Path) -> list[Path]:
    """Write atomically (`write_atomic`), skipping files whose content is already right."""
    written = []
    for rel in stale_files(files, out):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, files[rel], mode=0o644)
        written.append(path)
    return written
