"""Pure: what a Prometheus reports (targets, scrape intervals, loaded rules, Alertmanagers) against
what the SLO spec needs -> the Prometheus-side `Check`s of `triton-sre doctor`.

The command fetches the API answers (prom.py) and the expected rule groups (what `generate` renders
for the spec); nothing here does I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from triton_sre import conventions as c
from triton_sre.doctor.checks import Check
from triton_sre.durations import format_duration, parse_duration
from triton_sre.redact import bounded
from triton_sre.slo import Spec, SpecError

# rate()/increase() need several samples per range: at least this many scrapes per shortest window.
SCRAPES_PER_WINDOW = 4
# An average over a range (avg_over_time and the other *_over_time) is one from c.AUTOSCALE_SIGNAL_SCRAPES
# samples on: a scrape missed leaves it the instant, where a rate() of one sample is no value at all.
_AVERAGING_SUFFIX = "_over_time"
DOWN_LISTED = 10  # targets not up named one by one per job (a fleet's outage is thousands)
_NAME_BEFORE = re.compile(r"(\w*)\s*$")
_RANGE_TEXT = re.compile(r"\[((?:\d+(?:ms|[smhdwy]))+)\]")
# Prometheus' durations as its runtimeinfo writes the retention (`15d`, `2w`, `1y`; a year is 365 days)
_PROM_DURATION = re.compile(r"(?:\d+(?:ms|[smhdwy]))+")
_PROM_PART = re.compile(r"(\d+)(ms|[smhdwy])")
_PROM_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}

Group = tuple[str, tuple[tuple[str, str], ...]]  # group name, ((rule name, expression), ...)


@dataclass(frozen=True)
class Target:
    job: str
    health: str  # up | down | unknown
    scrape_url: str
    last_error: str = ""


class AnswerShapeError(ValueError):
    """An API answer's `data` is not in the shape Prometheus writes (a proxy's rewrite, another
    server): the check it feeds reports that, rather than reading it as "no targets"."""


def _kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, int | float) else type(value).__name__)


def targets_from_api(data: Mapping[str, Any]) -> list[Target]:
    """`GET /api/v1/targets` data -> its active targets; AnswerShapeError when it is not
    `{"activeTargets": [{"labels": {...}, "health": ..., ...}, ...]}`."""
    active = data.get("activeTargets")
    if not isinstance(active, list):
        raise AnswerShapeError(
            "the answer has no activeTargets"
            if active is None
            else f"activeTargets is {_kind(active)}, not a list"
        )
    out = []
    for i, t in enumerate(active):
        if not isinstance(t, Mapping):
            raise AnswerShapeError(f"active target {i + 1} is {_kind(t)}, not an object")
        labels = t.get("labels") or {}
        if not isinstance(labels, Mapping):
            raise AnswerShapeError(f"the labels of active target {i + 1} are {_kind(labels)}, not an object")
        out.append(
            Target(
                str(labels.get(c.LABEL_JOB, t.get("scrapePool", ""))),
                str(t.get("health", "unknown")),
                str(t.get("scrapeUrl", "")),
                str(t.get("lastError") or ""),
            )
        )
    return out


def targets_unreadable(spec: Spec, reason: str) -> Check:
    """The prometheus-jobs check when the targets answer cannot be read (`AnswerShapeError`)."""
    return Check(
        c.CHECK_PROMETHEUS_JOBS,
        False,
        True,
        f"Prometheus' /api/v1/targets answer is not in the shape Prometheus writes: {reason}; "
        "the scrape jobs could not be checked",
        ("every generated rule, alert and dashboard selects job=" + " / ".join(_jobs(spec)),),
        "point --prometheus-url at Prometheus itself (not a proxy or another server that rewrites its "
        'API): GET /api/v1/targets must answer {"status": "success", "data": {"activeTargets": [...]}}',
    )


def groups_from_api(data: Mapping[str, Any]) -> list[Group]:
    """`GET /api/v1/rules` data -> (group, ((rule name, query), ...)) in Prometheus' order; entries
    that are not objects are skipped, lists that are not lists read as empty."""
    out = []
    groups = data.get("groups")
    for g in groups if isinstance(groups, list) else []:
        if isinstance(g, Mapping):
            rules = g.get("rules")
            out.append(
                (
                    str(g.get("name", "")),
                    tuple(
                        (str(r.get("name", "")), str(r.get("query", "")))
                        for r in (rules if isinstance(rules, list) else [])
                        if isinstance(r, Mapping)
                    ),
                )
            )
    return out


def groups_from_rule_files(files: Mapping[str, Mapping[str, Any]]) -> list[Group]:
    """What `generate` renders for the spec (generate.families.rule_files) -> the same shape."""
    out = []
    for doc in files.values():
        for g in doc.get("groups", []):
            rules = tuple((str(r.get("record") or r.get("alert")), str(r["expr"])) for r in g["rules"])
            out.append((str(g["name"]), rules))
    return out


def normalize(expr: str) -> str:
    """An expression as compared: Prometheus re-prints the queries it loads (whitespace dropped,
    label matchers sorted by name), so both sides are brought to that form."""
    text = _SELECTOR.sub(
        lambda m: "{" + ",".join(sorted(_MATCHER.findall(m.group(1)))) + "}", "".join(expr.split())
    )
    text = _NUMBER.sub(lambda m: repr(float(m.group(0))), text)  # 1e6 and 1e+06 alike
    return _EMPTY_BY.sub("", text)  # `count by () (x)` is printed `count(x)`; `on ()` is kept (it matters)


_SELECTOR = re.compile(r'\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}')
_EMPTY_BY = re.compile(r"(?<=[a-z_])by\(\)(?=\()")
_NUMBER = re.compile(r'(?<![\w:."])\d+(?:\.\d*)?(?:[eE][+-]?\d+)?(?![\w."])')
_MATCHER = re.compile(r'(?:[^,"]|"(?:[^"\\]|\\.)*")+')


def _function_of(expr: str, at: int) -> str:
    """The name of the function whose argument holds the range selector starting at `at`: walk back
    to the unclosed `(`, skipping label matchers (`{…}`, whose values may hold parentheses)."""
    depth, i = 0, at - 1
    while i >= 0:
        ch = expr[i]
        if ch == "}":
            i = expr.rfind("{", 0, i)
        elif ch == ")":
            depth += 1
        elif ch == "(":
            if depth == 0:
                return _NAME_BEFORE.search(expr[:i]).group(1)  # type: ignore[union-attr]
            depth -= 1
        i -= 1
    return ""


def range_windows(groups: Iterable[Group]) -> list[tuple[str, float]]:
    """(function, seconds) of every range selector (`rate(x[5m])`) in the expected rules."""
    out = []
    for _, rules in groups:
        for _, expr in rules:
            for match in _RANGE_TEXT.finditer(expr):
                try:
                    seconds = parse_duration(match.group(1), "range")
                except SpecError:
                    continue
                out.append((_function_of(expr, match.start()), seconds))
    return out


def longest_range(groups: Iterable[Group]) -> float:
    """Seconds of the longest range selector the rules read (0 when none): the data Prometheus must keep."""
    return max((seconds for _, seconds in range_windows(groups)), default=0.0)


def retention_seconds(text: str) -> float | None:
    """The time limit of the `storageRetention` Prometheus' /api/v1/status/runtimeinfo gives (`15d`,
    `2w or 1GiB`, `1y`); None when only a size limits it (`1GiB`) or the text is not Prometheus'."""
    for part in text.split(" or "):
        if _PROM_DURATION.fullmatch(part.strip()):
            return float(sum(int(n) * _PROM_UNIT_SECONDS[u] for n, u in _PROM_PART.findall(part)))
    return None


