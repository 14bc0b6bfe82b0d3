"""The report's files published all at once in `report --out DIR`.

Each report is written whole into a fresh folder `DIR/published/<generation>/`, then made the
current one by one atomic rename of the symbolic link `DIR/current` (-> `published/<generation>`).
`DIR/report.md`, `DIR/report.html`, `DIR/charts`, the CSV files are symbolic links to
`current/<name>`: each open resolves through `current`, so a reader sees the previous report's file
or the new one's, and a signal or a crash at any step leaves one report or the other, never a new
`report.md` beside an old `report.html` (before, each file was renamed in place one at a time).

A file this run does not write (`--format html` after a full report) is carried into the new
generation (a hard link, else a copy), as a file not rewritten stayed before. A file keeps the
permissions of the one it replaces. The previous generation is kept (a reader that resolved
`current` just before the swap can still open its files); older ones are removed.

Regular files and a `charts` folder of an earlier layout (a report before generations) are first
made a generation of their own (hard links), made current, and only then replaced by links to it,
one at a time: each link reads what the file it replaces read, so a reader meets the old report
whole until the new one is made current by the one rename (a folder is swapped for its link by
`renameat2(RENAME_EXCHANGE)`; where the file system refuses it, moved aside first: for that
instant `charts` is missing).

Two reports publishing into one DIR at once take turns: each holds an exclusive `flock` on the
`DIR/published` folder for its whole publish (written, made current, old ones removed), so neither
removes the generation the other is writing; a report that waits longer than `LOCK_WAIT_SECONDS`
stops with an error saying another report is publishing there. The lock goes with its process
(a killed report holds nothing).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from triton_sre.files import make_dirs, write_atomic

__all__ = ["CURRENT", "PUBLISHED", "publish"]

PUBLISHED = "published"  # DIR/published/<generation>/: each report's files
CURRENT = "current"  # DIR/current -> published/<generation>: the report readers see
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2  # <fcntl.h>, <linux/fs.h>
LOCK_WAIT_SECONDS = 120.0  # a publish writes files already rendered: seconds even at fleet size


def publish(out: Path, files: Mapping[str, str | bytes]) -> list[Path]:
    """`files` (a path relative to `out` -> its content) published at once in `out`; the paths
    a reader opens (`out / name`) returned."""
    with _locked(out / PUBLISHED):
        return _publish(out, out / PUBLISHED, files)


@contextlib.contextmanager
def _locked(store: Path) -> Iterator[None]:
    """`store` made and held under an exclusive lock; waits for another report's publish (at most
    `LOCK_WAIT_SECONDS`). A folder removed while we waited (an interrupted first report removes
    its empty store) is made again and locked afresh."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        make_dirs(store)
        fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY)
        try:
            if _lock(fd, deadline) and os.path.samestat(os.fstat(fd), os.stat(store)):
                yield
                return
        except FileNotFoundError:
            pass  # removed as we locked it: again
        finally:
            os.close(fd)  # releases the lock
        if time.monotonic() >= deadline:
            message = f"another triton-sre report is publishing into it (waited {LOCK_WAIT_SECONDS:g}s)"
            raise OSError(errno.EBUSY, message, str(store.parent))


