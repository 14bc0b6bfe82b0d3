"""The bot's own Prometheus metrics, in a registry of its own (served at GET /metrics)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from triton_sre import conventions as c

OUTBOX_STATES = (c.BOT_OUTBOX_PENDING, c.BOT_OUTBOX_DONE, c.BOT_OUTBOX_SUPERSEDED, c.BOT_OUTBOX_FAILED)


class OutboxView(Protocol):
    def counts(self) -> dict[str, int]: ...
    def unsaved(self) -> int: ...
    def problem(self) -> str: ...


class _OutboxCollector(Collector):
    def __init__(self, outbox: OutboxView) -> None:
        self._outbox = outbox

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            c.M_BOT_OUTBOX, "Notifications in the bot's outbox by state.", labels=[c.L_STATE]
        )
        # every state 0 rather than absent: docs/bot.md says to alert on a growing `pending` count
        counts = dict.fromkeys(OUTBOX_STATES, 0) | self._outbox.counts()
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family
        yield GaugeMetricFamily(
            c.M_BOT_OUTBOX_UNSAVED,
            "Delivery records the disk refused, held in memory until a write succeeds.",
            value=self._outbox.unsaved(),
        )
        yield GaugeMetricFamily(
            c.M_BOT_OUTBOX_USABLE,
            "1 when the outbox file is in place and takes writes; 0 when it vanished or writes fail.",
            value=0 if self._outbox.problem() else 1,
        )


class BotMetrics:
    def __init__(self, outbox: OutboxView | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.received = Counter(
            c.M_BOT_NOTIFICATIONS.removesuffix("_total"),
            "Alertmanager notifications accepted into the outbox.",
            registry=self.registry,
        )
        self.slack_calls = Counter(
            c.M_BOT_SLACK_CALLS.removesuffix("_total"),
            "Slack Web API calls by method and outcome (ok, or Slack's error such as ratelimited).",
            [c.L_METHOD, c.L_OUTCOME],
            registry=self.registry,
        )
        self.actions = Counter(
            c.M_BOT_ACTIONS.removesuffix("_total"),
            "What the bot did with a group's notification: posted, updated, repeat (nothing), failed.",
            [c.L_ACTION],
            registry=self.registry,
        )
        self.refused = Counter(
            c.M_BOT_REFUSED.removesuffix("_total"),
            "Requests the bot refused, by HTTP status: 401 bad bearer token or Slack signature, "
            "400 malformed body, 411/413 missing or oversized body, 404/405, 503 outbox unavailable.",
            [c.L_CODE],
            registry=self.registry,
        )
        self.alertmanager_reads = Counter(
            c.M_BOT_ALERTMANAGER_READS.removesuffix("_total"),
            "Reads of Alertmanager's silences (/triton status, thread replies) by outcome: ok, network, "
            "http_error, invalid_response.",
            [c.L_OUTCOME],
            registry=self.registry,
        )
        self.silence_state_errors = Counter(
            c.M_BOT_SILENCE_STATE_ERRORS.removesuffix("_total"),
            "Stored silence or recovery state (announced silences, messages as rendered, pages shown "
            "recovering) that did not decode or could not be opened: each is at worst one silence "
            "announced, or one recovering page rendered, again.",
            registry=self.registry,
        )
        self.prometheus_reads = Counter(
            c.M_BOT_PROMETHEUS_READS.removesuffix("_total"),
            "The delivery loop's reads of posted SLO pages' 5m burn (the recovery line) by outcome: ok, "
            "error.",
            [c.L_OUTCOME],
            registry=self.registry,
        )
        if outbox is not None:
            self.registry.register(_OutboxCollector(outbox))

    def watch_token(self, usable: Callable[[], bool]) -> None:
        """`triton_sre_bot_slack_token_usable`, read from the delivery loop's TokenWatch at each scrape."""
        Gauge(
            c.M_BOT_SLACK_TOKEN_USABLE,
            "1 while Slack takes the bot's token (or nothing refused it yet); 0 once Slack refused it "
            "(invalid_auth, token_revoked, account_inactive, not_authed): deliveries wait in the outbox.",
            registry=self.registry,
        ).set_function(lambda: 1.0 if usable() else 0.0)
