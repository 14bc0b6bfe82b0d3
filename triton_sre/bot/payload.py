"""Pure: an Alertmanager notification (webhook payload version 4) -> `AlertGroup`, and what makes a repeat.

`parse_group` reads a payload leniently (unknown fields are ignored, missing ones defaulted; only a
payload that is not an object with an ``alerts`` list is refused). `digest` is what makes a repeat a
repeat: the group's status and each alert's fingerprint and status. `describe_change` says in one
line what changed between two notifications of a group.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from triton_sre import conventions as c
from triton_sre.namespacing import in_cluster, model_name

__all__ = [
    "Alert",
    "AlertGroup",
    "PayloadError",
    "alert_states",
    "describe_change",
    "digest",
    "parse_group",
    "valid_unicode",
    "with_left_out",
]

INHIBITED_KEY = "tritonSreInhibitedBy"
"""The bot's own key on an alert it carried back from Alertmanager's API (silence_watch.carry): the
alerts inhibiting it, named (Alertmanager's webhook leaves an inhibited alert out)."""
LEFT_OUT_KEY = "tritonSreLeftOut"
"""The bot's own key on a firing notification (`with_left_out`): the alerts the message showed firing
that it leaves out, as stored states, when no Alertmanager can be read to say why."""
LEFT_OUT_WHY = "resolved, silenced or inhibited: without an Alertmanager URL the bot cannot tell which"


class PayloadError(ValueError):
    """The webhook body is not an Alertmanager notification."""


@dataclass(frozen=True)
class Alert:
    status: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: str = ""
    ends_at: str = ""
    generator_url: str = ""
    fingerprint: str = ""
    inhibited_by: str = ""  # the alerts inhibiting it, named (INHIBITED_KEY)

    @property
    def name(self) -> str:
        return self.labels.get(c.LABEL_ALERTNAME, "")


@dataclass(frozen=True)
class AlertGroup:
    group_key: str
    status: str
    alerts: tuple[Alert, ...]
    receiver: str = ""
    group_labels: Mapping[str, str] = field(default_factory=dict)
    common_labels: Mapping[str, str] = field(default_factory=dict)
    external_url: str = ""
    truncated_alerts: int = 0
    left_out: tuple[Mapping[str, str], ...] = ()  # shown firing, not in this notification (LEFT_OUT_KEY)
    shared_models: frozenset[str] = frozenset()  # model names of two namespaces: `<namespace>::<model>`
    cluster_label: str = ""  # the label naming an alert's cluster (the worker's; "" names none)


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _fingerprint(labels: Mapping[str, str]) -> str:
    joined = "\x00".join(f"{k}\x01{v}" for k, v in sorted(labels.items()))
    return hashlib.sha256(joined.encode()).hexdigest()[:16]


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def valid_unicode(raw: bytes, payload: Any) -> tuple[Any, bool]:
    """`payload` (the JSON `raw` decoded) with each lone surrogate (a `\\ud800` escape: valid JSON, no
    text: the outbox could not store it, and Slack could not show it) written as `?`, and whether any
    was; `raw` is read only to skip the walk when it escapes no surrogate at all."""
    if not _SURROGATE_ESCAPE.search(raw):
        return payload, False
    found = False

    def mend(value: Any) -> Any:
        nonlocal found
        if isinstance(value, str):
            text = value.encode("utf-8", "replace").decode("utf-8")
            found = found or text != value
            return text
        if isinstance(value, list):
            return [mend(item) for item in value]
        if isinstance(value, dict):
            return {mend(key): mend(item) for key, item in value.items()}
        return value

    return mend(payload), found


def parse_group(payload: Any) -> AlertGroup:
    """A webhook payload -> `AlertGroup`; `PayloadError` when it is not a notification at all."""
    if not isinstance(payload, Mapping):
        raise PayloadError("the body must be a JSON object")
    raw_alerts = payload.get("alerts")
    if not isinstance(raw_alerts, list):
        raise PayloadError("the body has no 'alerts' list")
    alerts: dict[str, Alert] = {}  # by fingerprint: one alert sent twice in a group is one alert
    for raw in raw_alerts:
        if not isinstance(raw, Mapping):
            raise PayloadError("each alert must be an object")
        labels = _str_map(raw.get("labels"))
        status = _text(raw.get("status")) or c.AM_STATUS_FIRING
        fingerprint = _text(raw.get("fingerprint")) or _fingerprint(labels)
        if fingerprint in alerts and alerts[fingerprint].labels != labels:
            # another alert under a fingerprint already seen (a sender writing one for all, a collision):
            # its own, from its labels, or it would be dropped as a copy of the first
            fingerprint = _fingerprint(labels)
        alerts.setdefault(
            fingerprint,
            Alert(
                status=status if status in (c.AM_STATUS_FIRING, c.AM_STATUS_RESOLVED) else c.AM_STATUS_FIRING,
                labels=labels,
                annotations=_str_map(raw.get("annotations")),
                starts_at=_text(raw.get("startsAt")),
                ends_at=_text(raw.get("endsAt")),
                generator_url=_text(raw.get("generatorURL")),
                fingerprint=fingerprint,
                inhibited_by=_text(raw.get(INHIBITED_KEY)),
            ),
        )
    group_labels = _str_map(payload.get("groupLabels"))
    group_key = _text(payload.get("groupKey"))
    if not group_key:
        receiver = _text(payload.get("receiver"))
        group_key = f"{receiver}:{_fingerprint(group_labels)}"
    firing = any(a.status == c.AM_STATUS_FIRING for a in alerts.values())
    status = _text(payload.get("status")) or (c.AM_STATUS_FIRING if firing else c.AM_STATUS_RESOLVED)
    truncated = payload.get("truncatedAlerts")
    return AlertGroup(
        group_key=group_key,
        status=status if status in (c.AM_STATUS_FIRING, c.AM_STATUS_RESOLVED) else c.AM_STATUS_FIRING,
        alerts=tuple(alerts.values()),
        receiver=_text(payload.get("receiver")),
        group_labels=group_labels,
        common_labels=_str_map(payload.get("commonLabels")),
        external_url=_text(payload.get("externalURL")),
        # a count of alerts Alertmanager left out (its max_alerts); no sender's negative count shows
        truncated_alerts=max(0, truncated)
        if isinstance(truncated, int) and not isinstance(truncated, bool)
        else 0,
        left_out=tuple(
            {k: _text(v) for k, v in state.items()}
            for state in (payload.get(LEFT_OUT_KEY) if isinstance(payload.get(LEFT_OUT_KEY), list) else [])
            if isinstance(state, Mapping) and _text(state.get("fingerprint")) not in alerts
        ),
    )


def with_left_out(shown: Sequence[Mapping[str, str]], payload: dict[str, Any]) -> dict[str, Any]:
    """A firing notification with the alerts the message shows firing (or left out) that it does not
    carry, under LEFT_OUT_KEY: Alertmanager's webhook leaves out a silenced or inhibited alert as it
    does a resolved one it no longer sends, and without its API nothing tells them apart. A
    notification that says the group resolved is taken at its word."""
    if payload.get("status") == c.AM_STATUS_RESOLVED or not isinstance(payload.get("alerts"), list):
        return payload
    sent = {a.get("fingerprint") for a in payload["alerts"] if isinstance(a, Mapping)}
    left = [
        {k: v for k, v in s.items() if k != "left_out"}
        for s in shown
        if s.get("status") == c.AM_STATUS_FIRING and s.get("fingerprint") not in sent
    ]
    return {**payload, LEFT_OUT_KEY: left} if left else payload


def alert_states(group: AlertGroup) -> list[dict[str, str]]:
    """What a message shows, per alert: kept to tell the next notification what changed."""
    return sorted(
        (
            {
                "fingerprint": a.fingerprint,
                "status": a.status,
                "name": a.name,
                "model": model_name(a.labels, group.shared_models),
                "instance": a.labels.get(c.LABEL_INSTANCE, ""),
                "cluster": a.labels.get(group.cluster_label, "") if group.cluster_label else "",
                "starts": a.starts_at,
                "inhibited_by": a.inhibited_by,
            }
            for a in group.alerts
        ),
        key=lambda s: s["fingerprint"],
    ) + [{**s, "status": c.AM_STATUS_FIRING, "left_out": "1"} for s in group.left_out]


def is_stale(shown: Sequence[Mapping[str, str]], group: AlertGroup) -> bool:
    """Whether `group` is an older state than the message shows: delivered out of order (a retry,
    two Alertmanager replicas), it says firing what the message already shows resolved in the same
    episode (same fingerprint and `startsAt`: an alert firing again starts anew), and nothing else
    in it is new. Alertmanager sends a resolution once: editing the message back to firing would
    leave it firing for good."""
    before = {s["fingerprint"]: s for s in shown}
    stale = False
    for alert in group.alerts:
        old = before.get(alert.fingerprint)
        if old is None:
            return False
        if (
            alert.status == c.AM_STATUS_FIRING
            and old["status"] == c.AM_STATUS_RESOLVED
            and alert.starts_at
            and old.get("starts") == alert.starts_at
        ):
            stale = True
        elif old["status"] != alert.status:
            return False
    return stale


def digest(group: AlertGroup) -> str:
    """Equal for an Alertmanager repeat of the same state; different when anything shown changes."""
    parts = [group.status, str(group.truncated_alerts)]
    for s in alert_states(group):
        by = s["inhibited_by"]
        parts.append(f"{s['fingerprint']}={s['status']}" + (f" inhibited by {by}" if by else ""))
        parts[-1] += " left out" if s.get("left_out") else ""
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def describe_change(before: Sequence[Mapping[str, str]], group: AlertGroup, before_status: str | None) -> str:
    """One line (Slack mrkdwn-safe plain text) saying what changed since the message was last edited."""
    old = {s["fingerprint"]: s for s in before}
    now = {s["fingerprint"]: s for s in alert_states(group)}

    def names(states: list[Mapping[str, str]], name: Callable[[Mapping[str, str]], str] = display) -> str:
        shown = [name(s) for s in states[:5]]
        more = len(states) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "")

    if group.status == c.AM_STATUS_RESOLVED and before_status != c.AM_STATUS_RESOLVED:
        return f"Resolved: all {len(now)} alert(s) of this group are resolved."
    parts = []
    if group.status == c.AM_STATUS_FIRING and before_status == c.AM_STATUS_RESOLVED:
        parts.append("Firing again.")
    left = {f: s for f, s in now.items() if s.get("left_out")}
    started = [
        s
        for f, s in now.items()
        if s["status"] == c.AM_STATUS_FIRING
        and old.get(f, {}).get("status") != c.AM_STATUS_FIRING
        and f not in left
    ]
    ended = [
        s
        for f, s in now.items()
        if s["status"] == c.AM_STATUS_RESOLVED and old.get(f, {}).get("status") == c.AM_STATUS_FIRING
    ]
    gone = [s for f, s in old.items() if f not in now and s["status"] == c.AM_STATUS_FIRING]
    if started:
        parts.append(f"Now firing: {names(started)}.")
    parts += _inhibitions(old, now)
    if ended or gone:
        parts.append(f"Resolved: {names(ended + gone)}.")
    newly_left = [s for f, s in left.items() if not old.get(f, {}).get("left_out")]
    if newly_left:
        parts.append(f"Left out of this notification ({LEFT_OUT_WHY}): {names(newly_left, named)}.")
    back = [s for f, s in now.items() if f not in left and old.get(f, {}).get("left_out")]
    if back:
        parts.append(f"In the notification again: {names(back)}.")
    firing = sum(1 for f, s in now.items() if s["status"] == c.AM_STATUS_FIRING and f not in left)
    parts.append(
        f"{firing} of {len(now) - len(left)} alert(s) firing" + (f", {len(left)} left out." if left else ".")
    )
    return " ".join(parts)


