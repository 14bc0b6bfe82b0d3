"""What a gameday sees, and when: alerts in Prometheus and Alertmanager, the bot's Slack messages.

`Observer` polls the three over HTTP (as an on-call engineer's tools would) from a background
thread, twice a second, and keeps a `Timeline`: for every alert (name + labels) the intervals in
which Prometheus had it firing and Alertmanager had it active, and every message the bot posted
to the Slack stand-in (merged across stand-in restarts: its own record starts empty again).
The parsing of one poll's answers is pure (`alerts_from_prometheus`, `alerts_from_alertmanager`,
`post_from_call`) and tested without a stack.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre.bot.dev_slack_standin import RECORD_HEADER
from triton_sre.httpclient import DeadlineExceeded, describe, fetch, new_session
from triton_sre.redact import redact

POLL_SECONDS = 0.5
HTTP_TIMEOUT = 3.0
Labels = tuple[tuple[str, str], ...]
# What a poll can fail with: no answer (or not whole within HTTP_TIMEOUT), an answer of another kind
POLL_ERRORS = (requests.RequestException, ValueError, DeadlineExceeded)

_ALERT_FIELD = re.compile(r"\*Alert:\*\s*([A-Za-z0-9_:]+)")
_MODEL_FIELD = re.compile(r"\*Model:\*\s*([^\s\"\\]+)")
_DIAGNOSIS = re.compile(r"\*Diagnosis:\*[^`]*`([a-z0-9][a-z0-9-]*)`")
_RUNBOOK = re.compile(r"Runbook:\s*(?:<[^|>]*\|)?(?:Runbook:\s*)?([a-z0-9][a-z0-9-]*)")
_RUNBOOK_PATH = re.compile(r"runbooks/([a-z0-9][a-z0-9-]*)\.md")
_STATUS = re.compile(r"^(FIRING|RESOLVED)(?: \[([a-z]+)\])?")


@dataclass(frozen=True)
class SeenAlert:
    name: str
    labels: Labels
    annotations: Labels = ()

    def label(self, key: str) -> str:
        return dict(self.labels).get(key, "")

    def runbook(self) -> str:
        """The runbook the alert names: its `runbook` label, else its runbook_url's page."""
        if self.label(c.L_RUNBOOK):
            return self.label(c.L_RUNBOOK)
        found = _RUNBOOK_PATH.search(dict(self.annotations).get(c.ANNOTATION_RUNBOOK_URL, ""))
        return found.group(1) if found else ""


@dataclass(frozen=True)
class Post:
    """A top-level message (or an update of one) the bot sent to the Slack stand-in."""

    at: float
    method: str
    ts: str
    alertname: str
    model: str
    resolved: bool
    severity: str  # the bot posts a group's pages and tickets apart (Alertmanager's routes)
    runbooks: tuple[str, ...]  # diagnosis first, then runbook links, in order of appearance


@dataclass
class Intervals:
    """Where an alert was seen: [start, end] spans, the last one open (end None) while it lasts."""

    spans: list[list[float | None]] = field(default_factory=list)

    def seen(self, now: float) -> None:
        if not self.spans or self.spans[-1][1] is not None:
            self.spans.append([now, None])

    def gone(self, now: float) -> None:
        if self.spans and self.spans[-1][1] is None:
            self.spans[-1][1] = now

    @property
    def active(self) -> bool:
        return bool(self.spans) and self.spans[-1][1] is None

    def first_since(self, t: float) -> float | None:
        """When a span first started at or after `t` (one already open at `t` does not count)."""
        starts = [start for start, _ in self.spans if start is not None and start >= t]
        return min(starts) if starts else None


def _labels(raw: Mapping[str, Any]) -> Labels:
    return tuple(sorted((str(k), str(v)) for k, v in raw.items()))


def _seen(alerts: Iterable[Any]) -> list[SeenAlert]:
    """The alerts of one answer; ValueError for an entry that is no alert (the answer is not read:
    read without it, the alert it should have been would have ended)."""
    out = []
    for a in alerts:
        labels = a.get("labels") if isinstance(a, Mapping) else None
        if not isinstance(labels, Mapping):
            raise ValueError(f"not an alert: {str(a)[:100]}")
        labels = dict(labels)
        annotations = a.get("annotations")
        name = str(labels.pop(c.LABEL_ALERTNAME, ""))
        out.append(
            SeenAlert(name, _labels(labels), _labels(annotations if isinstance(annotations, Mapping) else {}))
        )
    return out


