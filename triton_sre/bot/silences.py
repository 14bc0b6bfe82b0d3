"""Which firing alerts Alertmanager silenced, by whom, until when and why (read-only API v2).

Two GETs within one deadline: ``/api/v2/alerts`` (silenced alerts only: their fingerprints and the
silences that hold them) and ``/api/v2/silences`` (who, until when, the comment). Alertmanager's
fingerprint is the one its webhook sends, so a message's stored alerts are matched by it.
`read_silenced` raises `SilenceReadError` with a short reason and the outcome for the bot's metric;
the caller answers without silences and says so.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre.httpclient import DeadlineExceeded, describe, fetch, new_session
from triton_sre.redact import redact
from triton_sre.rfc3339 import parse_rfc3339

SILENCED_ALERTS_QUERY = {"active": "false", "silenced": "true", "inhibited": "false", "unprocessed": "false"}
EVERY_ALERT_QUERY = {"active": "true", "silenced": "true", "inhibited": "true", "unprocessed": "true"}


@dataclass(frozen=True)
class Silence:
    id: str
    created_by: str
    comment: str
    ends_at: str

    def describe(self) -> str:
        """`by alice until 22:00 UTC: "rolling back ranker v2"` (no comment: no quote)."""
        until = _clock(self.ends_at)
        text = f"by {self.created_by or 'someone'}" + (f" until {until}" if until else "")
        return text + (f': "{self.comment}"' if self.comment else "")


class SilenceReadError(Exception):
    def __init__(self, reason: str, outcome: str) -> None:
        super().__init__(reason)
        self.outcome = outcome


def read_silenced(base_url: str, seconds: float) -> dict[str, list[Silence]]:
    """Fingerprint of each silenced alert -> the active silences holding it."""
    return read_alerts(base_url, seconds, SILENCED_ALERTS_QUERY)[0]


def read_alerts(
    base_url: str, seconds: float, query: dict[str, str] = EVERY_ALERT_QUERY
) -> tuple[dict[str, list[Silence]], dict[str, Mapping[str, Any]]]:
    """(fingerprint of each silenced alert -> the active silences holding it, fingerprint -> every
    alert the query listed as the API gives it: with the default, every alert Alertmanager holds, a
    resolved one not)."""
    started = time.monotonic()
    alerts = _get(base_url, "api/v2/alerts", seconds, query)
    left = max(seconds - (time.monotonic() - started), 0.1)
    silences = _get(base_url, "api/v2/silences", left, None)
    if not isinstance(alerts, list) or not isinstance(silences, list):
        raise SilenceReadError(
            "the answer is not Alertmanager's API v2 (a JSON list)", c.BOT_OUTCOME_INVALID_RESPONSE
        )
    by_id: dict[str, Silence] = {}
    for raw in silences:
        if isinstance(raw, Mapping) and _state(raw) == "active":
            sid = str(raw.get("id") or "")
            by_id[sid] = Silence(sid, _text(raw, "createdBy"), _text(raw, "comment"), _text(raw, "endsAt"))
    held: dict[str, list[Silence]] = {}
    listed: dict[str, Mapping[str, Any]] = {}
    for raw in alerts:
        if not isinstance(raw, Mapping):
            continue
        listed[str(raw.get("fingerprint") or "")] = raw
        status = raw.get("status") if isinstance(raw.get("status"), Mapping) else {}
        ids = status.get("silencedBy") if isinstance(status.get("silencedBy"), list) else []
        found = [by_id[str(i)] for i in ids if str(i) in by_id]
        if found and raw.get("fingerprint"):
            held[str(raw["fingerprint"])] = found
    return held, listed


def read_groups(base_url: str, seconds: float) -> list[Mapping[str, Any]]:
    """Alertmanager's alert groups (`/api/v2/alerts/groups`: labels, receiver, every alert of the
    group, inhibited and silenced ones included)."""
    groups = _get(base_url, "api/v2/alerts/groups", seconds, None)
    if not isinstance(groups, list):
        raise SilenceReadError(
            "the answer is not Alertmanager's API v2 (a JSON list)", c.BOT_OUTCOME_INVALID_RESPONSE
        )
    return [g for g in groups if isinstance(g, Mapping)]


def group_silences(
    firing: Sequence[Mapping[str, Any]], held: Mapping[str, list[Silence]]
) -> tuple[int, list[Silence]]:
    """How many of a group's firing alerts are silenced, and the silences (each once, latest end last)."""
    count, seen = 0, {}
    for alert in firing:
        found = held.get(str(alert.get("fingerprint", "")), [])
        count += bool(found)
        for silence in found:
            seen[silence.id] = silence
    return count, sorted(seen.values(), key=lambda s: s.ends_at)


def _get(base_url: str, path: str, seconds: float, params: dict[str, str] | None) -> Any:
    url = base_url.rstrip("/") + "/" + path
    try:
        with new_session(base_url) as session:
            answer = fetch(session, "GET", url, seconds, params=params)
    except DeadlineExceeded as exc:
        raise SilenceReadError(str(exc), c.BOT_OUTCOME_NETWORK) from None
    except requests.RequestException as exc:
        raise SilenceReadError(describe(exc), c.BOT_OUTCOME_NETWORK) from None
    if answer.status_code != 200:
        raise SilenceReadError(f"HTTP {answer.status_code} from /{path}", c.BOT_OUTCOME_HTTP_ERROR)
    try:
        return answer.json()
    except ValueError:
        raise SilenceReadError(
            f"/{path} answered something that is not JSON", c.BOT_OUTCOME_INVALID_RESPONSE
        ) from None


def _state(raw: Mapping[str, Any]) -> str:
    status = raw.get("status")
    return str(status.get("state", "")) if isinstance(status, Mapping) else ""


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    return redact(str(value), queries=False)[:200] if value is not None else ""


def _clock(stamp: str) -> str:
    try:
        return parse_rfc3339(stamp).astimezone(dt.timezone.utc).strftime("%H:%M UTC")
    except (ValueError, TypeError):
        return ""