def display(state: Mapping[str, str]) -> str:
    """`TritonModelUnavailable (ranker)`, `… in cluster east` on a fleet."""
    return in_cluster(_alert_model(state), state.get("cluster", ""))


def named(state: Mapping[str, str]) -> str:
    """`TritonModelUnavailable (ranker) on triton-c:8003`: an alert as the message's states store it
    (`… in cluster east` on a fleet)."""
    where = f" on {state['instance']}" if state.get("instance") else ""
    return in_cluster(_alert_model(state) + where, state.get("cluster", ""))


def _alert_model(state: Mapping[str, str]) -> str:
    model = state.get("model")
    return f"{state.get('name')} ({model})" if model else str(state.get("name"))


def _inhibitions(old: Mapping[str, Mapping[str, str]], now: Mapping[str, Mapping[str, str]]) -> list[str]:
    """`Inhibited: X (m) by Y (m) on a:8003.` for each firing alert an inhibition began holding, and
    `No longer inhibited: …` for those whose inhibition ended."""
    said = []
    for fingerprint, state in now.items():
        name = named(state)
        was = old.get(fingerprint, {}).get("inhibited_by", "")
        by = state.get("inhibited_by", "") if state["status"] == c.AM_STATUS_FIRING else ""
        if by and by != was:
            said.append(f"Inhibited: {name} by {by}.")
        elif was and not by and state["status"] == c.AM_STATUS_FIRING:
            said.append(f"No longer inhibited: {name}.")
    return said
