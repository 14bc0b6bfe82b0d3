"""Files rendered in memory -> a directory: which are stale, and writing only those, atomically.

`triton-sre generate` (and its `--check`) and `stack up` use it: the same content never rewrites
a file, and a reader never sees a half-written one (temp file in the same folder + rename); a write
that fails (a full disk) leaves no temp file and names the file it was writing.

A process killed outright (SIGKILL, the OOM killer, a lost machine) cannot remove its temp files. Each temp
file (of a `StagedFiles`, and of `write_atomic`: the report, `stack up`'s state and configs, the ready file)
is ``.<name>.<8 random>.tmp`` beside ``<name>`` and holds an exclusive `flock` from its creation to its
rename, which the kernel drops when the process ends however it ends; every run removes, in the folders of
the files it renders, the temp files of those files that no live process holds (`sweep_leftovers`), and
every `write_atomic` those of the file it wrote. Without `flock` (not POSIX), or for a temp file of an older
release (no ``.tmp``), the sign is age instead: older than `LEFTOVER_AGE`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Final, TextIO

try:
    import fcntl
except ImportError:  # not POSIX: leftovers are told by their age alone
    fcntl = None  # type: ignore[assignment]

from triton_sre.inputs import not_regular


def stale_files(files: dict[str, str], out: Path) -> list[str]:
    """The relative paths whose file under `out` is missing or differs from `files`."""
    stale = []
    for rel, content in files.items():
        path = out / rel
        try:
            with _open_regular(path) as f:
                current = f.read() if f is not None else None
        except (OSError, ValueError):  # unreadable, or not UTF-8: stale
            current = None
        if current != content:
            stale.append(rel)
    return stale


def _open_regular(path: Path) -> TextIO | contextlib.nullcontext[None]:
    """`path` opened to read as `Path.read_text` reads it, or a null context when it is missing,
    unreadable or not a regular file: a FIFO put where a generated file goes would hold the open until
    a writer came (`generate --check` waited for ever), a device such as /dev/zero would never end.
    Opened without waiting (O_NONBLOCK) and judged on the descriptor, so a file swapped for a FIFO
    between a look and the open is caught too. The caller counts such a file as stale; writing
    replaces it with the rendered file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return contextlib.nullcontext()
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return contextlib.nullcontext()
    return os.fdopen(fd, encoding="utf-8")


