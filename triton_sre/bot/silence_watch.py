"""The delivery loop's poll of Alertmanager's silences: a thread reply under a group's message when
a silence starts holding its firing alerts, and when the last one ends.

Alertmanager sends nothing for a silenced group, so without this poll the message says FIRING with
nothing telling the channel that someone is on it. What was announced is held in memory: after a
restart a silence still in force is announced once more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from triton_sre import conventions as c
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.silences import SilenceReadError, group_silences, read_silenced

log = logging.getLogger(__name__)

SILENCE_POLL_SECONDS = 30.0
SILENCE_READ_SECONDS = 5.0

Reply = Callable[[str, str, str], None]
"""(channel, thread ts, text): posts a thread reply; raises the delivery's error when Slack refuses."""


class SilenceWatch:
    def __init__(self, url: str, outbox: Outbox, reply: Reply, count: Callable[[str], None]) -> None:
        self.url = url
        self.outbox = outbox
        self.reply = reply
        self.count = count
        self.poll_seconds = SILENCE_POLL_SECONDS
        self._next = 0.0
        self._shown: dict[str, frozenset[str]] = {}
        """Group key -> ids of the silences its thread last announced."""

    def due_in(self, now: float) -> float:
        return max(0.0, self._next - now)

    def poll(self, now: float) -> None:
        """Read the silences when due and announce each open group's change; never raises for
        Alertmanager (counted, logged) nor Slack (retried at the next poll)."""
        if now < self._next:
            return
        self._next = now + self.poll_seconds
        refs = self.outbox.open_messages()
        if not refs and not self._shown:
            return
        try:
            held = read_silenced(self.url, SILENCE_READ_SECONDS)
        except SilenceReadError as exc:
            self.count(exc.outcome)
            log.info("silences not read from Alertmanager: %s", exc)
            return
        self.count(c.BOT_OUTCOME_OK)
        open_keys = {ref.group_key for ref in refs}
        for key in [k for k in self._shown if k not in open_keys]:
            del self._shown[key]  # resolved: the resolution said it
        for ref in refs:
            firing = [a for a in ref.alerts if a.get("status") == c.AM_STATUS_FIRING]
            count, silences = group_silences(firing, held)
            ids = frozenset(s.id for s in silences)
            if ids == self._shown.get(ref.group_key, frozenset()):
                continue
            if silences:
                which = "" if count == len(firing) else f" ({count} of {len(firing)} alerts)"
                text = f":no_bell: Silenced in Alertmanager{which} " + "; ".join(
                    _esc(s.describe()) for s in silences
                )
            else:
                text = ":bell: The silence ended: Alertmanager notifies this group again."
            try:
                self.reply(ref.channel, ref.ts, text)
            except Exception as exc:  # Slack down or refusing: the next poll tries again
                log.warning("group %s: silence reply not posted: %s", ref.group_key, exc)
                continue
            self._shown[ref.group_key] = ids


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
