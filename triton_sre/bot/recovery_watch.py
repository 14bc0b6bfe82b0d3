"""The delivery loop's refresh of posted SLO pages' recovery line (recovery.py): the line was read only
when a notification came, so a 6h page fixed at 21:02 said nothing of it until its group changed.

Every `poll_seconds` (the silence watch's 30 s), for each posted firing group holding SLO alerts, one
instant query of its 5m burn (the first SLO alert's SLO, model and cluster; the group's alerts of the
same ones are judged by it, each against its own tier's threshold). When the set of alerts under
their threshold differs from what the message shows, the group's last notification goes through the
outbox again marked as a refresh (`REFRESH_KEY`: the thread reply's text), so the worker renders it
with every figure and edits the message. A Prometheus that fails is counted
(`triton_sre_bot_prometheus_reads_total{outcome="error"}`) and the message is left as it was; the
queries of one pass share 5 seconds, every Prometheus read together. An alert of a cluster whose config
entry (`clusters`) has its own `prometheus_url` is read there without its cluster matcher, as the
notification's figures are.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import ExitStack
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot.outbox import MessageRef, Outbox
from triton_sre.bot.payload import PayloadError, parse_group
from triton_sre.bot.queries import burn_rate_expr, scope_of, slo_labels
from triton_sre.bot.recovery import CLEAN_WINDOW, still_burning, tier_threshold
from triton_sre.bot.sidestore import SideStore, decode_strings
from triton_sre.prom import PromError, Prometheus
from triton_sre.slo import Spec

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS recovery_shown (
    group_key TEXT PRIMARY KEY,
    fingerprints TEXT NOT NULL
);
"""

REFRESH_KEY = "tritonSreRefresh"
"""A notification the bot queued itself to render a group again: the value is the thread reply."""
RECOVERING_TEXT = (
    f"Recovering: the {CLEAN_WINDOW} window's burn is under this tier's threshold (the message says "
    "since when)."
)
READ_SECONDS = 5.0
"""Every query of one pass together (the silence watch's read has as much): a Prometheus that hangs
holds the delivery loop that long once per pass, not per group."""
PARTLY_RECOVERING_TEXT = (
    f"Partly recovering: the {CLEAN_WINDOW} window's burn is under the tier's threshold for some of "
    "this group's SLO pages (the message says which); still burning: {}. The group recovers when "
    "every one of them does."
)
BURNING_AGAIN_TEXT = (
    f"No longer recovering: the {CLEAN_WINDOW} window burns over this tier's threshold again."
)


class RecoveryState(SideStore):
    """What each posted group's message shows recovering (fingerprints), in the outbox's file: a
    restarted bot does not render its recovering pages once more. A row that does not decode reads as
    nothing shown (logged, `on_error`): that page is rendered once more."""

    what = "recovery state"

    def __init__(self, path: str, on_error: Callable[[], None] = lambda: None) -> None:
        super().__init__(path, _SCHEMA, on_error)

    def load(self) -> dict[str, frozenset[str]]:
        with self._lock:
            rows = self._rows("SELECT group_key, fingerprints FROM recovery_shown")
        found: dict[str, frozenset[str]] = {}
        for key, fingerprints in rows:
            try:
                found[str(key)] = decode_strings(fingerprints)
            except (ValueError, TypeError) as exc:
                log.error(
                    "outbox %s: what group %s shows recovering does not decode (%s)", self.path, key, exc
                )
                self.on_error()
        return found

    def save(self, group_key: str, fingerprints: frozenset[str] | None) -> None:
        """None: the group is no longer open."""
        with self._lock:
            if fingerprints is None:
                self._write("DELETE FROM recovery_shown WHERE group_key = ?", (group_key,))
                return
            self._write(
                "INSERT INTO recovery_shown (group_key, fingerprints) VALUES (?, ?) ON CONFLICT(group_key) "
                "DO UPDATE SET fingerprints = excluded.fingerprints",
                (group_key, json.dumps(sorted(fingerprints))),
            )


Reader = Callable[[Mapping[str, str]], tuple[Prometheus, bool] | None]
"""An alert's labels -> the Prometheus holding its cluster's series and whether it is the cluster's own
(bot config `clusters`: its series carry no cluster label), or None when none is configured."""


