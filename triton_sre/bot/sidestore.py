"""A table of the bot's state kept beside the outbox's own, in the outbox's SQLite file: its own
connection (WAL, ``synchronous=FULL``: the outbox's durability) under the lock the outbox holds on
``<outbox>.lock``, tables created with ``CREATE TABLE IF NOT EXISTS`` (an older outbox gains them at
the next start). A file the tables cannot be made in, or a write or read the disk refuses, is a log
line (and `on_error` for a read or the opening); the caller keeps what it needs in memory."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class SideStore:
    what = "state"
    """What the tables hold, for the log lines."""

    def __init__(self, path: str, schema: str, on_error: Callable[[], None] = lambda: None) -> None:
        self.path = path
        self.on_error = on_error
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(schema)
            self._db = db
        except sqlite3.Error as exc:
            log.error("outbox %s: the %s cannot be stored (%s): it is held in memory", path, self.what, exc)
            on_error()

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _write(self, sql: str, params: tuple[Any, ...]) -> bool:
        if self._db is None:
            return False
        try:
            self._db.execute(sql, params)
        except sqlite3.Error as exc:
            log.warning("outbox %s: %s not written (%s): held in memory", self.path, self.what, exc)
            return False
        return True

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        if self._db is None:
            return []
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            log.error("outbox %s: %s not read (%s)", self.path, self.what, exc)
            self.on_error()
            return []


def decode_strings(text: str) -> frozenset[str]:
    """A stored JSON list of strings; ValueError (or TypeError) when it is not one."""
    decoded = json.loads(text)
    if not isinstance(decoded, list) or not all(isinstance(i, str) for i in decoded):
        raise ValueError("not a list of strings")
    return frozenset(decoded)
