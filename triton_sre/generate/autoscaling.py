"""Autoscaling signals (issue 21): the request-weighted queue time and the pending requests per
Triton server and per job, the LLM signals per job, and per `autoscaling:` entry the HPA's usage
ratio, the replicas its formula asks for and the lagging-autoscaler alert.

Why request-weighted: Triton's queue counter is per model; an average of per-model averages
(NVIDIA's k8s-onprem example) gives an idle model with one slow request as much weight as a busy one,
and divides by the number of models. Summing the queue time of every model and version first and
dividing by the sum of their requests gives the queue time an average request of this server saw.
"""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.autoscale_spec import Autoscaling
from triton_sre.durations import format_duration
from triton_sre.generate.rulefile import Rule, RuleFile, alert, runbook_url
from triton_sre.promql import Matcher, by, ensemble_marked, label_sets, num, on, one_of, ratio, selector
from triton_sre.promql import rate as rate_of
from triton_sre.slo import Spec

AUTOSCALING_FILE = "triton-autoscaling-rules.yaml"
_VALUE = '{{ $value | printf "%.0f" }}'


def signal_rules(spec: Spec) -> list[Rule]:
    """Per server (`instance:`) and per job (`job:`), whatever models the server holds, for every
    job an entry scales."""
    ls = label_sets(spec.cluster_label)
    job: list[Matcher] = [one_of(c.LABEL_JOB, spec.signal_jobs)]
    window = c.REC_AUTOSCALE_WINDOW
    # the gauges averaged over AUTOSCALE_SIGNAL_SCRAPES scrapes (30s at 15 s), not read at an instant
    gauge_window = format_duration(spec.signal_window_s)

    ensemble = ensemble_marked(ls.per_model, [(c.LABEL_JOB, "=", spec.exporter_job)])

    def rate(family: str) -> str:
        # an ensemble's requests are its steps' requests again, with none of their queue time (its own
        # is the hand-off to the first step): counted, they dilute the queue time per request
        return f"sum {by(ls.server)} ({rate_of(family, job, window)} unless {ensemble})"

    success, failure = rate(c.NV_REQUEST_SUCCESS), rate(c.NV_REQUEST_FAILURE)
    queue_s, requests = c.REC_QUEUE_SECONDS_INSTANCE, c.REC_REQUESTS_INSTANCE
    return [
        {"record": queue_s, "expr": f"{rate(c.NV_QUEUE_DURATION_US)} / 1e6"},
        {"record": requests, "expr": f"{success} + ({failure} or {success} * 0)"},
        {"record": c.REC_QUEUE_PER_REQUEST_INSTANCE, "expr": ratio(queue_s, requests)},
        {
            "record": c.REC_QUEUE_PER_REQUEST_JOB,
            "expr": ratio(f"sum {by(ls.job)} ({queue_s})", f"sum {by(ls.job)} ({requests})"),
        },
        {
            # the backlog averaged over two scrapes, not an instant: an instance that has just taken
            # the whole queue reads 0 (journey27: 11 of 32 readings at twice the load), and an HPA
            # scales up on one high reading and keeps it for its scale-down window
            "record": c.REC_PENDING_INSTANCE,
            "expr": f"sum {by(ls.server)} "
            f"(avg_over_time({selector(c.NV_PENDING_REQUEST_COUNT, job)}[{gauge_window}]))",
        },
        {"record": c.REC_PENDING_JOB, "expr": f"sum {by(ls.job)} ({c.REC_PENDING_INSTANCE})"},
        {
            # the LLM scheduler's queue is a gauge too, emptied at every scheduler step
            "record": c.REC_LLM_WAITING_JOB,
            "expr": f"sum {by(ls.job)} (avg_over_time({c.REC_LLM_WAITING}[{gauge_window}]))",
        },
        {"record": c.REC_LLM_KV_CACHE_JOB, "expr": f"max {by(ls.job)} ({c.REC_LLM_KV_CACHE})"},
        {
            "record": c.REC_SERVING_REPLICAS,
            "expr": f"count {by(ls.job)} ({selector('up', job)} == 1)",
        },
    ]


