"""The bot's durable state in one SQLite file (standard library only).

- ``notifications``: every accepted Alertmanager notification, committed (``synchronous=FULL``)
  before the receiver answers 2xx. State ``pending`` until delivered (``done``), replaced by a
  newer notification of the same group (``superseded``: Alertmanager sends the whole group each
  time, so only the latest matters), or given up on (``failed``, with the error kept).
- ``messages``: alert group -> the Slack message (channel, ts) that shows it, the digest of what it
  shows (a repeat with the same digest posts nothing) and the alerts it listed (to say what changed).

A restart resumes the pending notifications; the group -> message map survives it, so nothing is
posted twice. All methods are thread-safe (one connection, one lock).

When the disk refuses a write (full, a file-size limit, a read-only remount), what the worker did
is kept in memory instead (`unsaved`): a posted notification is never picked again, the group's
message is edited rather than posted anew, and the next successful write flushes it. `problem()`
says so (and when the file vanished or was replaced under the running bot): the receiver then
answers 503 to webhooks and on /healthz, and the bot's metrics carry it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.files import make_dirs
from triton_sre.redact import shown_path

log = logging.getLogger(__name__)

STATE_PENDING = c.BOT_OUTBOX_PENDING
STATE_DONE = c.BOT_OUTBOX_DONE
STATE_SUPERSEDED = c.BOT_OUTBOX_SUPERSEDED
STATE_FAILED = c.BOT_OUTBOX_FAILED

_PAGE = 256  # pending rows read at a time by `next_due`

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    group_key TEXT NOT NULL,
    payload TEXT NOT NULL,
    received REAL NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt REAL NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE INDEX IF NOT EXISTS notifications_pending ON notifications (state, group_key, id);
CREATE INDEX IF NOT EXISTS notifications_due ON notifications (state, id);
CREATE TABLE IF NOT EXISTS messages (
    group_key TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    status TEXT NOT NULL,
    digest TEXT NOT NULL,
    alerts TEXT NOT NULL,
    updated REAL NOT NULL
);
"""


@dataclass(frozen=True)
class Notification:
    id: int
    group_key: str
    payload: dict[str, Any]
    attempts: int
    next_attempt: float


@dataclass(frozen=True)
class MessageRef:
    group_key: str
    channel: str
    ts: str
    status: str
    digest: str
    alerts: list[dict[str, Any]]
    updated: float


def _create_private(path: str) -> None:
    """A new outbox file is readable by its owner only (SQLite gives its WAL and shared-memory files
    the database's mode): it holds webhook payloads as Alertmanager sent them. An existing file keeps
    the mode it has."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        if os.path.isdir(path):  # SQLite would only say "unable to open database file"
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file") from None


class OutboxError(Exception):
    """The outbox cannot be opened (a corrupt file, a path under a regular file, no permission,
    another bot using it)."""


LOCK_SUFFIX = ".lock"


def _hold_lock(path: str) -> Any:
    """One bot per outbox: an exclusive lock on `<outbox>.lock` (the kernel's flock, released with the
    process), holding the holder's pid. Two bots sharing an outbox both delivered every pending
    notification: each message posted twice. A separate file, so SQLite's own locks are untouched."""
    lock = os.fdopen(os.open(path + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600), "r+b")
    try:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        lock.seek(0)
        holder = lock.read(32).decode("ascii", "replace").strip() or "unknown"
        lock.close()
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        raise OutboxError(
            f"outbox {shown_path(path)}: in use by another bot (pid {holder}): two bots on one outbox "
            "would post every message twice; stop that bot, or give this one its own --outbox"
        ) from None
    lock.truncate(0)
    lock.seek(0)
    lock.write(f"{os.getpid()}\n".encode())
    lock.flush()
    return lock


