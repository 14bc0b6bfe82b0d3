"""The delivery loop's poll of Alertmanager's silences: when a silence starts holding a group's firing
alerts, the group's message is edited to say so (SILENCED, by whom, until when) and its thread gets a
reply; when the last one ends, the message is put back as it was rendered and the thread says so.

Alertmanager sends nothing for a silenced group, so without this poll the message says FIRING with
nothing telling the channel that someone is on it. What was announced and the message as rendered
are kept in the outbox's file (silence_state.py): a restarted bot neither announces a silence in
force again nor loses the message to put back.

An alert that resolves while a silence still matches it gets no notification either: Alertmanager's
MuteStage mutes it whatever its state, the pipeline ends quietly, and the dispatcher then deletes the
resolved alert from its group, so the end of the silence brings nothing. A silenced group whose firing
alerts have all left Alertmanager's `/api/v2/alerts` (it lists no resolved alert) for
`gone_after_seconds` is handed to `resolve`, which draws it resolved. The wait is longer than twice
Prometheus' one-minute resend of firing alerts: an Alertmanager restarted without its alerts (it keeps
none on disk) has them back by then.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot.outbox import MessageRef, Outbox
from triton_sre.bot.payload import display
from triton_sre.bot.silence_state import Note, SilenceState, View, silenced_view
from triton_sre.bot.silences import Silence, SilenceReadError, group_silences, read_alerts

log = logging.getLogger(__name__)

SILENCE_POLL_SECONDS = 30.0
SILENCE_READ_SECONDS = 5.0
GONE_AFTER_SECONDS = 150.0
RESOLVED_TEXT = (
    ":white_check_mark: The alert resolved while silenced: it left Alertmanager, which sends no "
    "notification for an alert its silence holds."
)

Reply = Callable[[MessageRef, str], None]
"""(the group's message, text): posts a reply in its thread; raises the delivery's error when Slack
refuses."""
Edit = Callable[[str, str, str, list[dict[str, Any]]], None]
"""(channel, ts, text, blocks): edits a message (chat.update); raises when Slack refuses."""


class SilenceWatch:
    def __init__(
        self,
        url: str,
        outbox: Outbox,
        reply: Reply,
        count: Callable[[str], None],
        edit: Edit | None = None,
        state: SilenceState | None = None,
        resolve: Callable[[MessageRef], bool] | None = None,
    ) -> None:
        self.url = url
        self.outbox = outbox
        self.reply = reply
        self.count = count
        self.edit = edit
        self.state = state
        self.resolve = resolve
        """(the group's message) -> whether a resolution of its alerts was queued."""
        self.gone_after_seconds = GONE_AFTER_SECONDS
        self._gone: dict[str, float] = {}
        """Group key -> when its firing alerts were first missing from Alertmanager while silenced."""
        stored = state.announced() if state is not None else {}
        self._notes: dict[str, Note] = {k: note for k, (_, note) in stored.items() if note is not None}
        """Group key -> the note its message shows while silenced, and whether every firing alert is held."""
        self.poll_seconds = SILENCE_POLL_SECONDS
        self._next = 0.0
        self._shown: dict[str, frozenset[str]] = {k: ids for k, (ids, _) in stored.items()}
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
            held, listed = read_alerts(self.url, SILENCE_READ_SECONDS)
        except SilenceReadError as exc:
            self.count(exc.outcome)
            log.info("silences not read from Alertmanager: %s", exc)
            return
        self.count(c.BOT_OUTCOME_OK)
        open_keys = {ref.group_key for ref in refs}
        for key in [k for k in self._shown if k not in open_keys]:
            del self._shown[key]  # resolved: the resolution said it
            self._gone.pop(key, None)
            self._notes.pop(key, None)
            if self.state is not None:
                self.state.save_announced(key, frozenset(), None)
        for ref in refs:
            firing = [a for a in ref.alerts if a.get("status") == c.AM_STATUS_FIRING]
            if self._resolved_while_silenced(ref, firing, listed, now):
                continue
            ids, said, note = _silences_of(firing, held)
            key = ref.group_key
            if ids == self._shown.get(key, frozenset()):
                if note == self._notes.get(key):
                    continue
                said = ""  # the same silences holding other alerts of the group: the message only
            notes = {k: v for k, v in self._notes.items() if k != key} | ({key: note} if note else {})
            try:
                self._edit(ref.channel, ref.ts, key, note)
                if said:
                    self.reply(ref, said)
            except Exception as exc:  # Slack down or refusing: the next poll tries again
                log.warning("group %s: silence not shown: %s", key, exc)
                continue
            self._shown[key] = ids
            self._notes = notes
            if self.state is not None:
                self.state.save_announced(key, ids, note)

    def carry(self, ref: MessageRef | None, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The notification with the alerts the group's message shows firing that it left out because a
        silence holds them (Alertmanager's MuteStage drops a muted alert from the webhook, so the bot
        drew it resolved), as Alertmanager's API lists them; None when it leaves out none of them (or
        Alertmanager cannot be read: counted, logged)."""
        sent = {a.get("fingerprint") for a in payload.get("alerts") or [] if isinstance(a, dict)}
        left_out = [
            str(a.get("fingerprint"))
            for a in (ref.alerts if ref is not None else [])
            if a.get("status") == c.AM_STATUS_FIRING and a.get("fingerprint") not in sent
        ]
        if not left_out:
            return None
        try:
            held, listed = read_alerts(self.url, SILENCE_READ_SECONDS)
        except SilenceReadError as exc:
            self.count(exc.outcome)
            log.info("silences not read from Alertmanager: %s", exc)
            return None
        self.count(c.BOT_OUTCOME_OK)
        carried = [_as_sent(listed[f]) for f in left_out if f in held and f in listed]
        if not carried:
            return None
        return {**payload, "status": c.AM_STATUS_FIRING, "alerts": [*(payload.get("alerts") or []), *carried]}

    def _resolved_while_silenced(
        self, ref: MessageRef, firing: list[dict[str, Any]], listed: frozenset[str], now: float
    ) -> bool:
        """True while a silenced group's firing alerts are all gone from Alertmanager (nothing else is
        said of it meanwhile); once gone `gone_after_seconds`, its resolution is queued and replied."""
        key = ref.group_key
        if not self._shown.get(key) or not firing or any(a.get("fingerprint") in listed for a in firing):
            self._gone.pop(key, None)
            return False
        since = self._gone.setdefault(key, now)
        if now - since < self.gone_after_seconds or self.resolve is None:
            return True
        try:
            queued = self.resolve(ref)
            self._gone[key] = math.inf  # once: the worker draws it before the next poll
            if queued:
                self.reply(ref, RESOLVED_TEXT)
        except Exception as exc:  # Slack down or refusing: the resolution is drawn all the same
            log.warning("group %s: resolution while silenced not said: %s", key, exc)
        return True

    def dress(self, group_key: str, text: str, blocks: list[dict[str, Any]]) -> View:
        """A firing group's newly rendered message as it reads under the silence its thread announced."""
        note = self._notes.get(group_key)
        return (text, blocks) if note is None else silenced_view(text, blocks, *note)

    def _edit(self, channel: str, ts: str, group_key: str, note: Note | None) -> None:
        """The message shown silenced (`note`) or as rendered (None); nothing without its rendering."""
        view = self.state.view(group_key) if self.state is not None else None
        if view is None or self.edit is None:
            return
        self.edit(channel, ts, *(view if note is None else silenced_view(*view, *note)))


def _silences_of(
    firing: list[dict[str, Any]], held: dict[str, list[Silence]]
) -> tuple[frozenset[str], str, Note | None]:
    """The ids of the silences holding a group's firing alerts, the thread's reply, the message's note."""
    count, silences = group_silences(firing, held)
    if not silences:
        return frozenset(), ":bell: The silence ended: Alertmanager notifies this group again.", None
    which = "" if count == len(firing) else f" ({count} of {len(firing)} alerts)"
    who = _who(silences, [] if not which else firing, held)
    note = (
        f":no_bell: *Silenced* in Alertmanager{which} {who}. The alert still fires; "
        "Alertmanager notifies this group again if it still fires when the silence ends."
    )
    return (
        frozenset(s.id for s in silences),
        f":no_bell: Silenced in Alertmanager{which} {who}",
        (
            note,
            count == len(firing),
        ),
    )


def _who(silences: list[Silence], firing: list[dict[str, Any]], held: dict[str, list[Silence]]) -> str:
    """`by alice until 22:00 UTC: "why"`, each silence's; with `firing` (only some alerts are held) each
    names the alerts it holds first: `TritonModelUnavailable (ranker) on triton-c:8003 by alice …`."""
    parts = []
    for silence in silences:
        which = [
            display(a) + (f" on {a['instance']}" if a.get("instance") else "")
            for a in firing
            if silence in held.get(str(a.get("fingerprint", "")), [])
        ]
        names = ", ".join(which)
        parts.append(f"{names} {silence.describe()}" if names else silence.describe())
    return "; ".join(_esc(p) for p in parts)


def _as_sent(raw: Mapping[str, Any]) -> dict[str, Any]:
    """An alert of Alertmanager's API v2 as its webhook sends a firing alert."""
    return {
        "status": c.AM_STATUS_FIRING,
        "labels": dict(raw.get("labels") or {}),
        "annotations": dict(raw.get("annotations") or {}),
        "startsAt": raw.get("startsAt") or "",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": raw.get("generatorURL") or "",
        "fingerprint": raw.get("fingerprint") or "",
    }


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