def write_atomic(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """`data` into `path` through a temp file in the same folder and a rename: a reader (and a
    failed write, e.g. a full disk) sees the old file or the new one, never half of one. A write that
    fails leaves no temp file and raises an OSError naming `path`. The file gets `mode`; without it,
    the permissions a write in place gives (`Path.write_text`): the replaced file's, else those the
    umask leaves (a report written under `umask 077` stays private). Once written, the temp files of
    `path` that a killed writer left are removed (`sweep_leftovers`: the temp file is held by a `flock`
    while in use, as a `StagedFiles` one)."""
    _write_atomic(path, data, mode)
    sweep_leftovers(path.parent, [path.name])


def _write_atomic(path: Path, data: str | bytes, mode: int | None) -> None:
    """`write_atomic` without the sweep."""
    fd, tmp, lock = _locked_temp(path)
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
    except BaseException:  # Ctrl-C, or SIGTERM under `shutdown.unwinding_on_stop`: no temp file left either
        Path(tmp).unlink(missing_ok=True)
        raise
    finally:
        if lock is not None:
            os.close(lock)


def _locked_temp(path: Path) -> tuple[int, str, int | None]:
    """A new temp file for `path` (``.<name>.<8 random>.tmp`` beside it): its descriptor, its name and the
    descriptor holding its exclusive `flock` (None without one), which the caller closes once the temp file
    is renamed or removed. A folder that cannot be written raises an OSError naming `path`."""
    while True:
        try:
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
        except OSError as exc:  # its error names the temp file
            raise _naming(exc, path) from exc
        try:
            lock = _hold(fd)
        except BlockingIOError:  # a sweeper took it before this could: it is going, make another
            os.close(fd)
            continue
        if _is_file(temp, fd):
            return fd, temp, lock
        os.close(fd)  # swept between its creation and the lock
        if lock is not None:
            os.close(lock)


def _is_file(path: str, fd: int) -> bool:
    """Whether ``path`` is still the file open as ``fd`` (a sweeper may have removed it before its lock)."""
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except OSError:
        return False


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


def make_dirs(path: Path) -> None:
    """`path` made as a folder with its parents. When something that is not a folder is in the way,
    the error names it and says what it is: `mkdir` says `File exists` alike for a dangling symbolic
    link, a link loop, a FIFO and a file (`report --out dangling`: `cannot write to dangling: File
    exists`); now `cannot write: dangling: Not a directory, but a symbolic link to /gone, which does not
    exist`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        culprit = _in_the_way(path)
        if culprit is None:
            raise
        where, what = culprit
        raise OSError(errno.ENOTDIR, f"{os.strerror(errno.ENOTDIR)}, but {what}", str(where)) from exc


def _in_the_way(path: Path) -> tuple[Path, str] | None:
    """The first of `path` and its parents, from the top, that exists and is not a folder (or a link
    to one), and what it is; None when there is none (the error is another: permissions, a full disk)."""
    for part in (*reversed(path.parents), path):
        try:
            mode = part.lstat().st_mode
        except OSError:
            return None  # nothing in the way from here down (or it cannot be looked at)
        if stat.S_ISLNK(mode):
            try:
                mode = part.stat().st_mode
            except FileNotFoundError:
                return part, f"a symbolic link to {os.readlink(part)}, which does not exist"
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return part, "a symbolic link loop"
                return None
        if not stat.S_ISDIR(mode):
            kind = "a regular file" if stat.S_ISREG(mode) else not_regular(part) or "not a folder"
            return part, kind.removesuffix(", not a regular file")
    return None


def write_files(files: dict[str, str], out: Path) -> list[Path]:
    """Write atomically (`write_atomic`), skipping files whose content is already right; then remove the
    temp files of all of them that killed writers left (`sweep_leftovers`, once for every file)."""
    written = []
    for rel in stale_files(files, out):
        path = out / rel
        make_dirs(path.parent)
        _write_atomic(path, files[rel], mode=0o644)
        written.append(path)
    sweep_leftovers(out, files)
    return written


TEMP_SUFFIX: Final = ".tmp"
LEFTOVER_AGE: Final = 3600.0
"""Seconds after its last write past which a temp file no lock can vouch for is a leftover (a staged file is
written in well under a minute, a fleet's whole run in about one)."""
_RANDOM = r"[a-z0-9_]{8}"  # tempfile.mkstemp's eight characters


def _hold(fd: int) -> int | None:
    """A second descriptor of ``fd``'s file holding an exclusive `flock` on it (kept until the temp file is
    renamed or removed, after ``fd`` is closed); None without `flock` or where the file system refuses one.
    Raises BlockingIOError when another process holds it (a sweeper, between its creation and this)."""
    if fcntl is None:
        return None
    lock = os.dup(fd)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        raise
    except OSError:  # ENOLCK, EOPNOTSUPP: told by age alone
        os.close(lock)
        return None
    return lock


def sweep_leftovers(out: Path, names: Iterable[str], now: float | None = None) -> list[Path]:
    """Remove the temp files of ``names`` (paths under ``out``) that a killed run left beside them: no live
    process holds their `flock`, or (without one) they are older than `LEFTOVER_AGE`. The paths removed; a
    file that cannot be removed (a read-only folder) is left, silently."""
    now = time.time() if now is None else now
    by_folder: dict[Path, set[str]] = {}
    for rel in names:
        path = out / rel
        by_folder.setdefault(path.parent, set()).add(path.name)
    removed = []
    for folder, files in by_folder.items():
        pattern = re.compile(
            rf"\.(?:{'|'.join(map(re.escape, sorted(files)))})\.{_RANDOM}(?P<tmp>{re.escape(TEMP_SUFFIX)})?"
        )
        try:
            found = [(Path(e.path), m["tmp"]) for e in os.scandir(folder) if (m := pattern.fullmatch(e.name))]
        except OSError:
            continue
        removed += [path for path, tmp in found if _remove_unheld(path, locked=tmp is not None, now=now)]
    return removed


def _remove_unheld(path: Path, locked: bool, now: float) -> bool:
    """Remove ``path`` when no live process holds it: its `flock` taken without waiting (``locked``: a temp
    file that takes one; a live run's raises BlockingIOError, caught below), else its age. It is removed
    while locked (the lock's descriptor closes when the process ends), and only if it is still the file
    judged."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    lock = None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return False
        lock = _hold(fd) if locked else None
        if lock is None and now - st.st_mtime < LEFTOVER_AGE:
            return False
        if os.lstat(path).st_ino != st.st_ino:  # replaced meanwhile: not the file judged
            return False
        os.unlink(path)
        return True
    except OSError:  # BlockingIOError: a live run's
        return False
    finally:
        os.close(fd)
        if lock is not None:
            os.close(lock)


class StagedFiles:
    """Files written piece by piece under `out`, each compared with the file already there as it is
    written, so that no file's whole text is ever held. With `write`, every file that differs also
    goes to a temp file next to its place (an unchanged one is never written, as before), and `commit`
    renames them into place, all at the end: a failure before (the `with` block raising) leaves `out`
    as it was, temp files and the folders made for them removed. Without `write` nothing is written;
    `stale` names the files that differ. Either way, a `with` block that ends without an error removes the
    temp files a killed run left beside the files it rendered (`sweep_leftovers`; `swept` names them)."""

    def __init__(self, out: Path, write: bool) -> None:
        self.out = out
        self.write = write
        self.names: list[str] = []  # every file opened, in order
        self.stale: list[str] = []  # those missing or different, as each is closed
        self._temps: dict[str, str] = {}  # file -> its temp file
        self._open: list[_Piecewise] = []
        self._made: list[Path] = []  # folders created for the temp files, parents first
        self._locks: dict[str, int] = {}  # file -> the descriptor holding its temp file's flock
        self.swept: list[Path] = []  # the temp files of killed runs removed

    def __enter__(self) -> StagedFiles:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if kind is not None:
            self.discard()
        else:
            self.swept = sweep_leftovers(self.out, self.names)

    def open(self, rel: str) -> _Piecewise:
        if rel in self.names:
            raise ValueError(f"{rel} rendered twice")
        self.names.append(rel)
        writer = _Piecewise(self, rel)
        self._open.append(writer)
        return writer

    def _stage(self, rel: str) -> TextIO:
        """`rel`'s temp file, made when the file is found to differ (missing, or a piece that is not
        what is on disk): an unchanged file costs no write, so a read-only --out or a full disk
        whose files are up to date is no error."""
        path = self.out / rel
        missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        make_dirs(path.parent)
        self._made += reversed(missing)
        fd, temp, lock = _locked_temp(path)
        self._temps[rel] = temp
        if lock is not None:
            self._locks[rel] = lock
        return os.fdopen(fd, "w", encoding="utf-8", newline="\n")

    def _release(self, rel: str) -> None:
        lock = self._locks.pop(rel, None)
        if lock is not None:
            os.close(lock)

    def commit(self) -> list[Path]:
        """Rename the changed files into place (mode 0644); remove the temps of the others."""
        if self._open:
            raise ValueError(f"{self._open[0].rel} is still being written")
        written = []
        for rel in self.names:
            temp = self._temps.pop(rel, None)
            if temp is None:
                continue
            if rel not in self.stale:
                os.unlink(temp)
                self._release(rel)
                continue
            path = self.out / rel
            try:
                os.chmod(temp, 0o644)
                os.replace(temp, path)
            except OSError as exc:
                Path(temp).unlink(missing_ok=True)
                raise _naming(exc, path) from exc
            finally:
                self._release(rel)
            written.append(path)
        return written

    def discard(self) -> None:
        for writer in list(self._open):
            writer.close(discarding=True)
        for rel, temp in self._temps.items():
            Path(temp).unlink(missing_ok=True)
            self._release(rel)
        self._temps.clear()
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):  # not empty: something else was written there meanwhile
                folder.rmdir()


class _Piecewise:
    """One file of a StagedFiles: compared with the file on disk as the pieces come (read as
    `Path.read_text` reads it), and copied to a temp file from the first difference on
    (with the equal text before it, read back from the file on disk)."""

    _CHUNK = 1 << 20

    def __init__(self, files: StagedFiles, rel: str) -> None:
        self.files = files
        self.rel = rel
        self._temp: TextIO | None = None
        self._matched = 0  # characters written so far, all equal to the file on disk's
        old = _open_regular(files.out / rel)  # closed by close()
        self._old: TextIO | None = None if isinstance(old, contextlib.nullcontext) else old
        self._same = self._old is not None
        if not self._same and files.write:
            self._temp = files._stage(rel)

    def write(self, text: str) -> None:
        if self._same:
            self._same = self._read(len(text)) == text
            if self._same:
                self._matched += len(text)
                return
            self._diverged()
        if self._temp is not None:
            try:
                self._temp.write(text)
            except OSError as exc:  # a full disk: the error names the file, not the temp file
                raise _naming(exc, self.files.out / self.rel) from exc

    def _read(self, size: int) -> str | None:
        try:
            return self._old.read(size) if self._old is not None else None
        except (OSError, ValueError):  # unreadable, or not UTF-8: stale
            return None

    def _diverged(self) -> None:
        """The file differs from here on: stage it, with the `_matched` characters before."""
        if not self.files.write:
            return
        self._temp = self.files._stage(self.rel)
        assert self._old is not None  # only a file on disk can have matched
        try:
            self._old.seek(0)
            left = self._matched
            while left:
                chunk = self._old.read(min(left, self._CHUNK))
                if not chunk:  # the file shrank under us: its text is not the one compared
                    raise OSError(f"{self.files.out / self.rel} changed while being compared")
                self._temp.write(chunk)
                left -= len(chunk)
        except OSError as exc:
            raise _naming(exc, self.files.out / self.rel) from exc

    def close(self, discarding: bool = False) -> None:
        if self not in self.files._open:
            return
        self.files._open.remove(self)
        if self._same and not discarding and self._read(1) != "":  # the file on disk is longer
            self._same = False
            self._diverged()
        if not self._same:
            self.files.stale.append(self.rel)
        if self._old is not None:
            self._old.close()
        if self._temp is not None:
            try:
                self._temp.close()  # writes what is buffered
            except OSError as exc:
                if not discarding:
                    raise _naming(exc, self.files.out / self.rel) from exc