def usage_expr(entry: Autoscaling, cluster_label: str | None = None) -> str:
    """The HPA's usage ratio: value / target, and per serving replica for AverageValue signals."""
    job: list[Matcher] = [(c.LABEL_JOB, "=", entry.job)]
    value = f"{selector(entry.rule, job)} / {num(entry.target)}"
    if not entry.per_replica:
        return value
    return f"{value} / {on(label_sets(cluster_label).job)} {selector(c.REC_SERVING_REPLICAS, job)}"


def entry_rules(entry: Autoscaling, base_url: str, cluster_label: str | None = None) -> list[Rule]:
    """Usage, the desired replicas (Kubernetes' formula: ceil(current x usage), at least
    min_replicas) and the alert."""
    job: list[Matcher] = [(c.LABEL_JOB, "=", entry.job)]
    mark = {c.L_DEPLOYMENT: entry.deployment}
    usage = selector(c.REC_AUTOSCALE_USAGE, [*job, (c.L_DEPLOYMENT, "=", entry.deployment)])
    desired = selector(c.REC_AUTOSCALE_DESIRED, [*job, (c.L_DEPLOYMENT, "=", entry.deployment)])
    serving = selector(c.REC_SERVING_REPLICAS, job)
    ls = label_sets(cluster_label)
    budget = format_duration(entry.startup_budget_s)
    # Read over the budget, not at an instant: a gauge signal (pending requests on a batching model)
    # reads 0 whenever an instance has just taken the whole queue, and each such sample restarted the
    # alert's wait (journey23: never fired in 11 minutes at 5-20x the target). The most replicas asked
    # in the window is what the HPA keeps (its scale-down stabilisation); the average usage says the
    # demand lasted.
    asked = f"max_over_time({desired}[{budget}])"
    average = f"avg_over_time({usage}[{budget}])"
    lagging = alert(
        c.ALERT_AUTOSCALER_LAGGING,
        f"{asked} > {on(ls.job)} group_left () {serving}\n"
        f"and {on(ls.job)} ({average} > {num(1 + c.HPA_TOLERANCE)})",
        budget,
        c.SEVERITY_TICKET,
        f"{entry.deployment}: the {entry.signal} signal asks for up to {_VALUE} replicas "
        f"for more than {budget}",
        f"The {entry.signal} signal of {entry.deployment} (job {{{{ $labels.job }}}}) has averaged more "
        f"than {num(c.HPA_TOLERANCE * 100)}% over its target ({num(entry.target)}) over {budget}, the "
        f"startup budget of one replica (2 x the {format_duration(entry.load_time_s)} model load + "
        f"margin), for {budget}, and asks for up to {_VALUE} replicas, more than are serving. The "
        f"autoscaler is capped at max_replicas ({entry.max_replicas}), not running, or new pods do not "
        "become ready.",
        runbook_url(base_url, c.ALERT_RUNBOOKS[c.ALERT_AUTOSCALER_LAGGING]),
    )
    # the deployment as a rule label too (the series have it already): with several entries, one
    # alert name and labels per entry, not a duplicate rule (promtool's lint)
    lagging["labels"].update(mark)
    return [
        {"record": c.REC_AUTOSCALE_USAGE, "expr": usage_expr(entry, cluster_label), "labels": mark},
        {
            "record": c.REC_AUTOSCALE_DESIRED,
            # never under the warm floor the HPA keeps (the ceiling of no load is 0 replicas)
            "expr": f"clamp_min(ceil({serving} * {on(ls.job)} group_right () {usage}), {entry.min_replicas})",
            "labels": mark,
        },
        lagging,
    ]


def autoscaling_groups(spec: Spec, base_url: str) -> RuleFile:
    groups: list[dict[str, object]] = [{"name": c.GROUP_AUTOSCALING, "rules": signal_rules(spec)}]
    if spec.autoscaling:
        rules = [
            rule for entry in spec.autoscaling for rule in entry_rules(entry, base_url, spec.cluster_label)
        ]
        groups.append({"name": c.GROUP_AUTOSCALING_ALERTS, "rules": rules})
    return {"groups": groups}


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return autoscaling_groups(spec, base_url)