def alerts_from_prometheus(body: Any) -> list[SeenAlert]:
    """The firing alerts of a `/api/v1/alerts` answer (pending ones are not firing yet). An answer of
    another shape (an error, `data` null) is ValueError: read as "no alert", it ended every alert seen."""
    ok = isinstance(body, Mapping) and body.get("status", "success") == "success"
    data = body.get("data") if ok else None
    alerts = data.get("alerts") if isinstance(data, Mapping) else None
    if not isinstance(alerts, list):
        raise ValueError(f"not a Prometheus alerts answer: {str(body)[:100]}")
    return [a for a, raw in zip(_seen(alerts), alerts, strict=True) if raw.get("state") == c.AM_STATUS_FIRING]


def alerts_from_alertmanager(body: Any) -> list[SeenAlert]:
    """The alerts Alertmanager holds (active, or suppressed by an inhibition) from `/api/v2/alerts`;
    an answer that is not a list (an error object) is ValueError."""
    if not isinstance(body, list):
        raise ValueError(f"not an Alertmanager alerts answer: {str(body)[:100]}")
    return _seen(body)


def runbooks_named(text: str) -> tuple[str, ...]:
    """Runbook ids a message names: the diagnosis first, then runbook links."""
    found: list[str] = []
    for rx in (_DIAGNOSIS, _RUNBOOK, _RUNBOOK_PATH):
        for m in rx.finditer(text):
            if m.group(1) not in found:
                found.append(m.group(1))
    return tuple(found)


def post_from_call(call: Mapping[str, Any]) -> Post | None:
    """A recorded stand-in call as a Post: successful top-level chat.postMessage / chat.update only."""
    method = call.get("method")
    params = call.get("params") or {}
    response = call.get("response") or {}
    if method not in ("chat.postMessage", "chat.update") or not response.get("ok"):
        return None
    if method == "chat.postMessage" and params.get("thread_ts"):
        return None  # a reply in the thread (e.g. the diagnosis' evidence), not a notification
    blocks = params.get("blocks")
    text = json.dumps(blocks) if not isinstance(blocks, str) else blocks
    whole = f"{params.get('text') or ''}\n{text}"
    alert = _ALERT_FIELD.search(whole)
    model = _MODEL_FIELD.search(whole)
    status = _STATUS.match(str(params.get("text") or ""))
    return Post(
        at=float(call.get("at") or 0.0),
        method=str(method),
        ts=str(response.get("ts") or params.get("ts") or ""),
        alertname=alert.group(1) if alert else "",
        model=model.group(1) if model and model.group(1) not in ("—", "\u2014") else "",
        resolved=bool(status) and status.group(1) == "RESOLVED",
        severity=(status.group(2) or "") if status else "",
        runbooks=runbooks_named(whole),
    )


