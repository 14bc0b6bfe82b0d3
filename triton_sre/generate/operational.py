"""Operational alerts: Triton or the exporter down, models unavailable or stuck loading, queue
time, missing latency quantiles, ineffective batching, growing backlogs, GPU memory near its limit.
"""

from __future__ import annotations

from collections.abc import Mapping

from triton_sre import conventions as c
from triton_sre.generate.input_missing import input_missing_alert
from triton_sre.generate.rulefile import Rule, RuleFile, alert, model_matchers, normalize_base, runbook_url
from triton_sre.promql import Matcher, by, label_sets, num, on, q, selector
from triton_sre.slo import Spec

OPERATIONAL_FILE = "triton-alerts.yaml"
_RESTART_WINDOW = "15m"  # how far back TritonServerRestarted looks for a counter reset (and a failed scrape)


def operational_groups(spec: Spec, base_url: str) -> RuleFile:
    tj = spec.triton_job
    ej = spec.exporter_job
    op = spec.operational
    triton: list[Matcher] = [(c.LABEL_JOB, "=", tj)]
    exporter: list[Matcher] = [(c.LABEL_JOB, "=", ej)]
    ls = label_sets(spec.cluster_label)
    mv = ls.keep(c.LABEL_MODEL, c.LABEL_VERSION)
    server = ls.keep(c.LABEL_JOB, c.LABEL_INSTANCE)
    url = lambda alert: runbook_url(base_url, c.ALERT_RUNBOOKS[alert])  # noqa: E731
    energy = selector(c.NV_ENERGY_CONSUMPTION, triton)
    counted_restarts = selector(c.M_TRITON_RESTARTS, exporter)  # the exporter's (exporter/restarts.py)
    pending = selector(c.NV_PENDING_REQUEST_COUNT, [*triton, (c.LABEL_GPU_UUID, "=", "")])
    unavailable = selector(c.M_MODEL_UNAVAILABLE, exporter)
    in_transition = selector(
        c.M_MODEL_STATE, [*exporter, (c.L_STATE, "=~", f"{c.STATE_LOADING}|{c.STATE_UNLOADING}")]
    )
    rules: list[Rule] = [
        alert(
            c.ALERT_SERVER_DOWN,
            f"{selector('up', triton)} == 0 or absent({selector('up', triton)})",
            "2m",
            c.SEVERITY_PAGE,
            "Triton {{ $labels.instance }} is down or not scraped",
            f"Prometheus cannot scrape Triton's metrics endpoint ({{{{ $labels.instance }}}}, job {tj}), "
            "or no target of that job exists: every model on it is unreachable.",
            url(c.ALERT_SERVER_DOWN),
        ),
        # A restart in place (the same target: a container restarted after a crash, an OOM kill or a probe)
        # resets Triton's counters and misses at least one scrape; a model reloaded alone resets its own
        # counters and misses none, a flaky scrape resets none, a new pod is a new target. Too quick for
        # TritonServerDown's 2m, and it comes again: the log of the container before says why.
        # On a GPU host the energy counter says it without a failed scrape, idle or not: core's metrics.cc
        # counts each GPU's joules "since the Triton Server started" from 0, in 2 s steps that never go
        # down, and an idle GPU still draws power; so it resets only when the process starts again.
        # On a CPU host under traffic the exporter says it without a failed scrape either: it counts a
        # restart when every model version that had counted something went down between two of its polls
        # (exporter/restarts.py; a model unloaded and loaded alone is no restart). Its series carry the
        # exporter's job and instance.
        alert(
            c.ALERT_SERVER_RESTARTED,
            f"(sum {by(server)} (resets({selector(c.NV_EXEC_COUNT, triton)}[{_RESTART_WINDOW}])) > 0\n"
            f"and {on(server)} min_over_time({selector('up', triton)}[{_RESTART_WINDOW}]) == 0)\n"
            f"or sum {by(server)} (resets({energy}[{_RESTART_WINDOW}])) > 0\n"
            f"or sum {by(server)} (increase({counted_restarts}[{_RESTART_WINDOW}])) > 0",
            "1m",
            c.SEVERITY_TICKET,
            "Triton restarted, seen by job {{ $labels.job }} at {{ $labels.instance }}",
            f"Triton {{{{ $labels.instance }}}} (job {{{{ $labels.job }}}}) restarted in the last "
            f"{_RESTART_WINDOW}: its GPU energy counter started again from 0, its inference counters were "
            f"reset and a scrape failed, or the triton-sre exporter (job {ej}: the instance is then the "
            "exporter's) saw every counted model's counters go down between two polls. Its previous log "
            "says why (a crash, an out-of-memory kill, a failed probe).",
            url(c.ALERT_SERVER_RESTARTED),
        ),
        _container_restarted(spec, url(c.ALERT_CONTAINER_RESTARTED)),
        alert(
            c.ALERT_EXPORTER_DOWN,
            f"{selector('up', exporter)} == 0 or absent({selector('up', exporter)})",
            "5m",
            c.SEVERITY_TICKET,
            "triton-sre exporter {{ $labels.instance }} is down or not scraped",
            f"Prometheus cannot scrape the triton-sre exporter (job {ej}). Model state, cost and "
            "batching metrics are missing, and TritonModelUnavailable cannot fire.",
            url(c.ALERT_EXPORTER_DOWN),
        ),
        alert(
            c.ALERT_EXPORTER_POLL_FAILING,
            f"max {by(server)} ({selector(c.M_UP, exporter)}) == 0\n"
            f"or sum {by(server)} (rate({selector(c.M_POLL_ERRORS, exporter)}[5m])) > 0",
            "10m",
            c.SEVERITY_TICKET,
            "triton-sre exporter {{ $labels.instance }} cannot read Triton",
            "The exporter's polls of Triton fail (triton_sre_up is 0 or triton_sre_poll_errors_total "
            "grows): its derived metrics are stale or missing.",
            url(c.ALERT_EXPORTER_POLL_FAILING),
        ),
        alert(
            c.ALERT_MODEL_UNAVAILABLE,
            f"max {by((*ls.instance, c.L_RUNBOOK))} ({unavailable}) == 1",
            "2m",
            c.SEVERITY_PAGE,
            "Model {{ $labels.model }} version {{ $labels.version }} is UNAVAILABLE",
            "Triton reports model {{ $labels.model }} version {{ $labels.version }} UNAVAILABLE: it failed "
            "to load and serves nothing. Diagnosed cause: {{ $labels.runbook }}. Triton's full reason is on "
            f"the exporter's {c.PATH_DEBUG_MODELS} and in {c.M_MODEL_UNAVAILABLE_INFO}.",
            f"{normalize_base(base_url)}{{{{ $labels.runbook }}}}.md",
        ),
        alert(
            c.ALERT_MODEL_STUCK_LOADING,
            f"max {by((*ls.instance, c.L_STATE))} ({in_transition}) == 1",
            "15m",
            c.SEVERITY_TICKET,
            "Model {{ $labels.model }} has been {{ $labels.state }} for 15 minutes",
            "Triton has reported model {{ $labels.model }} version {{ $labels.version }} in state "
            "{{ $labels.state }} for at least 15 minutes; loads and unloads normally take seconds.",
            url(c.ALERT_MODEL_STUCK_LOADING),
        ),
        *_queue_time_alerts(spec, base_url),
        _quantiles_missingalert(spec, url(c.ALERT_LATENCY_QUANTILES_MISSING)),
        alert(
            c.ALERT_BATCHING_INEFFECTIVE,
            f"{c.rec_batching_ratio(c.REC_LEVEL_MODEL)}{{job={q(tj)}}} < {num(op.batching_ratio_max)}\n"
            f"and {on(ls.per_model)} max {by(ls.per_model)} "
            f"({selector(c.M_MODEL_DYNAMIC_BATCHING, exporter)}) == 1\n"
            f"and {on(mv)} max {by(mv)} (avg_over_time({pending}[10m])) >= 1\n"
            f"and {on(ls.model)} {c.rec_requests(c.REC_LEVEL_MODEL)} >= {num(op.min_request_rate)}",
            "15m",
            c.SEVERITY_TICKET,
            "Model {{ $labels.model }} does not batch under load",
            "Model {{ $labels.model }} version {{ $labels.version }} has dynamic batching configured "
            "and requests wait in Triton's queue, yet each execution runs "
            '{{ $value | printf "%.2f" }} inferences on average: max_batch_size is 0 or 1, the '
            "queue delay is too short, or the batcher's preferred sizes cannot be met.",
            url(c.ALERT_BATCHING_INEFFECTIVE),
        ),
        alert(
            c.ALERT_PENDING_REQUESTS_GROWING,
            f"min_over_time({pending}[10m]) >= {op.pending_requests}\nand deriv({pending}[10m]) > 0",
            "5m",
            c.SEVERITY_TICKET,
            "Pending requests of model {{ $labels.model }} keep growing on {{ $labels.instance }}",
            f"Model {{{{ $labels.model }}}} version {{{{ $labels.version }}}} has had at least "
            f"{op.pending_requests} requests pending for 10 minutes and the backlog still grows "
            '(now {{ $value | printf "%.0f" }}): arrivals exceed what its instances execute.',
            url(c.ALERT_PENDING_REQUESTS_GROWING),
        ),
        alert(
            c.ALERT_GPU_MEMORY_NEAR_LIMIT,
            f"{selector(c.NV_GPU_MEMORY_USED_BYTES, triton)}\n"
            f"/ ({selector(c.NV_GPU_MEMORY_TOTAL_BYTES, triton)} > 0) >= {num(op.gpu_memory_ratio)}",
            "10m",
            c.SEVERITY_TICKET,
            "GPU {{ $labels.gpu_uuid }} on {{ $labels.instance }} is nearly out of memory",
            "GPU {{ $labels.gpu_uuid }} has used "
            "{{ $value | humanizePercentage }} of its memory for 10 minutes"
            f" (threshold {num(op.gpu_memory_ratio * 100)}%): the next model load or a larger batch "
            "can fail with out-of-memory.",
            url(c.ALERT_GPU_MEMORY_NEAR_LIMIT),
        ),
        input_missing_alert(spec, base_url),  # the exporter's doctor checks (issue 27)
    ]
    return {"groups": [{"name": c.GROUP_OPERATIONAL, "rules": rules}]}