def retention(retained: str | None, expected: Sequence[Group]) -> Check:
    """Prometheus keeps at least the longest range the rules read: `avg_over_time(...[30d])` (the SLO
    period's ratio, the error budget left) over 15 days of data (Prometheus' default retention) is the
    ratio of those 15 days, said as the period's, and nothing tells. Not a missing input: the burn-rate
    alerts' windows are far shorter, so it warns, `doctor` does not exit 1 for it."""
    longest = longest_range(expected)
    window = format_duration(longest)
    affects = ("the SLO period's figures: the period's ratio and the error budget left (dashboards, report)",)
    seconds = None if retained is None else retention_seconds(retained)
    if retained is None:
        found = "retention unknown (no /api/v1/status/runtimeinfo: not a Prometheus, or an old one)"
    elif seconds is None:
        found = f"retention {bounded(retained)}: by size only, no time limit to compare"
    else:
        found = f"retention {retained}; the longest range the rules read is {window}"
        if seconds < longest:
            found += f": a {window} figure is computed over {format_duration(seconds)} of data"
    ok = seconds is None or seconds >= longest
    fix = (
        "none needed"
        if ok
        else f"start Prometheus with --storage.tsdb.retention.time={window} (or longer), "
        "or shorten the SLO periods in the spec"
    )
    return Check(c.CHECK_RETENTION, ok, False, found, affects, fix)