class RecoveryWatch:
    def __init__(
        self,
        prometheus: Reader,
        outbox: Outbox,
        spec: Callable[[], Spec],
        slo_alerts: Collection[str],
        cluster_label: str,
        count: Callable[[str], None],
        on_error: Callable[[], None] = lambda: None,
    ) -> None:
        self.prometheus = prometheus
        self.outbox = outbox
        self.spec = spec
        self.slo_alerts = slo_alerts
        self.cluster_label = cluster_label
        self.count = count
        self.poll_seconds = 30.0
        self._next = 0.0
        self._budgets, self._ends = ExitStack(), 0.0
        self._entered: set[Prometheus] = set()
        self.state = RecoveryState(outbox.path, on_error)
        self._shown: dict[str, frozenset[str]] = self.state.load()
        """Group key -> fingerprints of the alerts its message shows recovering (kept in the outbox's
        file: a restarted bot knows what each message shows)."""

    def due_in(self, now: float) -> float:
        return max(0.0, self._next - now)

    def shown(self, group_key: str, recovering: Collection[str]) -> None:
        """What the worker just delivered for the group."""
        self._store(group_key, frozenset(recovering))

    def _store(self, group_key: str, recovering: frozenset[str]) -> None:
        if self._shown.get(group_key) != recovering:
            self.state.save(group_key, recovering)
        self._shown[group_key] = recovering

    def poll(self, now: float) -> None:
        if now < self._next:
            return
        self._next = now + self.poll_seconds
        refs = self.outbox.open_messages()
        open_keys = {ref.group_key for ref in refs}
        for key in [k for k in self._shown if k not in open_keys]:
            del self._shown[key]
            self.state.save(key, None)
        self._entered = set()
        with ExitStack() as budgets:
            self._budgets, self._ends = budgets, time.monotonic() + READ_SECONDS
            self._pass(refs)

    def _reader(self, labels: Mapping[str, str]) -> tuple[Prometheus, bool] | None:
        """The alert's Prometheus, within what is left of the pass's READ_SECONDS (every Prometheus of
        the pass together: a cluster's own and the global one)."""
        found = self.prometheus(labels)
        if found is not None and found[0] not in self._entered:
            self._entered.add(found[0])
            self._budgets.enter_context(found[0].budgeted(max(self._ends - time.monotonic(), 0.001)))
        return found

    def _pass(self, refs: list[MessageRef]) -> None:
        for ref in refs:
            if not any(a.get("name") in self.slo_alerts for a in ref.alerts):
                continue
            payload = self.outbox.last_payload(ref.group_key)
            judged = self._judge(payload) if payload is not None else None
            if payload is None or judged is None:
                continue
            recovering, burning = judged
            before = self._shown.get(ref.group_key)
            if recovering == (before if before is not None else frozenset()):
                continue
            if not recovering - (before or frozenset()):
                text = BURNING_AGAIN_TEXT
            else:
                text = PARTLY_RECOVERING_TEXT.format("; ".join(burning)) if burning else RECOVERING_TEXT
            self.outbox.enqueue(ref.group_key, {**payload, REFRESH_KEY: text})
            self._store(ref.group_key, recovering)

    def _judge(self, payload: dict[str, Any]) -> tuple[frozenset[str], list[str]] | None:
        """Fingerprints of the group's firing SLO alerts whose tier is clean now, and the others named
        with their burn (None: not read). Each SLO, model and cluster of the group is read once."""
        try:
            group = parse_group(payload)
        except PayloadError:
            return None
        judged = [
            (a, labels, scope_of(a.labels, self.cluster_label))
            for a in group.alerts
            if a.status == c.AM_STATUS_FIRING
            and a.name in self.slo_alerts
            and (labels := slo_labels(a.labels)) is not None
        ]
        if not judged:
            return None
        burns: dict[tuple[str, str, Any], float | None] = {}
        for alert, (slo, _, model), scope in judged:
            if (slo, model, scope) in burns:
                continue
            reader = self._reader(alert.labels)
            if reader is None:  # neither a global Prometheus nor the cluster's own
                burns[(slo, model, scope)] = None
                continue
            prom, own = reader  # a cluster's own Prometheus: its series carry no cluster label
            try:
                burns[(slo, model, scope)] = prom.instant(
                    burn_rate_expr(slo, CLEAN_WINDOW, model, () if own else scope)
                )
            except PromError as exc:
                self.count(c.BOT_OUTCOME_ERROR)
                log.info("group %s: the 5m burn not read from Prometheus: %s", group.group_key, exc)
                return None
            self.count(c.BOT_OUTCOME_OK)
        spec = self.spec()
        found, burning = set(), []
        for alert, (slo, window, model), scope in judged:
            tier = tier_threshold(spec, slo, window)
            burn = burns[(slo, model, scope)]
            if tier is None or burn is None:
                continue
            if burn < tier[0]:
                found.add(alert.fingerprint)
            else:
                cluster = alert.labels.get(self.cluster_label, "")
                burning.append(still_burning(slo, window, model, burn, tier[0], cluster))
        return frozenset(found), burning
