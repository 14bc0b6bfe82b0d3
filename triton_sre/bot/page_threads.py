"""Tickets a page inhibited, threaded under the page: Alertmanager's inhibit rule (deploy's
alertmanager.yml: a burn-rate page holds the ticket tier of the same alert, SLO, model and cluster)
lifts when the page resolves, and the tickets of the incident just fixed came as a new message, read
by an on-call going back to bed as a new incident (journey25).

The worker records each SLO page's message by (alert, SLO, model, cluster); a new group whose alerts
are all ticket-severity SLO alerts of a page recorded within `THREAD_WITHIN_SECONDS` of its last
change is posted as a reply in that page's thread, and its later changes are replied there too. Both
tables live beside the outbox's (sidestore.py); a write the disk refuses is kept in memory.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from triton_sre import conventions as c
from triton_sre.bot.payload import Alert
from triton_sre.bot.sidestore import SideStore

THREAD_WITHIN_SECONDS = 3600.0
"""How long after the page's message last changed (its resolution) a ticket is threaded under it."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS slo_pages (
    page TEXT PRIMARY KEY,
    channel TEXT NOT NULL,
    ts TEXT NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS threaded_groups (
    group_key TEXT PRIMARY KEY,
    parent_ts TEXT NOT NULL
);
"""


def _slo_key(alert: Alert, cluster_label: str) -> str:
    labels = alert.labels
    parts = (
        alert.name,
        labels.get(c.L_SLO, ""),
        labels.get(c.LABEL_MODEL, ""),
        labels.get(cluster_label, ""),
    )
    return "\x1f".join(parts)


def _slo_alerts(alerts: Iterable[Alert], severity: str) -> list[Alert]:
    return [a for a in alerts if a.labels.get(c.L_SLO) and a.labels.get(c.L_SEVERITY) == severity]


class PageThreads(SideStore):
    what = "page threads"

    def __init__(self, path: str, cluster_label: str, on_error: Callable[[], None] = lambda: None) -> None:
        super().__init__(path, _SCHEMA, on_error)
        self.cluster_label = cluster_label
        self._pages: dict[str, tuple[str, str, float]] = {}  # what the disk refused
        self._parents: dict[str, str] = {}

    def record_pages(self, alerts: Iterable[Alert], channel: str, ts: str) -> None:
        """The message (`channel`, `ts`) shows these alerts: remember it for each SLO page among them."""
        at = time.time()
        with self._lock:
            for key in {_slo_key(a, self.cluster_label) for a in _slo_alerts(alerts, c.SEVERITY_PAGE)}:
                self._pages[key] = (channel, ts, at)
                if self._write(
                    "INSERT INTO slo_pages (page, channel, ts, updated) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(page) DO UPDATE SET channel = excluded.channel, ts = excluded.ts, "
                    "updated = excluded.updated",
                    (key, channel, ts, at),
                ):
                    del self._pages[key]

    def page_for(self, alerts: Iterable[Alert]) -> tuple[str, str] | None:
        """(channel, ts) of the page a new group of tickets belongs under, or None: every alert is a
        ticket-severity SLO alert, and the page of the first one changed within THREAD_WITHIN_SECONDS."""
        shown = list(alerts)
        tickets = _slo_alerts(shown, c.SEVERITY_TICKET)
        if not tickets or len(tickets) != len(shown):
            return None
        key = _slo_key(tickets[0], self.cluster_label)
        with self._lock:
            found = self._pages.get(key)
            if found is None:
                rows = self._rows("SELECT channel, ts, updated FROM slo_pages WHERE page = ?", (key,))
                found = (str(rows[0][0]), str(rows[0][1]), float(rows[0][2])) if rows else None
        # the wall clock, as the time is kept across restarts; one stepped back since (NTP mending a clock
        # that ran ahead) makes the age negative: a page stamped over the bound ahead is as old as unknown
        if found is None or abs(time.time() - found[2]) > THREAD_WITHIN_SECONDS:
            return None
        return found[0], found[1]

    def thread(self, group_key: str, parent_ts: str) -> None:
        """The group's message is a reply in `parent_ts`'s thread."""
        with self._lock:
            self._parents[group_key] = parent_ts
            if self._write(
                "INSERT OR REPLACE INTO threaded_groups (group_key, parent_ts) VALUES (?, ?)",
                (group_key, parent_ts),
            ):
                del self._parents[group_key]

    def parent(self, group_key: str) -> str | None:
        """The thread a group's message is a reply in (None: a message of its own)."""
        with self._lock:
            if group_key in self._parents:
                return self._parents[group_key]
            rows = self._rows("SELECT parent_ts FROM threaded_groups WHERE group_key = ?", (group_key,))
        return str(rows[0][0]) if rows else None