def _scrapes_needed(function: str) -> int:
    return c.AUTOSCALE_SIGNAL_SCRAPES if function.endswith(_AVERAGING_SUFFIX) else SCRAPES_PER_WINDOW


def _jobs(spec: Spec) -> list[str]:
    return [spec.triton_job, spec.exporter_job]


def prometheus_jobs(spec: Spec, targets: Sequence[Target], metrics_url: str | None = None) -> Check:
    problems, seen = [], []
    for job in _jobs(spec):
        mine = [t for t in targets if t.job == job]
        if not mine:
            problems.append(f"no target has job={job!r}")
            continue
        down = [t for t in mine if t.health != "up"]
        seen.append(f"{job}: {len(mine) - len(down)}/{len(mine)} up")
        for t in down[:DOWN_LISTED]:
            problems.append(f"{job} target {t.scrape_url} is {t.health}: {t.last_error or 'no error given'}")
        if len(down) > DOWN_LISTED:
            problems.append(f"{job}: {len(down) - DOWN_LISTED} more targets not up")
    others = sorted({t.job for t in targets} - set(_jobs(spec)))
    hint = ""
    if metrics_url:
        host = urlsplit(metrics_url).netloc
        scraping = sorted(
            {t.job for t in targets if urlsplit(t.scrape_url).netloc == host} - set(_jobs(spec))
        )
        if scraping:
            hint = f"; job {', '.join(scraping)} scrapes {host}: rename it to {spec.triton_job!r}"
    found = "; ".join([*seen, *problems]) + (f"; other jobs: {', '.join(others)}" if others else "")
    fix = (
        f"in prometheus.yml name the scrape jobs job_name: {spec.triton_job} (Triton's metrics port "
        f"{c.TRITON_METRICS_PORT}) and job_name: {spec.exporter_job} (the exporter, port {c.EXPORTER_PORT}), "
        f"or set scrape.triton_job / scrape.exporter_job in {spec.source} to the names you use and "
        f"re-run `triton-sre generate`{hint}"
    )
    return Check(
        c.CHECK_PROMETHEUS_JOBS,
        not problems,
        True,
        found or "no targets",
        ("every generated rule, alert and dashboard selects job=" + " / ".join(_jobs(spec)),),
        fix if problems else "none needed",
    )


