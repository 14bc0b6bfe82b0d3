"""The delivery loop: outbox -> facts (Triton, Prometheus, a log) -> enrich -> render -> Slack.

One thread. It takes the latest pending notification of each group (older ones are superseded),
skips Alertmanager repeats (same digest as the group's message), posts a new message or edits the
group's message in place and replies in its thread with what changed, and records the result in
the outbox in one transaction. Retryable failures are rescheduled in the outbox (Retry-After for
429, exponential backoff otherwise), so the schedule survives restarts.

Known limit: Slack has no idempotency key for chat.postMessage, so a crash in the instant between
Slack's answer and the outbox commit can post one message twice; every other restart is exact.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from triton_sre import conventions as c
from triton_sre.bot import promfacts
from triton_sre.bot.config import BotSettings
from triton_sre.bot.diagnosed import diagnosed
from triton_sre.bot.enrich import (
    SLO_ALERTS,
    Facts,
    Links,
    enrich,
    shown_alerts,
)
from triton_sre.bot.metrics import BotMetrics
from triton_sre.bot.outbox import MessageRef, Notification, Outbox
from triton_sre.bot.page_threads import PageThreads
from triton_sre.bot.passmemo import PassMemo
from triton_sre.bot.payload import (
    AlertGroup,
    PayloadError,
    alert_states,
    describe_change,
    digest,
    is_stale,
    parse_group,
    with_left_out,
)
from triton_sre.bot.prom import CHART_STEP_SECONDS, CHART_WINDOW_SECONDS, chart_png
from triton_sre.bot.queries import (
    burn_rate_expr,
    in_own_cluster,
    scope_of,
    slo_labels,
)
from triton_sre.bot.recovery import recovery_facts
from triton_sre.bot.recovery_watch import REFRESH_KEY, RecoveryWatch
from triton_sre.bot.silence_state import SilenceState
from triton_sre.bot.silence_watch import SilenceWatch
from triton_sre.bot.slack import MAX_RETRY_AFTER_SECONDS, DeliveryError, Renderer, SlackDelivery, backoff
from triton_sre.bot.token_watch import TokenWatch
from triton_sre.bot.urls import generator_expr
from triton_sre.bot.versions import clock_of, fired_at, version_facts
from triton_sre.namespacing import in_cluster, label_pairs, shared_names
from triton_sre.prom import PromError, Prometheus
from triton_sre.rollout.live import partial_texts

log = logging.getLogger(__name__)

IDLE_WAIT_SECONDS = 5.0
PRUNE_AFTER_SECONDS = 7 * 86400
FACTS_PROMETHEUS_BUDGET_S = 10.0  # every Prometheus query of one notification's facts together
TEXT_ONLY_ERRORS = ("invalid_blocks", "invalid_blocks_format", "msg_too_long")
THREAD_GONE = "thread_not_found"
"""Slack's answer to a reply whose parent message was deleted (the stand-in gives it too)."""
# How soon after the message showed an alert resolved a firing notification of the same episode is a
# late copy (an HA peer's, 15 s a position; a retry): Alertmanager notifies a real change of a group
# a group_interval (5 min by default) after its last notification at the earliest. Later, the alert
# is firing again with the same startsAt (Prometheus re-posted it after an outage): shown.
STALE_WITHIN_SECONDS = 60.0


def _links(settings: BotSettings) -> Links:
    """The message's links from the bot's settings (bot/config.py BotSettings)."""
    return Links(
        runbook_base_url=settings.runbook_base_url,
        grafana_url=settings.grafana_url,
        alertmanager_url=settings.alertmanager_url,
        dashboard_uid_model=c.UID_MODEL_DASHBOARD,
        dashboard_uid_slo=c.UID_SLO_DASHBOARD,
        dashboard_uid_overview=c.UID_OVERVIEW_DASHBOARD,
        dashboard_uid_llm=c.UID_LLM_DASHBOARD,
    )


