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

Every notification `carry` sees asks Alertmanager which of its group's alerts a silence or another
alert mutes. Under an alert storm (hundreds of notifications a minute) one read of `/api/v2/alerts`
serves the notifications that come within ALERTS_SHARED_SECONDS of it, unless it cannot answer for
one: a notification carrying a firing alert the read does not list (newer than it), or leaving out an
alert the read does not explain, gets a read of its own. The poll reads afresh and its read replaces the
shared one.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

from triton_sre import conventions as c
from triton_sre.bot.outbox import MessageRef, Outbox
from triton_sre.bot.payload import INHIBITED_KEY, named
from triton_sre.bot.recovery_watch import REFRESH_KEY
from triton_sre.bot.silence_state import Note, SilenceState, View, silenced_view
from triton_sre.bot.silences import Silence, SilenceReadError, group_silences, read_alerts, read_groups

log = logging.getLogger(__name__)
T = TypeVar("T")

SILENCE_POLL_SECONDS = 30.0
SILENCE_READ_SECONDS = 5.0
GONE_AFTER_SECONDS = 150.0
ALERTS_SHARED_SECONDS = 2.0
"""A read of Alertmanager's alerts serves the notifications `carry` sees within this many seconds of it."""
CARRIED_KEY = "tritonSreCarried"
"""The bot's own key on a notification `carry` completed from Alertmanager's API: not read again."""
RESOLVED_TEXT = (
    ":white_check_mark: The alert resolved while silenced: it left Alertmanager, which sends no "
    "notification for an alert its silence holds."
)
PARTLY_RESOLVED_TEXT = (
    ":white_check_mark: {} resolved while silenced: it left Alertmanager, which sends no notification "
    "for an alert its silence holds. {} alert(s) of the group still fire."
)

NAMED_LABELS = {"name": c.LABEL_ALERTNAME, "model": c.LABEL_MODEL, "instance": c.LABEL_INSTANCE}
"""An alert's labels as `named` reads them (the message's stored alert states)."""

Reply = Callable[[MessageRef, str], None]
"""(the group's message, text): posts a reply in its thread; raises the delivery's error when Slack
refuses."""
Edit = Callable[[str, str, str, list[dict[str, Any]]], None]
"""(channel, ts, text, blocks): edits a message (chat.update); raises when Slack refuses."""
AlertsRead = tuple[dict[str, list[Silence]], dict[str, Mapping[str, Any]]]
"""`read_alerts`' answer: the silences holding each silenced alert, every alert listed."""