def scrape_interval(spec: Spec, intervals: Mapping[str, float | None], expected: Sequence[Group]) -> Check:
    windows = range_windows(expected)
    affects = (
        "rate() over the shortest rule window: recording rules, burn-rate alerts, dashboards",
        "the scaling signals' average (pending requests, LLM requests waiting)",
    )
    if not windows:
        return Check(c.CHECK_SCRAPE_INTERVAL, True, False, "the rules use no range", affects, "none needed")
    rates = [s for f, s in windows if _scrapes_needed(f) == SCRAPES_PER_WINDOW]
    averages = [s for f, s in windows if _scrapes_needed(f) != SCRAPES_PER_WINDOW]
    rate_limit = min(rates, default=math.inf) / SCRAPES_PER_WINDOW
    limit = min(rate_limit, min(averages, default=math.inf) / c.AUTOSCALE_SIGNAL_SCRAPES)
    parts, slow, unsynced = [], [], []
    for job in _jobs(spec):
        interval = intervals.get(job)
        if interval is None:
            parts.append(f"{job}: interval unknown")
            continue
        parts.append(f"{job}: {format_duration(interval)}")
        if job in spec.signal_jobs and interval < spec.scrape_interval_s:
            parts[-1] += (
                f" (scrape.interval says {format_duration(spec.scrape_interval_s)}: set it to "
                f"{format_duration(interval)} and regenerate for a scaling signal that answers sooner)"
            )
        if interval > rate_limit:
            slow.append(job)
        elif interval > limit and job in spec.signal_jobs:  # the averages read the Triton jobs' gauges
            unsynced.append((job, interval))
    needs = []
    if rates:
        needs.append(f"shortest rate window {format_duration(min(rates))} needs {SCRAPES_PER_WINDOW} scrapes")
    if averages:
        needs.append(
            f"the shortest average {format_duration(min(averages))} (scrape.interval "
            f"{format_duration(spec.scrape_interval_s)} in {spec.source} x {c.AUTOSCALE_SIGNAL_SCRAPES}) "
            f"needs {c.AUTOSCALE_SIGNAL_SCRAPES}"
        )
    found = f"{'; '.join(parts)}; {', '.join(needs)}, so at most {format_duration(limit)}"
    fixes = []
    if slow:
        fixes.append(
            f"set scrape_interval: {format_duration(rate_limit)} (or shorter) in the scrape config of job "
            f"{' and '.join(slow)}"
        )
    for job, interval in unsynced:
        fixes.append(
            f"set scrape.interval: {format_duration(interval)} in {spec.source} (how often job {job} is "
            f"scraped) and run `triton-sre generate` to average the scaling signals over "
            f"{c.AUTOSCALE_SIGNAL_SCRAPES} of its scrapes, or set scrape_interval: {format_duration(limit)} "
            f"in the scrape config of job {job}"
        )
    return Check(
        c.CHECK_SCRAPE_INTERVAL,
        not slow and not unsynced,
        True,
        found,
        affects,
        "; ".join(fixes) or "none needed",
    )


def rules_loaded(spec: Spec, loaded: Sequence[Group], expected: Sequence[Group]) -> Check:
    have = {name: rules for name, rules in loaded}
    missing, stale = [], []
    for name, rules in expected:
        got = have.get(name)
        if got is None:
            missing.append(name)
        elif [(r, normalize(e)) for r, e in got] != [(r, normalize(e)) for r, e in rules]:
            stale.append(f"{name} ({_diff(got, rules)})")
    ok = not missing and not stale
    found = f"{len(expected) - len(missing)}/{len(expected)} generated groups loaded"
    if missing:
        found += f"; not loaded: {', '.join(missing)}"
    if stale:
        found += f"; differ from what `generate` renders for {spec.source}: {'; '.join(stale)}"
    return Check(
        c.CHECK_RULES_LOADED,
        ok,
        True,
        found,
        ("every recording rule, SLO burn-rate and operational alert",),
        f"run `triton-sre generate --spec {spec.source}`, list alerts/*.yaml under rule_files in "
        "prometheus.yml and reload Prometheus (SIGHUP or POST /-/reload)"
        if not ok
        else "none needed",
    )


def _diff(got: Sequence[tuple[str, str]], want: Sequence[tuple[str, str]]) -> str:
    have = {name for name, _ in got}
    need = {name for name, _ in want}
    if need - have:
        return f"missing {', '.join(sorted(need - have)[:3])}"
    if have - need:
        return f"extra {', '.join(sorted(have - need)[:3])}"
    loaded = dict((n, normalize(e)) for n, e in got)
    changed = sorted({n for n, e in want if loaded.get(n) != normalize(e)})
    return f"{len(changed)} rule(s) changed, e.g. {changed[0]}" if changed else "order differs"


def alertmanager(active: Sequence[str], wanted: str | None) -> Check:
    affects = ("every alert's notification (the bot, Slack)",)
    if not active:
        return Check(
            c.CHECK_ALERTMANAGER,
            False,
            True,
            "Prometheus sends its alerts to no Alertmanager",
            affects,
            "add alerting: alertmanagers: [{static_configs: [{targets: ['HOST:"
            f"{c.ALERTMANAGER_PORT}']}}]}}] to prometheus.yml and reload Prometheus",
        )
    if wanted:
        host = urlsplit(wanted).netloc
        if not any(urlsplit(url).netloc == host for url in active):
            return Check(
                c.CHECK_ALERTMANAGER,
                False,
                True,
                f"Prometheus sends alerts to {', '.join(active)}, not to {host}",
                affects,
                f"add {host} to alerting.alertmanagers in prometheus.yml and reload Prometheus",
            )
    return Check(
        c.CHECK_ALERTMANAGER, True, True, f"connected to {', '.join(active)}", affects, "none needed"
    )
