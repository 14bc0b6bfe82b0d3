"""The spec's optional `autoscaling:` list (issue 21): one entry per autoscaled Triton deployment.

Pure. Defaults (conventions/autoscaling.py): the signal is the backlog (pending_requests), one
waiting request per replica; a queue-time target leaves the tightest latency SLO's quantile headroom;
an LLM waiting target is a share of `operational.pending_requests`, a KV-cache target a share of the
saturation ratio; the model load time (default: what `operational.startup_probe_budget`
was sized for, budget = 2 x load + margin, probes.py) sets how fast the autoscaler may add replicas
and how long it keeps them. Errors are `ConfigError`s that `slo.spec_from_mapping` reports as the
spec's own (file, entry and field named).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.checks import ConfigError, check_keys, check_number, check_positive_int
from triton_sre.probes import STARTUP_MARGIN_S, startup_budget
from triton_sre.redact import bounded

_KEYS = {"deployment", "kind", "job", "signal", "target", "min_replicas", "max_replicas", "load_time"}
_KINDS = ("Deployment", "StatefulSet")
_DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# A Kubernetes label value (apimachinery's IsValidLabelValue): the HPA selects its external metric
# with `matchLabels: {job: <job>}`, and the API server refuses the HPA for any other job. Not refused
# here: the KEDA ScaledObject, the rules and every other command read the job inside PromQL only
# (generate/k8s_autoscaling.py writes a note instead of that HPA).
K8S_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")


@dataclass(frozen=True)
class Autoscaling:
    """One autoscaled deployment; times in seconds, `target` in the signal's unit (seconds for
    queue_time, requests per replica for pending/waiting, a ratio for the KV cache)."""

    deployment: str
    kind: str
    job: str
    signal: str
    target: float
    min_replicas: int
    max_replicas: int
    load_time_s: float

    @property
    def per_replica(self) -> bool:
        """The signal is a total the HPA divides by the replicas (AverageValue), not a Value."""
        return c.SIGNAL_RULES[self.signal][1]

    @property
    def rule(self) -> str:
        """The job-level recording rule the HPA and KEDA read."""
        return c.SIGNAL_RULES[self.signal][0]

    @property
    def startup_budget_s(self) -> float:
        """How long a new replica may take to serve (2 x load + margin): the lag the alert allows."""
        return startup_budget(self.load_time_s)

    @property
    def scale_up_period_s(self) -> int:
        """At most double the replicas per startup budget: a replica still loading does not help,
        so the signal stays high while it warms up and must not add more on top of it."""
        return int(min(max(15, math.ceil(self.startup_budget_s)), c.AUTOSCALE_PERIOD_MAX_S))

    @property
    def scale_down_window_s(self) -> int:
        """Keep replicas at least twice the startup budget (Kubernetes' 300 s at least): one that
        took minutes to load is not dropped on a dip."""
        wanted = max(c.AUTOSCALE_SCALE_DOWN_MIN_S, math.ceil(2 * self.startup_budget_s))
        return int(min(wanted, c.AUTOSCALE_WINDOW_MAX_S))


def queue_target(threshold_s: float, quantile: float) -> float:
    """The mean queue time that leaves the SLO quantile headroom (conventions/autoscaling.py):
    threshold / (headroom x ln(1 / (1 - q))); 500 ms at p99 -> 54 ms."""
    return threshold_s / (c.AUTOSCALE_QUEUE_HEADROOM * math.log(1 / (1 - quantile)))


def default_target(
    signal: str,
    latency_slos: Sequence[tuple[float, float]],
    queue_time_threshold_s: float,
    pending_requests: int,
    kv_saturated_ratio: float,
) -> float:
    """The target a signal gets when the entry names none. `latency_slos` are the latency SLOs'
    (threshold seconds, quantile); without any, the queue alert's threshold at p99 stands in."""
    if signal == c.SIGNAL_QUEUE_TIME:
        pairs = latency_slos or [(queue_time_threshold_s, float(c.DEFAULT_SLO_QUANTILE))]
        return round(min(queue_target(t, q) for t, q in pairs), 3)
    if signal == c.SIGNAL_PENDING:
        return c.AUTOSCALE_PENDING_TARGET
    if signal == c.SIGNAL_LLM_WAITING:
        return max(1.0, float(math.floor(pending_requests * c.AUTOSCALE_LLM_WAITING_SHARE)))
    return round(kv_saturated_ratio * c.AUTOSCALE_KV_TARGET_SHARE, 3)


def parse_autoscaling(
    raw: Any,
    where: str,
    *,
    duration: Callable[[Any, str], float],
    default_job: str,
    targets: Mapping[str, float],
    startup_probe_budget_s: float,
) -> tuple[Autoscaling, ...]:
    """The validated entries. `duration` parses a Prometheus duration (durations.parse_duration),
    `targets` maps each signal to its default target (default_target)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ConfigError(f"{where}: expected a list of deployments, got {bounded(raw)}")
    entries: list[Autoscaling] = []
    # the earlier entry of each deployment and job (an entry compared with every earlier one was
    # quadratic: 4,000 entries took 8 million comparisons)
    by_deployment: dict[str, int] = {}
    by_job: dict[str, int] = {}
    for i, entry in enumerate(raw):
        item = _entry(entry, f"{where}[{i}]", duration, default_job, targets, startup_probe_budget_s)
        section = where.rsplit(": ", 1)[-1]  # `autoscaling`, without the file
        clashes = [j for j in (by_deployment.get(item.deployment), by_job.get(item.job)) if j is not None]
        if clashes:  # the first earlier entry sharing either, as the comparison in order named it
            j = min(clashes)
            other = entries[j]
            mine, theirs = f"{where}[{i}] ({item.deployment})", f"{section}[{j}] ({other.deployment})"
            if other.deployment == item.deployment:
                raise ConfigError(f"{mine}: deployment: {theirs} scales the same deployment")
            if other.job == item.job:
                raise ConfigError(
                    f"{mine}: job: {theirs} scales the servers of scrape job {bounded(item.job)} too. "
                    "The signal and the serving replicas are per job: each entry would read the backlog "
                    "and the replicas of both deployments and ask for the replicas of both. Scrape each "
                    "deployment as its own job and name it in the entry's `job:`"
                )
        by_deployment[item.deployment] = by_job[item.job] = i
        entries.append(item)
    return tuple(entries)


def _entry(
    entry: Any,
    where: str,
    duration: Callable[[Any, str], float],
    default_job: str,
    targets: Mapping[str, float],
    startup_probe_budget_s: float,
) -> Autoscaling:
    if not isinstance(entry, Mapping):
        raise ConfigError(
            f"{where}: expected a mapping with deployment and max_replicas, got {bounded(entry)}"
        )
    check_keys(where, entry, _KEYS)
    name = entry.get("deployment")
    if not isinstance(name, str) or not _DNS_1123.fullmatch(name):
        raise ConfigError(
            f"{where}: deployment: required, a Kubernetes name (lower-case letters, digits and '-', "
            f"at most 63), got {bounded(name)}"
        )
    where = f"{where} ({name})"
    kind = entry.get("kind", _KINDS[0])
    if kind not in _KINDS:
        raise ConfigError(f"{where}: kind: must be one of {', '.join(_KINDS)}, got {bounded(kind)}")
    job = entry.get("job", default_job)
    if not isinstance(job, str) or not job:
        raise ConfigError(f"{where}: job: expected the Triton scrape job's name, got {bounded(job)}")
    signal = entry.get("signal", c.AUTOSCALE_DEFAULT_SIGNAL)
    if signal not in c.SIGNALS:
        raise ConfigError(f"{where}: signal: must be one of {', '.join(c.SIGNALS)}, got {bounded(signal)}")
    target = _target(entry, signal, where, duration, targets[signal])
    low = check_positive_int(
        f"{where}: min_replicas", entry.get("min_replicas", c.AUTOSCALE_MIN_REPLICAS), high=c.K8S_INT32_MAX
    )
    if "max_replicas" not in entry:
        raise ConfigError(f"{where}: max_replicas: required (the most replicas the autoscaler may run)")
    high = check_positive_int(f"{where}: max_replicas", entry["max_replicas"], high=c.K8S_INT32_MAX)
    if high < low:
        raise ConfigError(f"{where}: max_replicas: must be at least min_replicas ({low}), got {high}")
    if "load_time" in entry:
        load = duration(entry["load_time"], f"{where}: load_time")
        if load > c.MAX_LOAD_TIME_S:
            raise ConfigError(f"{where}: load_time: must be at most 1d, got {bounded(entry['load_time'])}")
    else:  # what the startup-probe budget was sized for (budget = 2 x load + margin)
        load = max(0.0, (startup_probe_budget_s - STARTUP_MARGIN_S) / 2)
    return Autoscaling(name, kind, job, signal, target, low, high, load)


def _target(
    entry: Mapping[str, Any], signal: str, where: str, duration: Callable[[Any, str], float], default: float
) -> float:
    if "target" not in entry:
        return default
    value = entry["target"]
    if signal == c.SIGNAL_QUEUE_TIME:
        return duration(value, f"{where}: target")
    if signal == c.SIGNAL_LLM_KV_CACHE:
        return check_number(f"{where}: target", value, low=c.AUTOSCALE_TARGET_MIN, high=1)
    return check_number(f"{where}: target", value, low=c.AUTOSCALE_TARGET_MIN, high=c.AUTOSCALE_TARGET_MAX)
