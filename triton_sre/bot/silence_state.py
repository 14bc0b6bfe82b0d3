"""What the silence watch needs beyond the outbox's message map, kept in the outbox's SQLite file: per
alert group, the message as the worker last rendered it (to show it silenced in place, and to put it
back when the silence ends) and the silences its thread announced (so a restarted bot does not
announce them again).

A table of its own (``CREATE TABLE IF NOT EXISTS``: an older outbox gains it at the next start) on a
connection of its own to the outbox's file, written with the outbox's durability (WAL,
``synchronous=FULL``) under the lock the outbox holds on ``<outbox>.lock``. A write the disk refuses
is kept in memory and logged; a row that does not decode, or a table that cannot be read, is an
ERROR line and `on_error` (the bot's metric) and reads as nothing: at worst the message is not edited
and a silence is announced once more.

`silenced_view` is pure: a rendered message (text, blocks) as it reads while a silence holds its group.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from triton_sre.bot.sidestore import SideStore, decode_strings
from triton_sre.bot.slack import fit_blocks

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS silence_views (
    group_key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    blocks TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS silence_announced (
    group_key TEXT PRIMARY KEY,
    ids TEXT NOT NULL,
    note TEXT NOT NULL,
    whole INTEGER NOT NULL
);
"""

FIRING_WORD = "FIRING"
SILENCED_WORD = "SILENCED"
View = tuple[str, list[dict[str, Any]]]
Note = tuple[str, bool]
"""The line a silenced message shows, and whether every firing alert of the group is held."""
Announced = tuple[frozenset[str], Note | None]
"""The ids of the silences a group's thread announced, and the note its message shows (None: none)."""


class SilenceState(SideStore):
    what = "silence state"

    def __init__(self, path: str, on_error: Callable[[], None] = lambda: None) -> None:
        super().__init__(path, _SCHEMA, on_error)
        self._views: dict[str, View] = {}  # what the disk refused (or all of it, without a database)

    # -- the message as last rendered ----------------------------------------------------------------
    def save_view(self, group_key: str, text: str, blocks: list[dict[str, Any]]) -> None:
        with self._lock:
            self._views[group_key] = (text, blocks)
            if self._write(
                "INSERT INTO silence_views (group_key, text, blocks) VALUES (?, ?, ?) ON CONFLICT(group_key) "
                "DO UPDATE SET text = excluded.text, blocks = excluded.blocks",
                (group_key, text, json.dumps(blocks)),
            ):
                del self._views[group_key]

    def view(self, group_key: str) -> View | None:
        with self._lock:
            if group_key in self._views:
                return self._views[group_key]
            rows = self._rows("SELECT text, blocks FROM silence_views WHERE group_key = ?", (group_key,))
        if not rows:
            return None
        row = rows[0]
        try:
            blocks = json.loads(row[1])
        except ValueError as exc:
            log.error(
                "outbox %s: the stored message of group %s does not decode (%s)", self.path, group_key, exc
            )
            self.on_error()
            return None
        return (str(row[0]), blocks) if isinstance(blocks, list) else None

    def forget(self, group_key: str) -> None:
        with self._lock:
            self._views.pop(group_key, None)
            self._write("DELETE FROM silence_views WHERE group_key = ?", (group_key,))
            self._write("DELETE FROM silence_announced WHERE group_key = ?", (group_key,))

    # -- the silences announced ---------------------------------------------------------------------
    def save_announced(self, group_key: str, ids: frozenset[str], note: Note | None) -> None:
        with self._lock:
            if not ids:
                self._write("DELETE FROM silence_announced WHERE group_key = ?", (group_key,))
                return
            text, whole = note or ("", False)
            self._write(
                "INSERT INTO silence_announced (group_key, ids, note, whole) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(group_key) DO UPDATE SET ids = excluded.ids, note = excluded.note, "
                "whole = excluded.whole",
                (group_key, json.dumps(sorted(ids)), text, int(whole)),
            )

    def announced(self) -> dict[str, Announced]:
        """Every group's announced silences as stored; a row that does not decode is left out (logged,
        counted): its silence is announced once more."""
        with self._lock:
            rows = self._rows("SELECT group_key, ids, note, whole FROM silence_announced")
        found: dict[str, Announced] = {}
        for key, ids, note, whole in rows:
            try:
                decoded = decode_strings(ids)
            except (ValueError, TypeError) as exc:
                log.error(
                    "outbox %s: the announced silences of group %s do not decode (%s): a silence in force "
                    "is announced once more",
                    self.path,
                    key,
                    exc,
                )
                self.on_error()
                continue
            found[str(key)] = (decoded, (str(note), bool(whole)) if note else None)
        return found


def silenced_view(text: str, blocks: list[dict[str, Any]], note: str, whole: bool) -> View:
    """The message while a silence holds its group: the header and the notification text say SILENCED
    instead of FIRING when every firing alert is held (`whole`), and a section under the header says
    by whom, until when and why (`note`, already escaped and redacted). Works on any template's blocks:
    the note goes after the first header (or first), the word is replaced where the template wrote it."""
    out = [dict(b) for b in blocks]
    at = next((i + 1 for i, b in enumerate(out) if b.get("type") == "header"), 0)
    if whole and at:
        header = dict(out[at - 1].get("text") or {})
        header["text"] = str(header.get("text", "")).replace(FIRING_WORD, SILENCED_WORD, 1)
        out[at - 1]["text"] = header
    out.insert(at, {"type": "section", "text": {"type": "mrkdwn", "text": note}})
    return (text.replace(FIRING_WORD, SILENCED_WORD, 1) if whole else text), fit_blocks(out)