def _lock(fd: int, deadline: float) -> bool:
    """`fd` locked exclusively before `deadline` (False: not in time)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def _publish(out: Path, store: Path, files: Mapping[str, str | bytes]) -> list[Path]:
    previous = _convert_earlier_layout(out, store, {Path(name).parts[0] for name in files})
    generation = _new_generation(store)
    try:
        for name, data in files.items():
            _write(out, generation, name, data)
        if previous is not None:
            _carry(previous, generation, {Path(name).parts[0] for name in files})
        _replace_link(out / CURRENT, f"{PUBLISHED}/{generation.name}")
    except BaseException:  # a write that failed, Ctrl-C, SIGTERM unwinding: the previous report stays
        shutil.rmtree(generation, ignore_errors=True)
        with contextlib.suppress(OSError):
            store.rmdir()  # only when empty: the first report, interrupted
        raise
    for entry in sorted(p.name for p in generation.iterdir()):
        _link_top(out, entry)
    keep = {generation.name} | ({previous.name} if previous is not None else set())
    for old in store.iterdir():
        if old.name not in keep:
            shutil.rmtree(old, ignore_errors=True)
    return [out / name for name in files]


def _new_generation(store: Path) -> Path:
    generation = store / f"report-{time.time_ns()}-{os.getpid()}"
    os.mkdir(generation)  # the umask's permissions, as a folder made in place
    return generation


def _convert_earlier_layout(out: Path, store: Path, names: set[str]) -> Path | None:
    """The names among `names` that are regular files or folders in `out` (an earlier layout)
    made links to a generation holding them, with the current one's other entries; that
    generation (else the current one) returned."""
    previous = _current(out)
    legacy = sorted(name for name in names if os.path.lexists(out / name) and not (out / name).is_symlink())
    if not legacy:
        return previous
    before = _new_generation(store)
    try:
        for name in legacy:
            if (out / name).is_dir():
                shutil.copytree(out / name, before / name, copy_function=_link_or_copy)
            else:
                _link_or_copy(str(out / name), str(before / name))
        if previous is not None:
            _carry(previous, before, set(legacy))
        _replace_link(out / CURRENT, f"{PUBLISHED}/{before.name}")
    except BaseException:
        shutil.rmtree(before, ignore_errors=True)
        raise
    for name in legacy:  # each now reads the same through `current`
        _link_top(out, name)
    return before


def _write(out: Path, generation: Path, name: str, data: str | bytes) -> None:
    """`data` into the new generation, with the permissions of the file it replaces; an error names
    the path the user reads (`out / name`), not the generation's."""
    target = generation / name
    try:
        mode = (out / name).stat().st_mode & 0o777
    except OSError:
        mode = None
    try:
        make_dirs(target.parent)
        write_atomic(target, data, mode)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(out / name)) from exc


def _current(out: Path) -> Path | None:
    """The generation `out/current` names, if it is one of ours and still there."""
    try:
        target = os.readlink(out / CURRENT)
    except OSError:
        return None
    parts = Path(target).parts
    if len(parts) != 2 or parts[0] != PUBLISHED or not (out / target).is_dir():
        return None
    return out / target


def _carry(previous: Path, generation: Path, written: set[str]) -> None:
    """The previous generation's entries this run did not write, into the new one."""
    for entry in previous.iterdir():
        if entry.name in written:
            continue
        if entry.is_dir():
            shutil.copytree(entry, generation / entry.name, copy_function=_link_or_copy)
        else:
            _link_or_copy(str(entry), str(generation / entry.name))


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # a file system without hard links
        shutil.copy2(src, dst)


def _replace_link(link: Path, target: str) -> None:
    """`link` made a symbolic link to `target` by one rename (atomic for a reader)."""
    staged = link.with_name(f".{link.name}.{os.getpid()}.link")
    staged.unlink(missing_ok=True)
    os.symlink(target, staged)
    try:
        os.replace(staged, link)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def _link_top(out: Path, name: str) -> None:
    """`out/name` a link to `current/name` (already one: nothing to do). An earlier layout's folder
    is moved aside and removed, as a link cannot be renamed over a folder."""
    path, target = out / name, f"{CURRENT}/{name}"
    with contextlib.suppress(OSError):
        if os.readlink(path) == target:
            return
    if path.is_dir() and not path.is_symlink():
        if _exchanged_for_link(path, target):
            return
        aside = out / PUBLISHED / f"{name}-before-{time.time_ns()}"
        os.rename(path, aside)
        try:
            _replace_link(path, target)
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    _replace_link(path, target)


def _exchanged_for_link(folder: Path, target: str) -> bool:
    """`folder` swapped for a symbolic link to `target` in one step (Linux's renameat2 with
    RENAME_EXCHANGE), the folder then removed; False where that call is not available."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    staged = folder.with_name(f".{folder.name}.{os.getpid()}.link")
    staged.unlink(missing_ok=True)
    os.symlink(target, staged)
    try:
        if renameat2(_AT_FDCWD, os.fsencode(staged), _AT_FDCWD, os.fsencode(folder), _RENAME_EXCHANGE):
            return False  # refused (a file system without it): `staged` is still the link
        # `staged` is now the folder; nothing to keep in it (its files are in the generation)
        shutil.rmtree(staged, ignore_errors=True)
        return True
    finally:
        if staged.is_symlink():
            staged.unlink()