class Worker:
    def __init__(
        self,
        settings: BotSettings,
        outbox: Outbox,
        delivery: SlackDelivery,
        titles: dict[str, str],
        clock: Callable[[], float] = time.time,
        metrics: BotMetrics | None = None,
        remediations: dict[str, str] | None = None,
    ) -> None:
        self.metrics = metrics or BotMetrics()
        self.settings = settings
        self.outbox = outbox
        self.delivery = delivery
        self.titles = titles
        self.remediations = remediations or {}  # runbook id -> one-line fix (the catalog)
        self.renderer = Renderer(settings.templates_dir)
        self.links = _links(settings)
        self.prometheus = Prometheus(settings.prometheus_url) if settings.prometheus_url else None
        self._cluster_prometheus: dict[str, Prometheus] = {}  # a cluster's own (config `clusters`), by URL
        self.clock = clock
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_prune = 0.0
        self.silences = (  # the message edited and a thread reply when a silence starts or ends
            SilenceWatch(
                settings.silences_url,
                outbox,
                lambda ref, text: delivery.post(ref.channel, text, None, thread_ts=self._thread_of(ref)),
                lambda outcome: self.metrics.alertmanager_reads.labels(outcome).inc(),
                delivery.update,
                SilenceState(outbox.path, self.metrics.silence_state_errors.inc),
            )
            if settings.silences_url
            else None
        )
        self.threads = PageThreads(outbox.path, settings.cluster_label)  # tickets under their page
        self.recovery = (  # an SLO page's recovery line read between notifications
            RecoveryWatch(
                self._reader,
                outbox,
                settings.slo_spec,
                SLO_ALERTS,
                settings.cluster_label,
                lambda outcome: self.metrics.prometheus_reads.labels(outcome).inc(),
                self.metrics.silence_state_errors.inc,
            )
            if self.prometheus is not None or any(e.prometheus_url for e in settings.clusters.values())
            else None
        )
        self._paused_until = 0.0
        """Slack's rate limit is per workspace and method: after a 429 nothing is sent before this (nor
        while Slack refuses the token, before the next auth.test)."""
        self.token = TokenWatch(
            delivery.check_auth, outbox.pending, settings, clock, getattr(delivery, "renew_token", None)
        )
        self.metrics.watch_token(self.token.usable)

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Worker:
        self._thread = threading.Thread(target=self.run, name="bot-worker", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.silences is not None and self.silences.state is not None:
            self.silences.state.close()
        if self.recovery is not None:
            self.recovery.state.close()
        self.threads.close()

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                waited = self.step()
            except Exception:  # the loop must survive anything; the notification stays pending
                log.exception("delivery loop error")
                waited = 1.0
            if waited is not None:
                self._wake.wait(waited)
                self._wake.clear()

    def step(self) -> float | None:
        """Process one due notification (returns None) or say how long to wait."""
        now = self.clock()
        # No wait the worker sets is longer than this: a later one was set before the clock stepped
        # back (NTP, a VM restored), and would hold every delivery for the size of the step.
        horizon = 1.2 * max(self.settings.retry_max_seconds, MAX_RETRY_AFTER_SECONDS)
        if self._paused_until > now + horizon:
            self._paused_until = 0.0  # set in the old clock's future: dropped, or it returns in reach later
        if now < self._paused_until:
            return self._paused_until - now
        if not self.token.usable():  # Slack refused the token: ask it alone, not once per notification
            pause = self.token.ask()
            if pause is not None:
                self._paused_until = now + pause
                return pause
        if now - self._last_prune > 3600:
            self._last_prune = now
            self.outbox.prune(now - PRUNE_AFTER_SECONDS)
        notification, earliest = self.outbox.next_due(now, horizon)
        if notification is not None:
            try:
                self.process(notification)
            except Exception as exc:  # a bug or a surprise: keep the notification, retry later
                log.exception("notification %d: processing failed", notification.id)
                delay = backoff(
                    notification.attempts, self.settings.retry_base_seconds, self.settings.retry_max_seconds
                )
                self.outbox.retry_later(notification.id, now + delay, f"{type(exc).__name__}: {exc}")
            return None
        idle = IDLE_WAIT_SECONDS
        for watch in (self.silences, self.recovery):
            if watch is not None:
                watch.poll(now)
                idle = max(0.01, min(idle, watch.due_in(self.clock())))
        if earliest is None:
            return idle
        return max(0.01, min(idle, earliest - now))

    # -- one notification ----------------------------------------------------------------------------
    def process(self, notification: Notification) -> None:
        try:
            group = parse_group(notification.payload)
        except PayloadError as exc:
            self.outbox.mark_failed(notification.id, f"not a notification: {exc}")
            return
        ref = self.outbox.message(group.group_key)
        if self.silences is None and ref is not None:  # no Alertmanager to ask why an alert is left out
            group = parse_group(with_left_out(ref.alerts, notification.payload))
        carried = self.silences.carry(ref, notification.payload) if self.silences is not None else None
        if carried is not None:  # alerts a silence holds, left out by Alertmanager: firing, not resolved
            self.outbox.enqueue(group.group_key, carried)
            self.outbox.mark_done(notification.id)
            return
        state_digest = digest(group)
        refresh = str(notification.payload.get(REFRESH_KEY) or "")  # queued by the recovery watch
        if ref is not None and ref.digest == state_digest and not refresh:
            log.debug("group %s: repeat, nothing changed", group.group_key)
            self.outbox.mark_done(notification.id)
            self.metrics.actions.labels(c.BOT_ACTION_REPEAT).inc()
            return
        if (
            ref is not None
            and self.clock() - ref.updated <= STALE_WITHIN_SECONDS
            and is_stale(ref.alerts, group)
        ):
            log.info(
                "group %s: an older notification than the message shows (out of order), skipped",
                group.group_key,
            )
            self.outbox.mark_done(notification.id)
            self.metrics.actions.labels(c.BOT_ACTION_STALE).inc()
            return
        labels = dict(group.common_labels) or (dict(group.alerts[0].labels) if group.alerts else {})
        channel = ref.channel if ref is not None else self.settings.channel_for(labels)
        page = (
            None
            if ref is not None or group.status != c.AM_STATUS_FIRING
            else self.threads.page_for(group.alerts)
        )
        if page is not None:  # tickets the page inhibited until it resolved: in the page's thread
            channel = page[0]
        if not channel:
            log.error("group %s: no channel (set --channel or a route matching its labels)", group.group_key)
            self.outbox.mark_failed(notification.id, "no channel")
            return
        facts = self.facts(group)
        # alerts name their model as the report does (namespacing.py), and their cluster
        group = replace(group, shared_models=facts.shared_models, cluster_label=self.settings.cluster_label)
        model = enrich(group, facts, self.links, self.settings.cluster_label).context()
        if refresh:
            model["refresh"] = refresh
        blocks = self.renderer.blocks(model)
        text = self.renderer.text(model)
        shown = (text, blocks)  # as a silence announced in the thread shows it (silence_watch.py)
        if self.silences is not None and group.status == c.AM_STATUS_FIRING:
            shown = self.silences.dress(group.group_key, text, blocks)
        try:
            if ref is None:
                self._post_new(notification, group, channel, *shown, state_digest, page and page[1])
            else:
                self._update(notification, group, ref, *shown, model, state_digest)
        except DeliveryError as exc:
            self._failed(notification, group, exc)
            return
        if self.recovery is not None:
            self.recovery.shown(group.group_key, facts.recovering)
        if self.silences is not None and self.silences.state is not None:
            if group.status == c.AM_STATUS_FIRING:
                self.silences.state.save_view(group.group_key, text, blocks)
            else:
                self.silences.state.forget(group.group_key)

    def _post_new(
        self,
        n: Notification,
        group: AlertGroup,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]],
        state_digest: str,
        thread_ts: str | None = None,
    ) -> None:
        try:
            ts = self.delivery.post(channel, text, blocks, thread_ts=thread_ts)
        except DeliveryError as exc:
            if (
                thread_ts and exc.error == THREAD_GONE
            ):  # its parent was deleted in Slack: a message of its own
                log.warning(
                    "group %s: the thread %s is gone (%s); posting in the channel",
                    group.group_key,
                    thread_ts,
                    exc,
                )
                self._post_new(n, group, channel, text, blocks, state_digest)
                return
            if exc.error not in TEXT_ONLY_ERRORS:
                raise
            log.error("group %s: Slack refused the blocks (%s); posting text only", group.group_key, exc)
            ts = self.delivery.post(channel, text, None, thread_ts=thread_ts)
        if thread_ts:
            self.threads.thread(group.group_key, thread_ts)
        self.threads.record_pages(group.alerts, channel, ts)
        self.outbox.save_message(
            group.group_key, channel, ts, group.status, state_digest, alert_states(group), n.id
        )
        self.metrics.actions.labels(c.BOT_ACTION_POSTED).inc()
        log.info(
            "group %s: posted %s ts=%s (%d alert(s), %s)",
            group.group_key,
            channel,
            ts,
            len(group.alerts),
            group.status,
        )
        if group.status == c.AM_STATUS_FIRING:
            self._chart(group, channel, thread_ts or ts)

    def _update(
        self,
        n: Notification,
        group: AlertGroup,
        ref: MessageRef,
        text: str,
        blocks: list[dict[str, Any]],
        model: dict[str, Any],
        state_digest: str,
    ) -> None:
        try:
            self.delivery.update(ref.channel, ref.ts, text, blocks)
        except DeliveryError as exc:
            if exc.error == "message_not_found":  # deleted in Slack: show the group again
                log.warning("group %s: message %s was deleted; posting a new one", group.group_key, ref.ts)
                parent = self.threads.parent(group.group_key)
                self._post_new(n, group, ref.channel, text, blocks, state_digest, parent)
                return
            if exc.error not in TEXT_ONLY_ERRORS:
                raise
            self.delivery.update(ref.channel, ref.ts, text, [])
        change = model.get("refresh") or describe_change(ref.alerts, group, ref.status)
        reply = self.renderer.update({**model, "change": change})
        try:
            self.delivery.post(ref.channel, reply, None, thread_ts=self._thread_of(ref))
        except DeliveryError as exc:
            if exc.retryable:
                raise  # the edit is repeated (idempotent) with the reply on the next attempt
            log.error("group %s: thread reply refused: %s", group.group_key, exc)
        self.outbox.save_message(
            group.group_key, ref.channel, ref.ts, group.status, state_digest, alert_states(group), n.id
        )
        self.threads.record_pages(group.alerts, ref.channel, ref.ts)
        self.metrics.actions.labels(c.BOT_ACTION_UPDATED).inc()
        log.info("group %s: updated %s ts=%s: %s", group.group_key, ref.channel, ref.ts, change)

    def _thread_of(self, ref: MessageRef) -> str:
        """The thread a group's replies go to: its message's, or the page's it was posted under."""
        return self.threads.parent(ref.group_key) or ref.ts

    def _failed(self, n: Notification, group: AlertGroup, exc: DeliveryError) -> None:
        pause = self.token.pause_for(exc)
        if pause is not None:  # Slack refused the token: kept pending, with the others, until it takes one
            self._paused_until = self.clock() + pause
            self.outbox.retry_later(n.id, self._paused_until, str(exc))
            return
        if not exc.retryable:
            log.error("group %s: Slack refused the message, giving up: %s", group.group_key, exc)
            self.outbox.mark_failed(n.id, str(exc))
            self.metrics.actions.labels(c.BOT_ACTION_FAILED).inc()
            return
        if exc.retry_after is not None:
            self._paused_until = self.clock() + exc.retry_after
        delay = backoff(
            n.attempts, self.settings.retry_base_seconds, self.settings.retry_max_seconds, exc.retry_after
        )
        log.warning(
            "group %s: %s; the notification stays pending in the outbox, attempt %d failed, next in %.1fs",
            group.group_key,
            exc,
            n.attempts + 1,
            delay,
        )
        self.outbox.retry_later(n.id, self.clock() + delay, str(exc))

    # -- facts (I/O at the edge; every failure degrades the message, never blocks it) ---------------
    def facts(self, group: AlertGroup) -> Facts:
        """What the message shows beyond the payload; all Prometheus queries of one notification share
        FACTS_PROMETHEUS_BUDGET_S, so a Prometheus that never answers delays it once, not per query."""
        prom = self._prometheus_for(group)
        if prom is None:
            return self._facts(group, None)
        with prom.budgeted(FACTS_PROMETHEUS_BUDGET_S), prom.heeding() as warned:
            found = self._facts(group, prom)
        partial = partial_texts(warned)
        return replace(found, partial=partial) if partial else found

    def _prometheus_for(self, group: AlertGroup) -> Prometheus | None:
        """The group's cluster's own Prometheus (config `clusters`), else the bot's `prometheus_url`."""
        found = self._reader(group.common_labels)
        return found[0] if found is not None else None

    def _reader(self, labels: Mapping[str, str]) -> tuple[Prometheus, bool] | None:
        """The labels' cluster's own Prometheus and True, else the bot's `prometheus_url` and False."""
        url = self.settings.prometheus_url_for(labels)
        if url is None or url == self.settings.prometheus_url:
            return (self.prometheus, False) if self.prometheus is not None else None
        return self._cluster_prometheus.setdefault(url, Prometheus(url)), True

    def _facts(self, group: AlertGroup, prom: Prometheus | None) -> Facts:
        diagnosis = diagnosed(group, self.settings, self.titles, self.remediations)
        shared = shared_names(label_pairs(a.labels for a in group.alerts))
        found = Facts(
            report=diagnosis.report,
            shared_models=frozenset(shared),
            diagnosis_source=diagnosis.source,
            diagnosis_error=diagnosis.error,
            titles=self.titles,
            remediations=self.remediations,
        )
        if prom is None:
            return found
        shown, key = shown_alerts(group), group.group_key
        if prom is not self.prometheus:  # a cluster's own: its series have no cluster label (external)
            shown = [replace(a, labels=in_own_cluster(a.labels, self.settings.cluster_label)) for a in shown]
        cluster_label = self.settings.cluster_label
        now = clock_of(prom, shown, self.clock())  # Prometheus' when this clock is behind the alerts'
        prom = cast(Prometheus, PassMemo(prom))  # a query alike for several alerts: asked once (passmemo.py)
        slo = promfacts.slo_figures(prom, shown, cluster_label, key)
        return replace(
            found,
            burn_rates=slo.burn,
            window_data=slo.data,
            budgets_remaining=slo.budget,
            latency_now=slo.latency,
            latency_idle=frozenset(slo.idle),
            llm=promfacts.llm_figures(prom, shown, cluster_label, key),
            largest_models=promfacts.largest_models(prom, shown, key),
            replicas=promfacts.replicas(prom, shown, cluster_label, key),
            rollout=promfacts.rollout(prom, shown, self.settings.slo_spec, key),
            versions=(versions := version_facts(prom, shown, SLO_ALERTS, cluster_label, now)),
            versions_at={a.fingerprint: fired_at(a, now)[1] for a in shown if a.fingerprint in versions},
            recovering=recovery_facts(prom, shown, SLO_ALERTS, self.settings.slo_spec(), cluster_label, now),
            shared_models=frozenset(shared | promfacts.shared_models(prom, shown, cluster_label, key)),
        )

    def _chart(self, group: AlertGroup, channel: str, ts: str) -> None:
        prom = self._prometheus_for(group)
        if prom is None or not self.settings.chart:
            return
        # SLO alerts: the burn rate itself; any other alert: its own expression (from generatorURL).
        slo_alert = next((a for a in group.alerts if a.name in SLO_ALERTS and slo_labels(a.labels)), None)
        slo = slo_labels(slo_alert.labels) if slo_alert is not None else None
        alert = next((a for a in group.alerts if generator_expr(a.generator_url)), None)
        if slo_alert is not None and slo is not None:
            scope = scope_of(slo_alert.labels, self.settings.cluster_label) if prom is self.prometheus else ()
            named = in_cluster(slo[2], slo_alert.labels.get(self.settings.cluster_label, ""))
            expr, title = burn_rate_expr(*slo, scope), f"{named}: SLO {slo[0]} burn rate ({slo[1]})"
        elif alert is not None:
            expr = generator_expr(alert.generator_url)
            title = f"{alert.name}: {expr}"
        else:
            return
        try:
            png = chart_png(prom.range(expr, CHART_WINDOW_SECONDS, CHART_STEP_SECONDS), title)
            if png is not None:
                self.delivery.upload_png(channel, ts, png, "alert-last-hour.png", f"{title[:80]}, last hour")
        except (PromError, DeliveryError) as exc:
            log.warning("group %s: chart skipped: %s", group.group_key, exc)
        except Exception:
            log.exception("group %s: chart failed", group.group_key)