class SilenceWatch:
    def __init__(
        self,
        url: str,
        outbox: Outbox,
        reply: Reply,
        count: Callable[[str], None],
        edit: Edit | None = None,
        state: SilenceState | None = None,
    ) -> None:
        self.url = url
        self.outbox = outbox
        self.reply = reply
        self.count = count
        self.edit = edit
        self.state = state
        self.gone_after_seconds = GONE_AFTER_SECONDS
        self._gone: dict[str, tuple[frozenset[str], float]] = {}
        """Group key -> its firing alerts missing from Alertmanager while silenced, and since when."""
        stored = state.announced() if state is not None else {}
        self._notes: dict[str, Note] = {k: note for k, (_, note) in stored.items() if note is not None}
        """Group key -> the note its message shows while silenced, and whether every firing alert is held."""
        self.poll_seconds = SILENCE_POLL_SECONDS
        self._next = 0.0
        self._shown: dict[str, frozenset[str]] = {k: ids for k, (ids, _) in stored.items()}
        """Group key -> ids of the silences its thread last announced."""
        self.clock: Callable[[], float] = time.monotonic
        self._last: tuple[float, AlertsRead] | None = None
        """When the last read of Alertmanager's alerts began, and its answer (`_shared`)."""

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
        read = self._read()
        if read is None:
            return
        held, listed = read
        self._joined_inhibited(refs, listed)
        open_keys = {ref.group_key for ref in refs}
        for key in [k for k in self._shown if k not in open_keys]:
            del self._shown[key]  # resolved: the resolution said it
            self._gone.pop(key, None)
            self._notes.pop(key, None)
            if self.state is not None:
                self.state.save_announced(key, frozenset(), None)
        for ref in refs:
            firing = [a for a in ref.alerts if a.get("status") == c.AM_STATUS_FIRING]
            if self._resolved_while_silenced(ref, firing, listed, held, now):
                continue
            ids, said, note = _silences_of(firing, held)
            key = ref.group_key
            if ids == self._shown.get(key, frozenset()):
                if note == self._notes.get(key):
                    continue
                said = ""  # the same silences holding other alerts of the group: the message only
            try:
                self._edit(ref.channel, ref.ts, key, note)
                if said:
                    self.reply(ref, said)
            except Exception as exc:  # Slack down or refusing: the next poll tries again
                log.warning("group %s: silence not shown: %s", key, exc)
                continue
            self._store(key, ids, note)

    def _joined_inhibited(self, refs: list[MessageRef], listed: Mapping[str, Mapping[str, Any]]) -> None:
        """Queue again the last notification of each open group that an inhibited alert joined since:
        Alertmanager sends none (its notification log sees the same alerts once the inhibited one is
        muted), and `carry` adds it, shown inhibited."""
        inhibited = {f for f, raw in listed.items() if _inhibitors(raw, {})}
        for ref in refs if inhibited else []:
            firing = {a.get("fingerprint") for a in ref.alerts if a.get("status") == c.AM_STATUS_FIRING}
            if ref.status != c.AM_STATUS_FIRING or not inhibited - firing:
                continue
            payload = self.outbox.last_payload(ref.group_key)
            if payload is None or not might_join(payload, listed) - firing:
                continue
            if not [a for a in self._inhibited(payload, listed, firing) if a["fingerprint"] not in firing]:
                continue
            for key in (REFRESH_KEY, CARRIED_KEY):
                payload.pop(key, None)
            self.outbox.enqueue(ref.group_key, payload)
            log.info("group %s: an inhibited alert joined it: its message is drawn again", ref.group_key)

    def carry(self, ref: MessageRef | None, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The notification with the alerts the group's message shows firing that it left out because a
        silence holds them or another alert inhibits them (Alertmanager's MuteStage, the silencer's and
        the inhibitor's, drops a muted alert from the webhook, so the bot drew it resolved), as
        Alertmanager's API lists them; and, in a group whose thread announced a
        silence, those Alertmanager no longer lists (resolved under the silence, or Alertmanager
        restarted) as the message shows them, for the poll to draw resolved. None when it leaves out
        none of them (or Alertmanager cannot be read: counted, logged)."""
        if payload.get(CARRIED_KEY):  # carried already (this read's own result, queued again)
            return None
        given = [a for a in payload.get("alerts") or [] if isinstance(a, dict)]
        sent = {a.get("fingerprint") for a in given}
        left_out = [
            str(a.get("fingerprint"))
            for a in (ref.alerts if ref is not None else [])
            if a.get("status") == c.AM_STATUS_FIRING and a.get("fingerprint") not in sent
        ]
        key = ref.group_key if ref is not None else ""

        def kept(read: AlertsRead) -> list[dict[str, Any]]:
            return [a for f in left_out if (a := self._kept(key, f, *read)) is not None]

        read = self._shared({a.get("fingerprint") for a in given if a.get("status") == c.AM_STATUS_FIRING})
        carried = kept(read) if read is not None else []
        if read is None or len(carried) < len(left_out):  # no shared read, or one that cannot say why
            read = self._read()
            if read is None:
                return None
            carried = kept(read)
        listed = read[1]
        there = sent | {a["fingerprint"] for a in carried}
        if might_join(payload, listed) - there:
            joined = self._inhibited(payload, listed, sent)
            carried += [a for a in joined if a["fingerprint"] not in there]
        if not carried:
            return None
        alerts = [*(payload.get("alerts") or []), *carried]
        return {**payload, "status": c.AM_STATUS_FIRING, "alerts": alerts, CARRIED_KEY: True}

    def _shared(self, firing: Collection[Any]) -> AlertsRead | None:
        """The last read of Alertmanager's alerts if it answers for a notification carrying `firing`:
        begun less than ALERTS_SHARED_SECONDS ago and listing each of them (a read older than an alert
        cannot say what mutes the alerts of its group)."""
        if self._last is None:
            return None
        began, read = self._last
        if not 0 <= self.clock() - began < ALERTS_SHARED_SECONDS or not set(firing) <= read[1].keys():
            return None
        return read

    def _read(self) -> AlertsRead | None:
        """Alertmanager's alerts and silences read now, kept for `_shared`; None when they cannot be read
        (counted, logged)."""
        self._last = None
        began = self.clock()
        read = self._counted("silences", lambda: read_alerts(self.url, SILENCE_READ_SECONDS))
        self._last = None if read is None else (began, read)
        return read

    def _inhibited(
        self, payload: Mapping[str, Any], listed: Mapping[str, Mapping[str, Any]], known: Collection[Any]
    ) -> list[dict[str, Any]]:
        """`inhibited_members` of the notification's group from Alertmanager's groups ([] when they
        cannot be read: counted, logged)."""
        groups = self._counted("alert groups", lambda: read_groups(self.url, SILENCE_READ_SECONDS))
        return [] if groups is None else inhibited_members(payload, listed, groups, {str(k) for k in known})

    def _counted(self, what: str, read: Callable[[], T]) -> T | None:
        """`read()`'s answer, counted on the bot's reads of Alertmanager; None when it raises
        SilenceReadError (counted with its outcome, logged naming `what`)."""
        try:
            answer = read()
        except SilenceReadError as exc:
            self.count(exc.outcome)
            log.info("%s not read from Alertmanager: %s", what, exc)
            return None
        self.count(c.BOT_OUTCOME_OK)
        return answer

    def _kept(
        self, key: str, fingerprint: str, held: dict[str, list[Silence]], listed: Mapping[str, Any]
    ) -> dict[str, Any] | None:
        """A left-out alert the message keeps firing: one a silence holds or another alert inhibits (as
        Alertmanager lists it, the inhibiting alerts named), or in a group whose thread announced a
        silence one Alertmanager no longer lists (as last stored); one whose resolution the poll queued
        as it left (resolved, as queued: a notification leaving it out supersedes the queued one)."""
        by = _inhibitors(listed[fingerprint], listed) if fingerprint in listed else ""
        if (fingerprint in held or by) and fingerprint in listed:
            return {**_as_sent(listed[fingerprint]), **({INHIBITED_KEY: by} if by else {})}
        gone, since = self._gone.get(key, (frozenset(), 0.0))
        queued = since == math.inf and fingerprint in gone
        if (self._shown.get(key) or queued) and fingerprint not in listed:
            return stored_alert(self.outbox, key, fingerprint)
        return None

    def _resolved_while_silenced(
        self,
        ref: MessageRef,
        firing: list[dict[str, Any]],
        listed: Mapping[str, Any],
        held: dict[str, list[Silence]],
        now: float,
    ) -> bool:
        """True while firing alerts of a silenced group are gone from Alertmanager (nothing else is said
        of the group meanwhile); once gone `gone_after_seconds`, their resolution is queued (the others
        kept firing), the note recounted without them, and the thread told."""
        key = ref.group_key
        gone = frozenset(str(a.get("fingerprint")) for a in firing if a.get("fingerprint") not in listed)
        if not self._shown.get(key) or not gone:
            self._gone.pop(key, None)
            return False
        if self._gone.get(key, (None, 0.0))[0] != gone:
            self._gone[key] = (gone, now)
        since = self._gone[key][1]
        if now - since < self.gone_after_seconds:
            return True
        self._gone[key] = (gone, math.inf)  # once: the worker draws it before the next poll
        left = [a for a in firing if str(a.get("fingerprint")) not in gone]
        ids, _, note = _silences_of(left, held)
        self._store(key, ids, note)  # what the worker's drawing shows: no "silence ended" said
        try:
            if queue_resolution(self.outbox, ref.group_key, gone, now):
                names = ", ".join(named(a) for a in firing if str(a.get("fingerprint")) in gone)
                self.reply(ref, PARTLY_RESOLVED_TEXT.format(names, len(left)) if left else RESOLVED_TEXT)
        except Exception as exc:  # Slack down or refusing: the resolution is drawn all the same
            log.warning("group %s: resolution while silenced not said: %s", key, exc)
        return True

    def _store(self, key: str, ids: frozenset[str], note: Note | None) -> None:
        """The silences a group's thread announced and the note its message shows."""
        self._shown[key] = ids
        self._notes = {k: v for k, v in self._notes.items() if k != key} | ({key: note} if note else {})
        if self.state is not None:
            self.state.save_announced(key, ids, note)

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


def queue_resolution(
    outbox: Outbox, group_key: str, fingerprints: Collection[str] | None, now: float
) -> bool:
    """Queue the resolution of a group's alerts that resolved under a silence (Alertmanager sends none):
    its last notification with those alerts (None: every alert) resolved now, the others as they were.
    False without a notification stored."""
    payload = outbox.last_payload(group_key)
    if payload is None:
        log.warning("group %s: resolved while silenced, but no notification of it is stored", group_key)
        return False
    payload.pop(REFRESH_KEY, None)  # the recovery watch's: its reply is no resolution's
    ended = datetime.fromtimestamp(now, timezone.utc).isoformat()
    alerts = [a for a in payload.get("alerts") or [] if isinstance(a, dict)]
    there = {a.get("fingerprint") for a in alerts}
    # a notification stored since (Alertmanager's, not yet drawn) may leave them out: the last stored
    alerts += [a for f in fingerprints or () if f not in there and (a := stored_alert(outbox, group_key, f))]
    alerts = [
        {**a, "status": c.AM_STATUS_RESOLVED, "endsAt": ended}
        if fingerprints is None or a.get("fingerprint") in fingerprints
        else a
        for a in alerts
    ]
    firing = any(a.get("status") == c.AM_STATUS_FIRING for a in alerts)
    status = c.AM_STATUS_FIRING if firing else c.AM_STATUS_RESOLVED
    outbox.enqueue(group_key, {**payload, "status": status, "alerts": alerts})
    return True


def stored_alert(outbox: Outbox, group_key: str, fingerprint: str) -> dict[str, Any] | None:
    """An alert of a group as the newest stored notification holding it has it (None: none stored)."""
    payload = outbox.last_payload(
        group_key, json.dumps({"fingerprint": fingerprint}, separators=(",", ":"))[1:-1]
    )
    alerts = payload.get("alerts") if payload is not None else None
    return next(
        (a for a in alerts or [] if isinstance(a, dict) and a.get("fingerprint") == fingerprint), None
    )


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
        which = [named(a) for a in firing if silence in held.get(str(a.get("fingerprint", "")), [])]
        names = ", ".join(which)
        parts.append(f"{names} {silence.describe()}" if names else silence.describe())
    return "; ".join(_esc(p) for p in parts)


def inhibited_members(
    payload: Mapping[str, Any],
    listed: Mapping[str, Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    known: Collection[str],
) -> list[dict[str, Any]]:
    """The alerts of a notification's group that Alertmanager holds inhibited (`status.inhibitedBy`),
    as its webhook would send them firing, the inhibiting alerts named. The group is the one of
    Alertmanager's `groups` with the notification's receiver and group labels that holds an alert of
    `known` (the notification's, or the message's): two routes to one receiver with the same
    `group_by` (deploy's pages and tickets) make two groups alike but for their alerts. Its webhook
    leaves them out from the first notification on."""
    found: dict[str, dict[str, Any]] = {}
    for group in groups:
        alerts = [a for a in group.get("alerts") or [] if isinstance(a, Mapping)]
        if not _same_group(payload, group) or not any(a.get("fingerprint") in known for a in alerts):
            continue
        for raw in alerts:
            fingerprint = str(raw.get("fingerprint") or "")
            if fingerprint and (by := _inhibitors(raw, listed)):
                found[fingerprint] = {**_as_sent(raw), INHIBITED_KEY: by}
    return list(found.values())


def might_join(payload: Mapping[str, Any], listed: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Alerts Alertmanager lists inhibited, routed to the notification's receiver and holding its group
    labels: those `inhibited_members` may find (no group read without one)."""
    grouped = _str_map(payload.get("groupLabels"))
    found = set()
    for fingerprint, raw in listed.items():
        labels = _str_map(raw.get("labels"))
        routed = raw.get("receivers") if isinstance(raw.get("receivers"), list) else []
        names = {str(r.get("name")) for r in routed if isinstance(r, Mapping)}
        held = all(labels.get(k) == v for k, v in grouped.items())
        if str(payload.get("receiver") or "") in names and held and _inhibitors(raw, {}):
            found.add(fingerprint)
    return found


def _same_group(payload: Mapping[str, Any], group: Mapping[str, Any]) -> bool:
    """Whether an Alertmanager group has the notification's receiver and group labels."""
    receiver = group.get("receiver") if isinstance(group.get("receiver"), Mapping) else {}
    return str(receiver.get("name")) == str(payload.get("receiver") or "") and _str_map(
        group.get("labels")
    ) == _str_map(payload.get("groupLabels"))


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


def _inhibitors(raw: Mapping[str, Any], listed: Mapping[str, Mapping[str, Any]]) -> str:
    """The alerts inhibiting an alert of Alertmanager's API (its `status.inhibitedBy` fingerprints),
    named as the message names alerts; "" when none does. One Alertmanager no longer lists is
    `another alert`."""
    status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
    ids = status.get("inhibitedBy") if isinstance(status.get("inhibitedBy"), list) else []
    names = []
    for fingerprint in ids:
        source = listed.get(str(fingerprint))
        labels = source.get("labels") if isinstance(source, Mapping) else None
        if not isinstance(labels, Mapping):
            names.append("another alert")
            continue
        state = {k: str(labels.get(v, "")) for k, v in NAMED_LABELS.items()}
        names.append(named(state))
    return ", ".join(dict.fromkeys(names))


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