def _container_restarted(spec: Spec, url: str) -> Rule:
    """Kubernetes' own count of the Triton container's restarts (kube-state-metrics). It sees what
    TritonServerRestarted cannot: a restart of an idle server (no counter to reset) and one quicker
    than a scrape. Why the container last ended (OOMKilled, Error) comes as the `reason` label, or
    `unknown` where kube-state-metrics does not export it or gives several."""
    pod = (
        *label_sets(spec.cluster_label).cluster,
        c.KSM_LABEL_NAMESPACE,
        c.KSM_LABEL_POD,
        c.KSM_LABEL_CONTAINER,
    )
    container: list[Matcher] = [(c.KSM_LABEL_CONTAINER, "=", spec.triton_container)]
    restarts = (
        f"(sum {by(pod)} (increase({selector(c.KSM_CONTAINER_RESTARTS, container)}[{_RESTART_WINDOW}])) > 0)"
    )
    r = c.KSM_LABEL_REASON
    reasons = f"max {by((*pod, r))} ({selector(c.KSM_LAST_TERMINATED_REASON, container)} == 1)"
    # only a container with one reason: two (two kube-state-metrics disagreeing) would make the
    # group_left join fail the whole rule, every pod's alert with it; such a restart is `unknown`
    reason = f"({reasons} and {on(pod)} (count {by(pod)} ({reasons}) == 1))"
    unknown = f'label_replace({restarts}, "{r}", "{c.KSM_REASON_UNKNOWN}", "{r}", "")'
    return alert(
        c.ALERT_CONTAINER_RESTARTED,
        f"{restarts}\n* {on(pod)} group_left ({r}) {reason}\nor {on(pod)} {unknown}",
        "1m",
        c.SEVERITY_TICKET,
        "Triton container of pod {{ $labels.namespace }}/{{ $labels.pod }} restarted",
        "Kubernetes restarted the Triton container {{ $labels.container }} of pod {{ $labels.namespace }}/"
        f"{{{{ $labels.pod }}}} in the last {_RESTART_WINDOW}; it last ended with reason "
        "{{ $labels.reason }}. The log of the container before says why (kubectl logs --previous).",
        url,
    )


