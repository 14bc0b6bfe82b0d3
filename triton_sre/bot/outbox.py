"""The bot's durable state in one SQLite file (standard library only).

- ``notifications``: every accepted Alertmanager notification, committed (``synchronous=FULL``)
  before the receiver answers 2xx. State ``pending`` until delivered (``done``), replaced by a
  newer notification of the same group (``superseded``: Alertmanager sends the whole group each
  time, so only the latest matters), or given up on (``failed``, with the error kept).
- ``messages``: alert group -> the Slack message (channel, ts) that shows it, the digest of what it
  shows (a repeat with the same digest posts nothing) and the alerts it listed (to say what changed).

A restart resumes the pending notifications; the group -> message map survives it, so nothing is
posted twice. All methods are thread-safe (one connection, one lock).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton_sre import conventions as c

STATE_PENDING = "pending"
STATE_DONE = "done"
STATE_SUPERSEDED = "superseded"
STATE_FAILED = "failed"

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


class Outbox:
    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- notifications ---------------------------------------------------------------------------
    def enqueue(self, group_key: str, payload: dict[str, Any], now: float | None = None) -> int:
        """Store a notification durably; returns its id once committed to disk."""
        data = json.dumps(payload, separators=(",", ":"), sort_keys=True)
        with self._lock:
            cursor = self._db.execute(
                "INSERT INTO notifications (group_key, payload, received, state) VALUES (?, ?, ?, ?)",
                (group_key, data, time.time() if now is None else now, STATE_PENDING),
            )
            return int(cursor.lastrowid or 0)

    def next_due(self, now: float | None = None) -> tuple[Notification | None, float | None]:
        """The latest pending notification of a group that is due (older ones of its group are
        marked superseded), and the earliest time any other pending one is due (None: none)."""
        now = time.time() if now is None else now
        with self._lock:
            rows = self._db.execute(
                "SELECT group_key, MAX(id) FROM notifications WHERE state = ? GROUP BY group_key "
                "ORDER BY MIN(id)",
                (STATE_PENDING,),
            ).fetchall()
            earliest: float | None = None
            for group_key, latest in rows:
                # A superseded notification's retry schedule carries over: never retry sooner.
                older = self._db.execute(
                    "SELECT MAX(next_attempt), MAX(attempts) FROM notifications "
                    "WHERE group_key = ? AND state = ? AND id < ?",
                    (group_key, STATE_PENDING, latest),
                ).fetchone()
                if older[0] is not None:
                    self._db.execute(
                        "UPDATE notifications SET next_attempt = MAX(next_attempt, ?), "
                        "attempts = MAX(attempts, ?) WHERE id = ?",
                        (older[0], older[1], latest),
                    )
                    self._db.execute(
                        "UPDATE notifications SET state = ? WHERE group_key = ? AND state = ? AND id < ?",
                        (STATE_SUPERSEDED, group_key, STATE_PENDING, latest),
                    )
                row = self._db.execute(
                    "SELECT id, group_key, payload, attempts, next_attempt FROM notifications WHERE id = ?",
                    (latest,),
                ).fetchone()
                if row[4] <= now:
                    return Notification(row[0], row[1], json.loads(row[2]), row[3], row[4]), None
                earliest = row[4] if earliest is None else min(earliest, row[4])
            return None, earliest

    def mark_done(self, notification_id: int) -> None:
        with self._lock:
            self._db.execute("UPDATE notifications SET state = ? WHERE id = ?", (STATE_DONE, notification_id))

    def mark_failed(self, notification_id: int, error: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE notifications SET state = ?, last_error = ? WHERE id = ?",
                (STATE_FAILED, error[:500], notification_id),
            )

    def retry_later(self, notification_id: int, at: float, error: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE notifications SET attempts = attempts + 1, next_attempt = ?, last_error = ? "
                "WHERE id = ?",
                (at, error[:500], notification_id),
            )

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT state, COUNT(*) FROM notifications GROUP BY state").fetchall()
        return {str(state): int(count) for state, count in rows}

    def pending(self) -> int:
        return self.counts().get(STATE_PENDING, 0)

    def prune(self, older_than: float) -> None:
        """Forget finished notifications received before `older_than` (epoch seconds)."""
        with self._lock:
            self._db.execute(
                "DELETE FROM notifications WHERE state != ? AND received < ?", (STATE_PENDING, older_than)
            )

    # -- group -> message map ----------------------------------------------------------------------
    def message(self, group_key: str) -> MessageRef | None:
        with self._lock:
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
        """Record what the group's message shows; with `notification_id`, mark it done atomically."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO messages (group_key, channel, ts, status, digest, alerts, updated) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(group_key) DO UPDATE SET "
                    "channel = excluded.channel, "
                    "ts = excluded.ts, status = excluded.status, digest = excluded.digest, "
                    "alerts = excluded.alerts, updated = excluded.updated",
                    (group_key, channel, ts, status, digest, json.dumps(alerts), time.time()),
                )
                if notification_id is not None:
                    self._db.execute(
                        "UPDATE notifications SET state = ? WHERE id = ?", (STATE_DONE, notification_id)
                    )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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
