"""Run one scenario against the stack and score it from the observer's timeline.

inject -> wait until the expected alert fires in Prometheus, is in Alertmanager and the bot's
message is in Slack -> restore -> wait until the `ready` models are READY and the alert resolved.
`score` turns what the timeline holds into a `Result`; it is pure, so it is tested on timelines
built by hand as well as on the real stack.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from triton_sre import conventions as c
from triton_sre.gameday.context import Context
from triton_sre.gameday.observer import Post, SeenAlert, Timeline
from triton_sre.gameday.scenarios import Expect, Scenario

NOTIFY_TIMEOUT = 90.0  # seconds from firing to the bot's message before the alert counts as lost
RESOLVED_GRACE = 20.0  # seconds after the alert resolved to let the bot's update arrive
STEP = 0.5


@dataclass
class Result:
    name: str
    injects: str
    expected_alert: str
    expected_runbook: str
    detected: bool = False
    alert: str | None = None
    runbook: str | None = None  # what the alert names (its runbook label or runbook_url)
    diagnosis_runbook: str | None = None  # what the bot's Slack message names first
    seconds_to_alert: float | None = None  # injection -> firing in Prometheus
    seconds_to_alertmanager: float | None = None
    seconds_to_notify: float | None = None  # injection -> the bot's message in Slack
    restored: bool = False
    seconds_to_restore: float | None = None  # restore -> models READY and alert resolved
    lost: list[str] = field(default_factory=list)  # fired but never in Slack; posted twice
    error: str | None = None

    @property
    def diagnosed_right(self) -> bool:
        return self.runbook == self.expected_runbook and self.diagnosis_runbook == self.expected_runbook

    @property
    def passed(self) -> bool:
        return self.detected and self.diagnosed_right and self.restored and not self.lost and not self.error

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["diagnosed_right"] = self.diagnosed_right
        out["passed"] = self.passed
        return out


def _post_matches(post: Post, expect: Expect, severity: str = "", *, updates: bool = True) -> bool:
    """A firing message about the expected alert (of the fired alert's severity: the bot posts a
    group's pages and tickets apart). The bot posts a group once and edits that message when the
    group fires again later (`updates`: such an edit is a notification too)."""
    if post.resolved or post.alertname != expect.alert or (severity and post.severity != severity):
        return False
    if post.method != "chat.postMessage" and not updates:
        return False
    model = expect.labels.get(c.LABEL_MODEL)
    return model is None or post.model == model


def _round(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 1)


def first_firing(timeline: Timeline, expect: Expect, since: float) -> tuple[SeenAlert | None, float | None]:
    best: tuple[SeenAlert | None, float | None] = (None, None)
    for key, spans in timeline.matching("prometheus", expect.alert, expect.labels):
        t = spans.first_since(since)
        if t is not None and (best[1] is None or t < best[1]):
            best = (key, t)
    return best


def score_detection(result: Result, timeline: Timeline, expect: Expect, since: float) -> Post | None:
    """Fill in detection, notification and diagnosis; returns the first matching Slack post."""
    key, fired = first_firing(timeline, expect, since)
    if key is None or fired is None:
        return None
    result.detected = True
    result.alert = key.name
    result.runbook = timeline.with_annotations(key).runbook()
    result.seconds_to_alert = _round(fired - since)
    am = [s.first_since(since) for _, s in timeline.matching("alertmanager", expect.alert, expect.labels)]
    am_times = [t for t in am if t is not None]
    if am_times:
        # Prometheus sends the alert when it fires, so it cannot be in Alertmanager sooner: an
        # earlier reading is the two polls' order (0.5 s apart at most).
        result.seconds_to_alertmanager = _round(max(min(am_times), fired) - since)
    severity = key.label(c.L_SEVERITY)
    posts = [p for p in timeline.posts_since(since) if _post_matches(p, expect, severity)]
    if posts:
        result.seconds_to_notify = _round(posts[0].at - since)
        result.diagnosis_runbook = posts[0].runbooks[0] if posts[0].runbooks else ""
        return posts[0]
    return None


def score_losses(result: Result, timeline: Timeline, expect: Expect, since: float) -> None:
    """An expected alert that fired but no message reached Slack; a group posted more than once."""
    if result.detected and result.seconds_to_notify is None:
        result.lost.append(f"{expect.alert} fired but no message reached Slack")
    posts = [p for p in timeline.posts_since(since) if _post_matches(p, expect, updates=False)]
    for (alert, model, severity), n in Counter((p.alertname, p.model, p.severity) for p in posts).items():
        if n > 1:
            result.lost.append(f"{alert} {model or '(no model)'} [{severity}] posted {n} times")


def alert_active(timeline: Timeline, expect: Expect) -> bool:
    return any(spans.active for _, spans in timeline.matching("prometheus", expect.alert, expect.labels))


def run(
    scenario: Scenario,
    ctx: Context,
    timeline: Timeline,
    say: Callable[[str], None],
    interrupted: Callable[[], bool] = lambda: False,
) -> Result:
    """Inject, observe, restore, observe; restore runs whatever happens (Ctrl-C included)."""
    expect = scenario.expect
    result = Result(scenario.name, scenario.injects, expect.alert, expect.runbook)
    since = time.time()
    restore_due = True
    try:
        say(f"[{scenario.name}] inject: {scenario.injects}")
        scenario.inject(ctx)
        deadline = since + expect.detect_timeout
        while not interrupted():
            post = score_detection(result, timeline, expect, since)
            now = time.time()
            if post is not None:
                break
            if dead := died(ctx):
                result.error = dead
                say(f"[{scenario.name}] {dead}")
                break
            fired = result.seconds_to_alert
            if fired is None and now > deadline:
                break
            if fired is not None and now > since + fired + NOTIFY_TIMEOUT:
                break
            time.sleep(STEP)
        say(
            f"[{scenario.name}] detected={result.detected} alert {result.seconds_to_alert}s, "
            f"Alertmanager {result.seconds_to_alertmanager}s, Slack {result.seconds_to_notify}s, "
            f"runbook {result.runbook} / diagnosis {result.diagnosis_runbook}"
        )
        started = time.time()
        scenario.restore(ctx)
        restore_due = False
        result.seconds_to_restore, result.restored = wait_restored(
            expect, ctx, timeline, started, interrupted
        )
        say(f"[{scenario.name}] restored={result.restored} in {result.seconds_to_restore}s")
        if result.restored:
            time.sleep(min(RESOLVED_GRACE, 2.0))  # a late duplicate would show here
        score_losses(result, timeline, expect, since)
    except (Exception, SystemExit) as exc:  # a scenario's failure (sys.exit too) is its result; next runs
        result.error = f"{type(exc).__name__}: {exc}"[:300]
        if dead := died(ctx):  # Triton killed under a load call: a connection reset, the cause unsaid
            result.error = f"{dead}; {result.error}"
        say(f"[{scenario.name}] error: {result.error}")
    finally:
        if restore_due:
            try:
                scenario.restore(ctx)
            except (Exception, SystemExit) as exc:
                result.error = (result.error or "") + f"; restore failed: {type(exc).__name__}: {exc}"[:200]
    return result


def died(ctx: Context | None) -> str | None:
    """What of the stack died mid-game (not stopped by a scenario), said; None while it runs."""
    dead = ctx.stack.died() if ctx is not None else []
    return f"the stack died mid-game: not running: {'; '.join(dead)}" if dead else None


def wait_restored(
    expect: Expect, ctx: Context, timeline: Timeline, started: float, interrupted: Callable[[], bool]
) -> tuple[float | None, bool]:
    """Seconds from `started` (the restore) until the models are READY and the alert resolved."""
    deadline = started + expect.restore_timeout
    while not interrupted() and time.time() < deadline and not died(ctx):
        if ctx.ready(expect.ready) and not alert_active(timeline, expect):
            return _round(time.time() - started), True
        time.sleep(STEP)
    return None, False