def _quantiles_missingalert(spec: Spec, url: str) -> Rule:
    """A model with traffic but no latency summary or histogram: only averages can be seen. Only a
    version Triton still exports: one unloaded (rolled back) loses its summary at once while its 5m
    request rate lasts 5 minutes, and went pending for them."""
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    on_model = on(label_sets(spec.cluster_label).model)
    summary = selector(f"{c.NV_REQUEST_SUMMARY_US}_count", job)
    histogram = selector(f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_count", job)
    served = selector(c.NV_REQUEST_SUCCESS, job)
    return alert(
        c.ALERT_LATENCY_QUANTILES_MISSING,
        f"{selector(c.rec_requests(c.REC_LEVEL_MODEL), job)} >= {num(spec.operational.min_request_rate)}\n"
        f"and {on_model} {served}\nunless {on_model} {summary}\nunless {on_model} {histogram}",
        "15m",
        c.SEVERITY_TICKET,
        "Model {{ $labels.model }} has traffic but no latency quantiles",
        "Triton exports neither a latency summary nor a latency histogram for model {{ $labels.model }} "
        "version {{ $labels.version }}: dashboards show only its average latency, and its latency SLO "
        "judges averages, which hide the tail. Start Triton with --metrics-config "
        "summary_latencies=true (or histogram_latencies=true on 24.11+); a model with the response "
        "cache on gets no request summary.",
        url,
    )


def _queue_time_alerts(spec: Spec, base_url: str) -> list[Rule]:
    """Queue time above a share of each latency SLO's threshold; a fixed threshold for other models."""
    level = c.REC_LEVEL_INSTANCE
    job: list[Matcher] = [(c.LABEL_JOB, "=", spec.triton_job)]
    queue_ms = [*job, (c.L_STAGE, "=", c.STAGE_QUEUE)]
    url = runbook_url(base_url, c.ALERT_RUNBOOKS[c.ALERT_QUEUE_TIME_HIGH])
    on_instance = on(label_sets(spec.cluster_label).instance)
    latency = [s for s in spec.slos if s.type == c.SLO_LATENCY]
    rules = []
    for slo in latency:
        limit = slo.threshold_s * slo.queue_time_share
        expr = (
            f"{selector(c.rec_stage_seconds(level), [*queue_ms, *model_matchers(slo)])} > {num(limit)}\n"
            f"and {on_instance} {selector(c.rec_requests(level), job)} >= {num(slo.min_request_rate)}"
        )
        rules.append(
            _queuealert(
                expr,
                limit,
                f"{num(slo.queue_time_share * 100)}% of SLO {slo.name}'s "
                f"{num(slo.threshold_s * 1000)} ms threshold",
                url,
                {c.L_SLO: slo.name},
            )
        )
    if any(s.models.kind == "all" for s in latency):
        return rules  # every model has a latency SLO: no fallback threshold needed
    covered = " or ".join(f"{selector(c.rec_requests(level), [*job, *model_matchers(s)])}" for s in latency)
    limit = spec.operational.queue_time_threshold_s
    min_rate = num(spec.operational.min_request_rate)
    expr = (
        f"{selector(c.rec_stage_seconds(level), queue_ms)} > {num(limit)}\n"
        f"and {on_instance} {selector(c.rec_requests(level), job)} >= {min_rate}"
    )
    if covered:
        expr += f"\nunless {on_instance} ({covered})"
    rules.append(_queuealert(expr, limit, "the operational queue_time_threshold", url))
    return rules


def _queuealert(expr: str, limit: float, why: str, url: str, labels: Mapping[str, str] | None = None) -> Rule:
    rule = alert(
        c.ALERT_QUEUE_TIME_HIGH,
        expr,
        "10m",
        c.SEVERITY_TICKET,
        "Requests to model {{ $labels.model }} wait too long in Triton's queue",
        "Requests to model {{ $labels.model }} version {{ $labels.version }} on {{ $labels.instance }} "
        'wait {{ $value | printf "%.3f" }} s on average in the queue before execution, above '
        f"{num(limit)} s ({why}).",
        url,
    )
    rule["labels"].update(labels or {})
    return rule


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return operational_groups(spec, base_url)