class Timeline:
    """What the observer saw. Thread-safe; every time is wall-clock seconds (time.time())."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.prometheus: dict[SeenAlert, Intervals] = {}
        self.alertmanager: dict[SeenAlert, Intervals] = {}
        self.annotations: dict[SeenAlert, Labels] = {}
        self.posts: list[Post] = []
        self._calls: set[str] = set()
        # per table, the alerts seen by its last poll: only they can end now (every alert ever seen
        # was walked at every poll)
        self._last_seen: dict[str, set[SeenAlert]] = {"prometheus": set(), "alertmanager": set()}
        self.errors: dict[str, str] = {}

    def _update(self, name: str, seen: list[SeenAlert], now: float) -> None:
        table = self.prometheus if name == "prometheus" else self.alertmanager
        keys = set()
        for a in seen:
            key = SeenAlert(a.name, a.labels)
            keys.add(key)
            table.setdefault(key, Intervals()).seen(now)
            if a.annotations:
                self.annotations[key] = a.annotations
        for key in self._last_seen[name] - keys:
            table[key].gone(now)
        self._last_seen[name] = keys

    def update_prometheus(self, seen: list[SeenAlert], now: float) -> None:
        with self.lock:
            self._update("prometheus", seen, now)

    def update_alertmanager(self, seen: list[SeenAlert], now: float) -> None:
        with self.lock:
            self._update("alertmanager", seen, now)

    def add_calls(self, calls: Iterable[Mapping[str, Any]]) -> None:
        """Calls the stand-in recorded since the last read (`StandinRecord`): each becomes a post,
        once (a call read twice, the same method, parameters, answer and time, is one post)."""
        with self.lock:
            added = False
            for call in calls:
                key = json.dumps(call, sort_keys=True, default=str)
                if key in self._calls:
                    continue
                self._calls.add(key)
                post = post_from_call(call)
                if post is not None:
                    self.posts.append(post)
                    added = True
            if added:
                self.posts.sort(key=lambda p: p.at)

    # -- queries
    def matching(
        self, table: str, alert: str, labels: Mapping[str, str]
    ) -> list[tuple[SeenAlert, Intervals]]:
        with self.lock:
            rows = self.prometheus if table == "prometheus" else self.alertmanager
            return [
                (key, spans)
                for key, spans in rows.items()
                if key.name == alert and all(key.label(k) == v for k, v in labels.items())
            ]

    def with_annotations(self, key: SeenAlert) -> SeenAlert:
        with self.lock:
            return SeenAlert(key.name, key.labels, self.annotations.get(key, ()))

    def posts_since(self, t: float) -> list[Post]:
        with self.lock:
            return [p for p in self.posts if p.at >= t]


def get_answer(
    session: requests.Session, url: str, params: Mapping[str, Any] | None = None
) -> requests.Response:
    """A 200 answer read whole within HTTP_TIMEOUT (httpclient.fetch: the project's deadline, redirects
    on the same host only); another status is a ValueError naming it (a redirect to another host too)."""
    answer = fetch(session, "GET", url, HTTP_TIMEOUT, params=params)
    if answer.status_code != 200:
        raise ValueError(f"{redact(url)}: HTTP {answer.status_code}")
    return answer


class StandinRecord:
    """Where the stand-in's record was read up to: each poll asks for the calls after those (the
    whole record at every poll made a gameday of many faults quadratic). A record of another id
    (the stand-in restarted, or was reset, and its record starts empty again) is read from its start."""

    def __init__(self, url: str, session: requests.Session) -> None:
        self.url = f"{url}/_standin/calls"
        self.session = session
        self.record_id: str | None = None
        self.read = 0

    def _get(self, since: int) -> tuple[str | None, list[Mapping[str, Any]]]:
        answer = get_answer(self.session, self.url, {"since": since})
        calls = answer.json()
        if not isinstance(calls, list):
            raise ValueError(f"{self.url}: expected a list of calls, got {type(calls).__name__}")
        return answer.headers.get(RECORD_HEADER), calls

    def new_calls(self) -> list[Mapping[str, Any]]:
        record_id, calls = self._get(self.read)
        if record_id != self.record_id or record_id is None:
            if self.read:
                record_id, calls = self._get(0)
            self.record_id, self.read = record_id, 0
        self.read += len(calls)
        return calls


class Observer:
    """Polls Prometheus, Alertmanager and the Slack stand-in into a Timeline until `stop()`."""

    def __init__(self, prometheus_url: str, alertmanager_url: str, standin_url: str | None) -> None:
        self.prometheus_url = prometheus_url
        self.alertmanager_url = alertmanager_url
        self.standin_url = standin_url
        self.timeline = Timeline()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._session = new_session()
        self._standin = StandinRecord(standin_url, self._session) if standin_url else None

    def poll_once(self) -> None:
        t = self.timeline
        # Alertmanager before Prometheus: an alert seen firing in one poll is in Alertmanager by the next.
        try:
            body = get_answer(
                self._session, f"{self.alertmanager_url}/api/v2/alerts", {"active": "true"}
            ).json()
            t.update_alertmanager(alerts_from_alertmanager(body), time.time())
        except POLL_ERRORS as exc:
            t.errors["alertmanager"] = describe(exc)
        try:
            body = get_answer(self._session, f"{self.prometheus_url}/api/v1/alerts").json()
            t.update_prometheus(alerts_from_prometheus(body), time.time())
        except POLL_ERRORS as exc:
            t.errors["prometheus"] = describe(exc)
        if self._standin is not None:
            try:
                t.add_calls(self._standin.new_calls())
            except POLL_ERRORS as exc:
                t.errors["slack-standin"] = describe(exc)  # down on purpose in one scenario

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll_once()
            self._stop.wait(POLL_SECONDS)

    def start(self) -> Observer:
        self._thread = threading.Thread(target=self._loop, name="gameday-observer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self._session.close()