class Outbox:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._lock = threading.Lock()
        # Delivery state the disk refused, by notification id: its final state, or its retry schedule.
        self._finished: dict[int, str] = {}
        self._retries: dict[int, tuple[int, float, str]] = {}
        self._messages: dict[str, tuple[str, str, str, str, list[dict[str, Any]]]] = {}
        self._write_error = ""
        self._identity: tuple[int, int] | None = None
        self._lockfile: Any = None
        try:
            if self.path != ":memory:":
                make_dirs(Path(self.path).parent)
                self._lockfile = _hold_lock(self.path)
                _create_private(self.path)
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
            self._db.execute("SELECT COUNT(*) FROM notifications").fetchone()
        except (OSError, sqlite3.Error) as exc:
            self._release()
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            where = f" ({shown_path(exc.filename)})" if isinstance(exc, OSError) and exc.filename else ""
            raise OutboxError(f"outbox {shown_path(self.path)}: {reason}{where}") from None
        if self.path != ":memory:":
            self._identity = _identity(self.path)

    def close(self) -> None:
        with self._lock:
            self._db.close()
            self._release()

    def _release(self) -> None:
        if self._lockfile is not None:
            self._lockfile.close()  # releases the lock
            self._lockfile = None

    # -- health -----------------------------------------------------------------------------------
    def file_problem(self) -> str:
        """Why the outbox file cannot take a notification ('' when it can): it vanished or was
        replaced under the running bot, so what is written now would be lost at the next start."""
        if self._identity is None:
            return ""
        try:
            now = _identity(self.path)
        except OSError as exc:
            return f"outbox file {self.path}: {exc.strerror or exc}"
        return f"outbox file {self.path} was replaced under the running bot" if now != self._identity else ""

    def problem(self) -> str:
        """`file_problem`, or the disk refusing writes (delivery state held in memory); '' when fine."""
        if found := self.file_problem():
            return found
        if self._write_error:
            return f"outbox writes fail ({self._write_error}); {self.unsaved()} delivery record(s) in memory"
        return ""

    def unsaved(self) -> int:
        """Delivery records held in memory because the disk refused them."""
        return len(self._finished) + len(self._retries) + len(self._messages)

    def _refused(self, exc: sqlite3.Error) -> None:
        self._write_error = str(exc)[:200]

    def _wrote(self) -> None:
        """A write went through: the disk takes writes again (what it refused is flushed by `_flush`)."""
        if not self.unsaved():
            self._write_error = ""

    def _flush(self) -> None:
        """Write what the disk refused earlier (under the lock); keep it in memory if it still fails."""
        if not (self._finished or self._retries or self._messages):
            return
        try:
            with self._transaction():
                for nid, state in self._finished.items():
                    self._db.execute("UPDATE notifications SET state = ? WHERE id = ?", (state, nid))
                for nid, (attempts, at, error) in self._retries.items():
                    self._db.execute(
                        "UPDATE notifications SET attempts = ?, next_attempt = ?, last_error = ? "
                        "WHERE id = ?",
                        (attempts, at, error, nid),
                    )
                for group_key, (channel, ts, status, state_digest, alerts) in self._messages.items():
                    self._upsert_message(group_key, channel, ts, status, state_digest, alerts)
        except sqlite3.Error as exc:
            self._refused(exc)
            return
        self._finished.clear()
        self._retries.clear()
        self._messages.clear()
        self._write_error = ""

    # -- notifications ---------------------------------------------------------------------------
    def enqueue(self, group_key: str, payload: dict[str, Any], now: float | None = None) -> int:
        """Store a notification durably; returns its id once committed to disk."""
        data = json.dumps(payload, separators=(",", ":"), sort_keys=True)
        with self._lock:
            try:
                cursor = self._db.execute(
                    "INSERT INTO notifications (group_key, payload, received, state) VALUES (?, ?, ?, ?)",
                    (group_key, data, time.time() if now is None else now, STATE_PENDING),
                )
            except sqlite3.Error as exc:  # a full disk: the receiver answers 503, `problem()` says why
                self._refused(exc)
                raise
            self._wrote()
            return int(cursor.lastrowid or 0)

    def next_due(
        self, now: float | None = None, horizon: float = math.inf
    ) -> tuple[Notification | None, float | None]:
        """The latest pending notification of a group that is due (older ones of its group are
        marked superseded), and the earliest time any other pending one is due (None: none). A
        retry scheduled more than `horizon` seconds ahead is due now: it was scheduled before the
        clock stepped back."""
        now = time.time() if now is None else now
        with self._lock:
            self._flush()
            earliest: float | None = None
            for ids in self._pending_groups():
                latest, older = ids[-1], ids[:-1]
                attempts, next_attempt, row = self._schedule(latest)
                try:
                    payload = json.loads(row[2])
                except (ValueError, TypeError) as exc:
                    # A record damaged on disk: failed, kept with the reason; the group's older
                    # notification (if any) is picked next, and every other group goes on.
                    self._fail(latest, f"the stored notification does not decode: {exc}")
                    log.error(
                        "outbox %s: notification %d does not decode (%s): marked failed",
                        self.path,
                        latest,
                        exc,
                    )
                    continue
                if older:
                    # A superseded notification's retry schedule carries over: never retry sooner.
                    for nid in older:
                        a, at, _ = self._schedule(nid)
                        attempts, next_attempt = max(attempts, a), max(next_attempt, at)
                        self._finished[nid] = STATE_SUPERSEDED
                    self._retries[latest] = (attempts, next_attempt, row[4] or "")
                    self._flush()
                if next_attempt <= now or next_attempt > now + horizon:
                    return Notification(latest, row[1], payload, attempts, next_attempt), None
                earliest = next_attempt if earliest is None else min(earliest, next_attempt)
            return None, earliest

    def _pending_groups(self) -> Iterator[list[int]]:
        """Each group's pending notification ids (in id order), the groups in the order of their first
        pending id; ids done or failed in memory only are never picked again. Read as the caller goes
        (under the lock): the first due group is most often the first one, and reading every pending
        row at each call made a storm's drain quadratic (6,400 groups: 12.7 s of CPU, fleet34). The
        rows are read a page at a time, each page whole before the caller writes."""
        seen: set[str] = set()
        after = 0
        while True:
            page = self._db.execute(
                "SELECT id, group_key FROM notifications WHERE state = ? AND id > ? ORDER BY id LIMIT ?",
                (STATE_PENDING, after, _PAGE),
            ).fetchall()
            for nid, group_key in page:
                if nid in self._finished or group_key in seen:
                    continue
                seen.add(group_key)
                ids = [
                    i
                    for (i,) in self._db.execute(
                        "SELECT id FROM notifications WHERE state = ? AND group_key = ? ORDER BY id",
                        (STATE_PENDING, group_key),
                    ).fetchall()
                    if i not in self._finished
                ]
                if ids:  # none: written done or failed since the page was read (`_flush`)
                    yield ids
            if len(page) < _PAGE:
                return
            after = page[-1][0]

    def last_payload(self, group_key: str, holding: str = "") -> dict[str, Any] | None:
        """The newest stored notification of a group as Alertmanager sent it (None: none, or pruned),
        with `holding` the newest whose stored text holds it."""
        with self._lock:
            row = self._db.execute(
                "SELECT payload FROM notifications WHERE group_key = ? AND instr(payload, ?) > 0 "
                "ORDER BY id DESC LIMIT 1",
                (group_key, holding),
            ).fetchone()
        try:
            payload = json.loads(row[0]) if row is not None else None
        except (ValueError, TypeError):
            return None
        return payload if isinstance(payload, dict) else None

    def _schedule(self, nid: int) -> tuple[int, float, Any]:
        """(attempts, next attempt, row) of a notification, the in-memory retry schedule first."""
        row = self._db.execute(
            "SELECT id, group_key, payload, attempts, next_attempt, last_error FROM notifications "
            "WHERE id = ?",
            (nid,),
        ).fetchone()
        attempts, at, _ = self._retries.get(nid, (row[3], row[4], ""))
        return attempts, at, (row[0], row[1], row[2], row[3], row[5])

    def mark_done(self, notification_id: int) -> None:
        self._finish(notification_id, STATE_DONE)

    def mark_failed(self, notification_id: int, error: str) -> None:
        with self._lock:
            self._fail(notification_id, error)

    def _fail(self, notification_id: int, error: str) -> None:
        """`mark_failed` under the lock."""
        try:
            self._db.execute(
                "UPDATE notifications SET state = ?, last_error = ? WHERE id = ?",
                (STATE_FAILED, error[:500], notification_id),
            )
        except sqlite3.Error as exc:
            self._refused(exc)
            self._finished[notification_id] = STATE_FAILED
            return
        self._wrote()

    def _finish(self, notification_id: int, state: str) -> None:
        with self._lock:
            try:
                self._db.execute("UPDATE notifications SET state = ? WHERE id = ?", (state, notification_id))
            except sqlite3.Error as exc:
                self._refused(exc)
                self._finished[notification_id] = state
                return
            self._wrote()

    def retry_later(self, notification_id: int, at: float, error: str) -> None:
        with self._lock:
            try:
                self._db.execute(
                    "UPDATE notifications SET attempts = attempts + 1, next_attempt = ?, last_error = ? "
                    "WHERE id = ?",
                    (at, error[:500], notification_id),
                )
            except sqlite3.Error as exc:
                self._refused(exc)
                attempts, _, _ = self._schedule(notification_id)
                self._retries[notification_id] = (attempts + 1, at, error[:500])
                return
            self._wrote()

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM notifications GROUP BY state").fetchall()
        return {str(state): int(count) for state, count in rows}

    def pending(self) -> int:
        return self.counts().get(STATE_PENDING, 0)

    def prune(self, older_than: float) -> None:
        """Forget finished notifications received before `older_than` (epoch seconds)."""
        with self._lock:
            try:
                self._db.execute(
                    "DELETE FROM notifications WHERE state != ? AND received < ?", (STATE_PENDING, older_than)
                )
            except sqlite3.Error as exc:  # a full disk: pruning waits, delivery goes on
                self._refused(exc)

    # -- group -> message map ----------------------------------------------------------------------
    def message(self, group_key: str) -> MessageRef | None:
        with self._lock:
            unsaved = self._messages.get(group_key)
            if unsaved is not None:
                return MessageRef(group_key, *unsaved[:4], list(unsaved[4]), time.time())
            row = self._db.execute(
                "SELECT group_key, channel, ts, status, digest, alerts, updated FROM messages "
                "WHERE group_key = ?",
                (group_key,),
            ).fetchone()
        if row is None:
            return None
        return MessageRef(row[0], row[1], row[2], row[3], row[4], json.loads(row[5]), row[6])

    def save_message(
        self,
        group_key: str,
        channel: str,
        ts: str,
        status: str,
        digest: str,
        alerts: list[dict[str, Any]],
        notification_id: int | None = None,
    ) -> None:
        """Record what the group's message shows; with `notification_id`, mark it done atomically.
        A refused write is kept in memory (never raised): the message exists in Slack already."""
        with self._lock:
            try:
                with self._transaction():
                    self._upsert_message(group_key, channel, ts, status, digest, alerts)
                    if notification_id is not None:
                        self._db.execute(
                            "UPDATE notifications SET state = ? WHERE id = ?", (STATE_DONE, notification_id)
                        )
            except sqlite3.Error as exc:
                self._refused(exc)
                self._messages[group_key] = (channel, ts, status, digest, alerts)
                if notification_id is not None:
                    self._finished[notification_id] = STATE_DONE
                return
            self._wrote()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            # SQLite has rolled back already after some errors (SQLITE_FULL: a full disk); a ROLLBACK
            # then raises "no transaction is active" and hides the reason the write failed
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _upsert_message(
        self, group_key: str, channel: str, ts: str, status: str, digest: str, alerts: list[dict[str, Any]]
    ) -> None:
        self._db.execute(
            "INSERT INTO messages (group_key, channel, ts, status, digest, alerts, updated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(group_key) DO UPDATE SET "
            "channel = excluded.channel, "
            "ts = excluded.ts, status = excluded.status, digest = excluded.digest, "
            "alerts = excluded.alerts, updated = excluded.updated",
            (group_key, channel, ts, status, digest, json.dumps(alerts), time.time()),
        )

    def open_messages(self) -> list[MessageRef]:
        """Groups whose message currently shows firing alerts (for `/triton status`)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT group_key, channel, ts, status, digest, alerts, updated FROM messages "
                "WHERE status != ? ORDER BY updated DESC",
                (c.AM_STATUS_RESOLVED,),
            ).fetchall()
        return [MessageRef(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6]) for r in rows]

    def notifications(self, group_key_part: str = "") -> list[dict[str, Any]]:
        """Notifications whose group key contains `group_key_part`, oldest first (inspection, tests)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, group_key, state, attempts, last_error, received FROM notifications "
                "WHERE instr(group_key, ?) > 0 ORDER BY id",
                (group_key_part,),
            ).fetchall()
        keys = ("id", "group_key", "state", "attempts", "last_error", "received")
        return [dict(zip(keys, row, strict=True)) for row in rows]


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino
