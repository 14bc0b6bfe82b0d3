"""Grafana dashboards, built with grafanalib: the only module that imports it.

Three dashboards with stable uids: an overview of all models, a per-model drill-down and an SLO
dashboard. Triton panels query Triton's raw counters with `$__rate_interval` (the same no-double-
counting selection as the recording rules); derived panels (state, cost, fill) query the exporter;
the SLO dashboard queries the SLO recording rules.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from grafanalib import core as g
from grafanalib._gen import DashboardEncoder

from triton_sre import conventions as c
from triton_sre import promql as r
from triton_sre.conventions import UID_MODEL_DASHBOARD as UID_MODEL
from triton_sre.conventions import UID_OVERVIEW_DASHBOARD as UID_OVERVIEW
from triton_sre.conventions import UID_SLO_DASHBOARD as UID_SLO
from triton_sre.generate.rulefile import normalize_base
from triton_sre.slo import Spec, window_seconds

RATE = "$__rate_interval"
DS = {"type": "prometheus", "uid": "${datasource}"}
WIDTH = 24
HEIGHT = 8

Matchers = list[r.Matcher]


def _triton(model_op: str = "=~") -> Matchers:
    return [
        (c.LABEL_JOB, "=~", "$job"),
        (c.LABEL_INSTANCE, "=~", "$instance"),
        (c.LABEL_MODEL, model_op, "$model"),
    ]


def _exporter(spec: Spec, model_op: str | None = "=~") -> Matchers:
    ms: Matchers = [(c.LABEL_JOB, "=", spec.exporter_job)]
    return [*ms, (c.LABEL_MODEL, model_op, "$model")] if model_op else ms


def _rate(family: str, ms: Matchers, labels: Sequence[str]) -> str:
    return r.counter_rate(family, ms, RATE, labels)


def _recorded(family: str, ms: Matchers, labels: Sequence[str]) -> str:
    """Fleet-wide panels: the recording rules' per-instance 5m rate (GPU series already counted
    once), summed `by labels`, instead of a raw rate over every series of the fleet (issue 13)."""
    return f"sum {r.by(labels)} ({r.selector(c.rec_rate(c.REC_LEVEL_INSTANCE, family), ms)})"


def _requests(ms: Matchers, labels: Sequence[str], rate: Any = _rate) -> str:
    success = rate(c.NV_REQUEST_SUCCESS, ms, labels)
    return f"{success} + ({rate(c.NV_REQUEST_FAILURE, ms, labels)} or {success} * 0)"


def _per_request(numerator: str, ms: Matchers, labels: Sequence[str], rate: Any = _rate) -> str:
    return f"{numerator} / 1e6 / ({rate(c.NV_REQUEST_SUCCESS, ms, labels)} > 0)"


def _stage_targets(
    ms: Matchers, labels: Sequence[str], legend_prefix: str, rate: Any = _rate
) -> list[g.Target]:
    targets = []
    for stage, family in c.STAGE_COUNTERS.items():
        targets.append(
            _t(_per_request(rate(family, ms, labels), ms, labels, rate), f"{legend_prefix}{stage}")
        )
    measured = " - ".join(rate(f, ms, labels) for f in c.STAGE_COUNTERS.values())
    other = f"({rate(c.NV_REQUEST_DURATION_US, ms, labels)} - {measured})"
    targets.append(
        _t(f"clamp_min({_per_request(other, ms, labels, rate)}, 0)", f"{legend_prefix}{c.STAGE_OTHER}")
    )
    return targets


# -- tail latency: p50/p95/p99 with the average as a secondary series and the SLO threshold drawn
_AVERAGE_LEGEND = "average"
_THRESHOLD_LEGEND = "threshold"
_SECONDARY = [
    {
        "matcher": {"id": "byRegexp", "options": f".*{_AVERAGE_LEGEND}$"},
        "properties": [
            {"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [10, 10]}},
            {"id": "custom.lineWidth", "value": 1},
        ],
    },
    {
        "matcher": {"id": "byRegexp", "options": f".*{_THRESHOLD_LEGEND}.*"},
        "properties": [
            {"id": "color", "value": {"mode": "fixed", "fixedColor": "red"}},
            {"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [4, 4]}},
        ],
    },
]


def quantile_expr(measure: str, ms: Matchers, quantile: str, labels: Sequence[str]) -> str:
    """Seconds at `quantile`: the histogram merged over the selection, else the worst summary."""
    summary, histogram = c.LATENCY_FAMILIES[measure]
    branches = [f"{r.summary_quantile(summary, ms, quantile, labels)} / 1e6"]
    if histogram:
        branches.insert(0, f"{r.histogram_quantile(histogram, ms, quantile, RATE, labels)} / 1e3")
    return r.first_of(branches, labels)


def _latency_panel(
    spec: Spec, measure: str, ms: Matchers, labels: Sequence[str], prefix: str
) -> g.TimeSeries:
    average_family = c.NV_REQUEST_DURATION_US if measure == c.LATENCY_REQUEST else c.NV_QUEUE_DURATION_US
    targets = [
        _t(quantile_expr(measure, ms, q, labels), f"{prefix}{c.quantile_name(q)}")
        for q in c.LATENCY_QUANTILES
    ]
    targets.append(
        _t(_per_request(_rate(average_family, ms, labels), ms, labels), f"{prefix}{_AVERAGE_LEGEND}")
    )
    latency = [s for s in spec.slos if s.type == c.SLO_LATENCY]
    for slo in latency:  # the request SLO threshold, or the queue-time alert's share of it
        share = 1.0 if measure == c.LATENCY_REQUEST else slo.queue_time_share
        targets.append(_t(f"vector({r.num(slo.threshold_s * share)})", f"SLO {slo.name} {_THRESHOLD_LEGEND}"))
    what = "Request latency" if measure == c.LATENCY_REQUEST else "Queue time"
    drawn = (
        "the latency SLO thresholds"
        if measure == c.LATENCY_REQUEST
        else "the TritonQueueTimeHigh limits (queue_time_share x threshold)"
    )
    return g.TimeSeries(
        title=f"{what} p50 / p95 / p99",
        description=(
            f"{what} quantiles: from nv_inference_first_response_histogram_ms merged over the selection "
            "when Triton exports it (24.11+ decoupled, 26.01+ all models), else from Triton's own summary "
            "(--metrics-config summary_latencies=true; the worst server's, summaries cannot be merged). "
            f"Dashed: the average, and {drawn}."
        )
        if measure == c.LATENCY_REQUEST
        else (
            f"{what} quantiles from Triton's summary nv_inference_queue_summary_us (the worst server's). "
            f"Dashed: the average, and {drawn}."
        ),
        unit="s",
        targets=targets,
        dataSource=DS,
        legendDisplayMode="table",
        legendCalcs=["mean", "max", "lastNotNull"],
        overrides=_SECONDARY,
    )


def _latency_heatmap(ms: Matchers) -> g.Heatmap:
    bucket = r.selector(f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket", ms)
    target = g.Target(
        expr=f"sum by (le) (increase({bucket}[{RATE}]))",
        legendFormat="{{le}}",
        format="heatmap",
        datasource=DS,
    )
    return g.Heatmap(
        title="Request latency heatmap (ms)",
        description="Requests per latency bucket of nv_inference_first_response_histogram_ms "
        "(Triton 24.11+ with histogram_latencies=true).",
        dataSource=DS,
        targets=[target],
        dataFormat="tsbuckets",
        yBucketBound="upper",
        hideZeroBuckets=True,
    )


def _tail_row(layout: _Layout, spec: Spec, ms: Matchers, labels: Sequence[str], prefix: str) -> None:
    panels: list[Any] = [
        _latency_panel(spec, c.LATENCY_REQUEST, ms, labels, prefix),
        _latency_panel(spec, c.LATENCY_QUEUE, ms, labels, prefix),
    ]
    if c.LATENCY_SOURCE_HISTOGRAM in spec.latency_metrics:
        panels.append(_latency_heatmap(ms))
    layout.row("Tail latency", panels)


def _t(expr: str, legend: str, *, instant: bool = False, table: bool = False) -> g.Target:
    return g.Target(
        expr=expr,
        legendFormat=legend,
        instant=instant,
        format="table" if table else "time_series",
        datasource=DS,
    )


class _Layout:
    """Rows of panels placed left to right on Grafana's 24-column grid, ids in order."""

    def __init__(self) -> None:
        self.panels: list[Any] = []
        self.y = 0

    def row(self, title: str, panels: Sequence[Any], height: int = HEIGHT) -> None:
        self.panels.append(g.RowPanel(title=title, gridPos=g.GridPos(h=1, w=WIDTH, x=0, y=self.y)))
        self.y += 1
        width = WIDTH // max(1, len(panels))
        for i, panel in enumerate(panels):
            panel.gridPos = g.GridPos(h=height, w=width, x=i * width, y=self.y)
            self.panels.append(panel)
        self.y += height


def _ts(
    title: str, description: str, unit: str, targets: list[g.Target], *, stack: bool = False
) -> g.TimeSeries:
    return g.TimeSeries(
        title=title,
        description=description,
        unit=unit,
        targets=targets,
        dataSource=DS,
        stacking={"mode": "normal", "group": "A"} if stack else {},
        fillOpacity=30 if stack else 0,
        legendDisplayMode="table",
        legendCalcs=["mean", "lastNotNull"],
    )


def _table(
    title: str, description: str, targets: list[g.Target], overrides: list[Any] | None = None
) -> g.Table:
    return g.Table(
        title=title,
        description=description,
        unit="none",
        targets=targets,
        dataSource=DS,
        overrides=overrides or [],
        transformations=[{"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}],
    )


def _query_var(name: str, label: str, expr: str, default: str | None, multi: bool) -> g.Template:
    """A variable from a label_values() query; multi-valued ones offer All (regex `.*`)."""
    return g.Template(
        name=name,
        label=label,
        query=expr,
        dataSource=DS,
        default=default,
        multi=multi,
        includeAll=multi,
        allValue=".*" if multi else None,
        refresh=2,
    )


_DATASOURCE_VAR = g.Template(
    name="datasource", label="Data source", query="prometheus", type="datasource", default=None
)


def _variables(spec: Spec, *, multi_model: bool) -> g.Templating:
    query = _query_var
    job_count = r.selector(c.NV_INFERENCE_COUNT, [(c.LABEL_JOB, "=~", "$job")])
    instance_count = r.selector(
        c.NV_INFERENCE_COUNT, [(c.LABEL_JOB, "=~", "$job"), (c.LABEL_INSTANCE, "=~", "$instance")]
    )
    return g.Templating(
        list=[
            _DATASOURCE_VAR,
            query("job", "Triton job", f"label_values({c.NV_INFERENCE_COUNT}, job)", spec.triton_job, False),
            query("instance", "Instance", f"label_values({job_count}, instance)", "$__all", True),
            query(
                "model",
                "Model",
                f"label_values({instance_count}, model)",
                "$__all" if multi_model else None,
                multi_model,
            ),
        ]
    )


def _dashboard(
    title: str, uid: str, description: str, templating: g.Templating, layout: _Layout
) -> dict[str, Any]:
    dashboard = g.Dashboard(
        title=title,
        uid=uid,
        description=description,
        tags=["triton", "triton-sre"],
        timezone="browser",
        refresh="30s",
        time=g.Time("now-3h", "now"),
        templating=templating,
        panels=layout.panels,
        graphTooltip=1,
    ).auto_panel_ids()
    data: dict[str, Any] = json.loads(json.dumps(dashboard.to_json_data(), cls=DashboardEncoder))
    return data


def _gpu_utilization(res: Matchers) -> g.TimeSeries:
    return _ts(
        "GPU utilization",
        "Triton's nv_gpu_utilization per GPU (0-1).",
        "percentunit",
        [_t(r.selector(c.NV_GPU_UTILIZATION, res), "{{instance}} {{gpu_uuid}}")],
    )


def _cpu_utilization(res: Matchers) -> g.TimeSeries:
    return _ts(
        "CPU utilization",
        "Triton's nv_cpu_utilization of the host (0-1).",
        "percentunit",
        [_t(r.selector(c.NV_CPU_UTILIZATION, res), "{{instance}}")],
    )


def overview(spec: Spec, base_url: str) -> dict[str, Any]:
    ms = _triton()
    by_model = (c.LABEL_MODEL,)
    exp_job = _exporter(spec, None)
    layout = _Layout()
    layout.row(
        "Traffic and errors",
        [
            _ts(
                "Requests per second",
                "Successful plus failed requests per second, by model (Triton counters, 5m rates "
                "of the recording rules).",
                "reqps",
                [_t(_requests(ms, by_model, _recorded), "{{model}}")],
            ),
            _ts(
                "Error ratio",
                "Failed requests / all requests, by model (every failure reason).",
                "percentunit",
                [
                    _t(
                        f"({_recorded(c.NV_REQUEST_FAILURE, ms, by_model)})"
                        f" / ({_requests(ms, by_model, _recorded)} > 0)",
                        "{{model}}",
                    )
                ],
            ),
            _ts(
                "Failures by reason",
                "Failed requests per second by model and Triton's failure reason.",
                "reqps",
                [
                    _t(
                        _rate(c.NV_REQUEST_FAILURE, ms, (c.LABEL_MODEL, c.LABEL_REASON)),
                        "{{model}} {{reason}}",
                    )
                ],
            ),
        ],
    )
    layout.row(
        "Latency",
        [
            _ts(
                "Latency split by stage",
                "Average seconds per successful request in each stage over the selected "
                "models: queue, compute input/infer/output, and the rest of the request time (other).",
                "s",
                _stage_targets(ms, (), "", _recorded),
                stack=True,
            ),
            _ts(
                "Average request latency",
                "Average request duration per successful request, by model.",
                "s",
                [
                    _t(
                        _per_request(
                            _recorded(c.NV_REQUEST_DURATION_US, ms, by_model), ms, by_model, _recorded
                        ),
                        "{{model}}",
                    )
                ],
            ),
            _ts(
                "Queue time per request",
                "Average seconds a request waits in Triton's queue, by model.",
                "s",
                [
                    _t(
                        _per_request(
                            _recorded(c.NV_QUEUE_DURATION_US, ms, by_model), ms, by_model, _recorded
                        ),
                        "{{model}}",
                    )
                ],
            ),
        ],
    )
    _tail_row(layout, spec, ms, by_model, "{{model}} ")
    layout.row(
        "Batching and cost",
        [
            _ts(
                "Batching ratio",
                "Inferences per model execution, by model. 1 means nothing batches.",
                "short",
                [
                    _t(
                        f"{_rate(c.NV_INFERENCE_COUNT, ms, by_model)}"
                        f" / ({_rate(c.NV_EXEC_COUNT, ms, by_model)} > 0)",
                        "{{model}}",
                    )
                ],
            ),
            _ts(
                "Cost per 1k inferences",
                "The exporter's attributed cost per thousand inferences, by model "
                "(currency in the legend; needs pricing in the exporter config).",
                "short",
                [
                    _t(
                        f"max by (model, currency) ({r.selector(c.M_COST_PER_1K, _exporter(spec))})",
                        "{{model}} ({{currency}})",
                    )
                ],
            ),
            _ts(
                "Idle share of cost",
                "Share of device time with no model executing (paid for, unused).",
                "percentunit",
                [
                    _t(
                        f"max by (instance) ({r.selector(c.M_IDLE_COST_FRACTION, _exporter(spec, None))})",
                        "{{instance}}",
                    )
                ],
            ),
        ],
    )
    runbook_link = {
        "matcher": {"id": "byName", "options": c.L_RUNBOOK},
        "properties": [
            {
                "id": "links",
                "value": [{"title": "Runbook", "url": f"{normalize_base(base_url)}${{__value.raw}}.md"}],
            }
        ],
    }
    layout.row(
        "Model state",
        [
            _table(
                "Model states",
                "Each model version's state from Triton's repository index (all models, "
                "including ones that never served a request).",
                [
                    _t(
                        f"max by (model, version, state) ({r.selector(c.M_MODEL_STATE, exp_job)}) == 1",
                        "",
                        instant=True,
                        table=True,
                    )
                ],
            ),
            _table(
                "Unavailable models and runbooks",
                "UNAVAILABLE model versions with the diagnosed runbook (click it) and Triton's reason.",
                [
                    _t(
                        f"max by (model, version, runbook) ({r.selector(c.M_MODEL_UNAVAILABLE, exp_job)})",
                        "",
                        instant=True,
                        table=True,
                    )
                ],
                [runbook_link],
            ),
        ],
    )
    res: Matchers = [(c.LABEL_JOB, "=~", "$job"), (c.LABEL_INSTANCE, "=~", "$instance")]
    layout.row(
        "GPU and CPU",
        [
            _gpu_utilization(res),
            _ts(
                "GPU memory used",
                "GPU memory used per GPU.",
                "bytes",
                [_t(r.selector(c.NV_GPU_MEMORY_USED_BYTES, res), "{{instance}} {{gpu_uuid}}")],
            ),
            _cpu_utilization(res),
            _ts(
                "CPU memory used",
                "Host memory used as Triton reports it.",
                "bytes",
                [_t(r.selector(c.NV_CPU_MEMORY_USED_BYTES, res), "{{instance}}")],
            ),
        ],
    )
    return _dashboard(
        "Triton / Overview",
        UID_OVERVIEW,
        "All models of the selected Triton servers: traffic, errors, latency split, batching, cost, states.",
        _variables(spec, multi_model=True),
        layout,
    )


def model(spec: Spec) -> dict[str, Any]:
    ms = _triton("=")
    none: tuple[str, ...] = ()
    exp = _exporter(spec, "=")
    total: r.Matcher = (c.LABEL_GPU_UUID, "=", "")
    batches = r.selector(c.M_EXECUTIONS_BY_BATCH_SIZE, exp)
    layout = _Layout()
    layout.row(
        "Traffic and errors",
        [
            _ts(
                "Requests per second",
                "Successful requests and failures by reason.",
                "reqps",
                [
                    _t(_rate(c.NV_REQUEST_SUCCESS, ms, none), "success"),
                    _t(_rate(c.NV_REQUEST_FAILURE, ms, (c.LABEL_REASON,)), "failed {{reason}}"),
                ],
            ),
            _ts(
                "Error ratio",
                "Failed requests / all requests.",
                "percentunit",
                [
                    _t(
                        f"({_rate(c.NV_REQUEST_FAILURE, ms, none)}) / ({_requests(ms, none)} > 0)",
                        "error ratio",
                    )
                ],
            ),
            _ts(
                "Inferences and executions",
                "Inferences and model executions per second.",
                "ops",
                [
                    _t(_rate(c.NV_INFERENCE_COUNT, ms, none), "inferences"),
                    _t(_rate(c.NV_EXEC_COUNT, ms, none), "executions"),
                ],
            ),
        ],
    )
    _tail_row(layout, spec, ms, (c.LABEL_VERSION,), "v{{version}} ")
    layout.row(
        "Latency split by stage",
        [
            _ts(
                "Seconds per request by stage",
                "Average seconds per successful request in each stage.",
                "s",
                _stage_targets(ms, (c.LABEL_VERSION,), "v{{version}} "),
                stack=True,
            ),
            _ts(
                "Share of request time by stage",
                "The exporter's stage fractions (sum to 1 per version).",
                "percentunit",
                [
                    _t(
                        f"max by (version, stage) ({r.selector(c.M_REQUEST_STAGE_FRACTION, exp)})",
                        "v{{version}} {{stage}}",
                    )
                ],
                stack=True,
            ),
        ],
    )
    layout.row(
        "Batching",
        [
            _ts(
                "Batching ratio",
                "Inferences per execution (Triton counters). 1 means nothing batches.",
                "short",
                [
                    _t(
                        f"{_rate(c.NV_INFERENCE_COUNT, ms, (c.LABEL_VERSION,))} / "
                        f"({_rate(c.NV_EXEC_COUNT, ms, (c.LABEL_VERSION,))} > 0)",
                        "v{{version}}",
                    )
                ],
            ),
            _ts(
                "Batch fill",
                "Batching ratio / max_batch_size (the exporter).",
                "percentunit",
                [_t(f"max by (version) ({r.selector(c.M_BATCH_FILL_RATIO, exp)})", "v{{version}}")],
            ),
            _ts(
                "Pending requests",
                "Requests waiting in Triton for execution, per instance.",
                "short",
                [
                    _t(
                        f"sum by (instance) ({r.selector(c.NV_PENDING_REQUEST_COUNT, [*ms, total])})",
                        "{{instance}}",
                    )
                ],
            ),
            _ts(
                "Executions by batch size",
                "Model executions per second by batch size (Triton statistics, via the exporter).",
                "ops",
                [
                    _t(
                        f"sum by (batch_size) (rate({batches}[{RATE}]))",
                        "batch {{batch_size}}",
                    )
                ],
                stack=True,
            ),
        ],
    )
    res: Matchers = [(c.LABEL_JOB, "=~", "$job"), (c.LABEL_INSTANCE, "=~", "$instance")]
    layout.row(
        "GPU",
        [
            _ts(
                "GPU utilization",
                "Utilization of the GPUs of the selected instances (0-1).",
                "percentunit",
                [_t(r.selector(c.NV_GPU_UTILIZATION, res), "{{instance}} {{gpu_uuid}}")],
            ),
            _ts(
                "GPU memory",
                "GPU memory used and total.",
                "bytes",
                [
                    _t(r.selector(c.NV_GPU_MEMORY_USED_BYTES, res), "used {{gpu_uuid}}"),
                    _t(r.selector(c.NV_GPU_MEMORY_TOTAL_BYTES, res), "total {{gpu_uuid}}"),
                ],
            ),
        ],
    )
    return _dashboard(
        "Triton / Model",
        UID_MODEL,
        "One model: traffic and errors, latency by stage, batching, GPU.",
        _variables(spec, multi_model=False),
        layout,
    )


def slo(spec: Spec) -> dict[str, Any]:
    sel: Matchers = [(c.L_SLO, "=~", "$slo"), (c.LABEL_MODEL, "=~", "$model")]
    objective = r.selector(c.REC_SLO_OBJECTIVE, [(c.L_SLO, "=~", "$slo")])
    windows = sorted(
        {w for long, short, _, _ in c.BURN_TIERS for w in (long, short)}, key=lambda w: window_seconds(w)
    )
    layout = _Layout()
    layout.row(
        "Error budget",
        [
            g.Stat(
                title="Error budget remaining",
                description="Share of the period's error budget left, per SLO "
                "and model (negative: overspent).",
                format="percentunit",
                dataSource=DS,
                reduceCalc="lastNotNull",
                targets=[_t(r.selector(c.REC_SLO_BUDGET_REMAINING, sel), "{{slo}} {{model}}")],
            ),
            _ts(
                "Budget remaining over time",
                "Error budget remaining over the SLO period.",
                "percentunit",
                [_t(r.selector(c.REC_SLO_BUDGET_REMAINING, sel), "{{slo}} {{model}}")],
            ),
        ],
    )
    layout.row(
        "Burn rate",
        [
            _ts(
                "Burn rate per window",
                "Bad-event ratio / error budget for each alert window; 1 spends the "
                "budget exactly over the period. Pages fire at 14.4x (1h and 5m) and 6x (6h and 30m).",
                "suffix:x",
                [
                    _t(
                        f"{r.selector(c.rec_slo_errors(w), sel)} / on (slo) group_left () (1 - {objective})",
                        f"{{{{slo}}}} {{{{model}}}} {w}",
                    )
                    for w in windows
                ],
            ),
            _ts(
                "Requests per second (burn-alert guard)",
                "Valid requests per second per SLO and model over 5m; "
                "burn alerts stay silent below min_request_rate.",
                "reqps",
                [_t(r.selector(c.rec_slo_requests("5m"), sel), "{{slo}} {{model}}")],
            ),
        ],
    )
    alerts = "|".join((c.ALERT_SLO_ERROR_BUDGET_BURN, c.ALERT_SLO_LATENCY_BUDGET_BURN))
    layout.row(
        "Alerts",
        [
            _table(
                "Burn-rate alerts",
                "Pending and firing burn-rate alerts with their window and severity.",
                [_t(f'ALERTS{{alertname=~"{alerts}", slo=~"$slo"}}', "", instant=True, table=True)],
            ),
        ],
    )
    templating = g.Templating(
        list=[
            _DATASOURCE_VAR,
            _query_var("slo", "SLO", f"label_values({c.REC_SLO_OBJECTIVE}, slo)", "$__all", True),
            _query_var(
                "model",
                "Model",
                f'label_values({c.rec_slo_requests("5m")}{{slo=~"$slo"}}, model)',
                "$__all",
                True,
            ),
        ]
    )
    return _dashboard(
        "Triton / SLOs",
        UID_SLO,
        f"Error budgets, burn rates and burn-rate alerts of the SLOs in {Path(spec.source).name}.",
        templating,
        layout,
    )


def dashboards(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, dict[str, Any]]:
    """File name (under dashboards/) -> dashboard JSON model."""
    from triton_sre.generate import llm_dashboard  # its own builder (it imports this module)

    return {
        "triton-overview.json": overview(spec, base_url),
        "triton-model.json": model(spec),
        "triton-slo.json": slo(spec),
        llm_dashboard.FILE: llm_dashboard.llm(spec),
        "triton-capacity.json": capacity(spec),
    }


def render_json(dashboard: dict[str, Any]) -> str:
    return json.dumps(dashboard, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def iter_targets(dashboard: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(panel, target) for every query of every panel, rows included."""
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            yield panel, target
        for inner in panel.get("panels", []):
            for target in inner.get("targets", []):
                yield inner, target


# -- capacity (issue 16) --------------------------------------------------------------------------
UID_CAPACITY = "triton-sre-capacity"


def capacity(spec: Spec) -> dict[str, Any]:
    """Memory per model, headroom and models that fit, load times, power and energy, utilisation."""
    exp = _exporter(spec, None)
    res: Matchers = [(c.LABEL_JOB, "=~", "$job"), (c.LABEL_INSTANCE, "=~", "$instance")]
    gpu_memory = r.selector(c.M_MODEL_MEMORY_BYTES, [*exp, (c.L_KIND, "=", c.MEMORY_TYPE_GPU)])
    host_memory = r.selector(c.M_MODEL_MEMORY_BYTES, [*exp, (c.L_KIND, "!=", c.MEMORY_TYPE_GPU)])
    layout = _Layout()
    layout.row(
        "Memory per model",
        [
            _ts(
                "GPU memory per model, stacked per GPU",
                "GPU memory each model version took when it loaded (memory_usage of Triton's statistics; "
                "ONNX Runtime and TensorRT report it, Python models do not). One stack per GPU (device).",
                "bytes",
                [_t(f"sum by (device, model, version) ({gpu_memory})", "{{device}} {{model}} v{{version}}")],
                stack=True,
            ),
            _ts(
                "Host memory per model",
                "CPU and pinned memory each model version took when it loaded.",
                "bytes",
                [_t(f"sum by (kind, model, version) ({host_memory})", "{{kind}} {{model}} v{{version}}")],
                stack=True,
            ),
        ],
    )
    layout.row(
        "Headroom",
        [
            _ts(
                "GPU memory headroom vs largest model",
                "Free GPU memory (total - used) and the largest resident model: below it, the model's "
                "next version cannot load side by side (TritonGPUMemoryHeadroomLow).",
                "bytes",
                [
                    _t(r.selector(c.M_GPU_MEMORY_HEADROOM_BYTES, exp), "free {{instance}} {{gpu_uuid}}"),
                    _t(
                        r.selector(c.M_GPU_LARGEST_MODEL_BYTES, exp),
                        "largest model {{instance}} {{gpu_uuid}}",
                    ),
                ],
            ),
            _ts(
                "Models that fit",
                "Whole models of the median resident size (or capacity.model_bytes) that fit in the "
                "headroom, per GPU and on the host.",
                "none",
                [
                    _t(r.selector(c.M_GPU_MODELS_THAT_FIT, exp), "{{instance}} {{gpu_uuid}}"),
                    _t(r.selector(c.M_HOST_MODELS_THAT_FIT, exp), "{{instance}} host"),
                ],
            ),
            _ts(
                "Host memory headroom",
                "Free host memory (nv_cpu_memory_total_bytes - nv_cpu_memory_used_bytes).",
                "bytes",
                [_t(r.selector(c.M_HOST_MEMORY_HEADROOM_BYTES, exp), "{{instance}}")],
            ),
            _ts(
                "GPU metrics missing",
                "1: the host has GPUs but Triton exports no GPU metrics (MIG, DCGM held elsewhere): "
                "GPU headroom and energy are unknown, not zero.",
                "none",
                [_t(r.selector(c.M_GPU_METRICS_MISSING, exp), "{{instance}}")],
            ),
        ],
    )
    layout.row(
        "Load times",
        [
            _table(
                "Load time per model",
                "Seconds the last load of each model version took (Triton's nv_model_load_duration_secs, "
                "or LOADING -> READY in the repository index at the poll interval). Size the startup "
                "probe at 2 x the slowest + a margin.",
                [_t(f"sort_desc({r.selector(c.M_MODEL_LOAD_SECONDS, exp)})", "", instant=True, table=True)],
            ),
            _ts(
                "Load time per model over time",
                "The last load's duration per model version.",
                "s",
                [_t(r.selector(c.M_MODEL_LOAD_SECONDS, exp), "{{model}} v{{version}}")],
            ),
        ],
    )
    layout.row(
        "Power and energy",
        [
            _ts(
                "GPU power",
                "Triton's nv_gpu_power_usage and the limit nv_gpu_power_limit, in watts.",
                "watt",
                [
                    _t(r.selector(c.NV_GPU_POWER_USAGE, res), "used {{instance}} {{gpu_uuid}}"),
                    _t(r.selector(c.NV_GPU_POWER_LIMIT, res), "limit {{instance}} {{gpu_uuid}}"),
                ],
            ),
            _ts(
                "GPU energy rate",
                "rate(nv_energy_consumption): joules per second, i.e. average watts.",
                "watt",
                [
                    _t(
                        f"rate({r.selector(c.NV_ENERGY_CONSUMPTION, res)}[{RATE}])",
                        "{{instance}} {{gpu_uuid}}",
                    )
                ],
            ),
            _ts(
                "Energy cost per hour",
                "What each GPU's energy costs per hour at pricing.kwh, and per model with "
                "pricing.energy_by_model.",
                "none",
                [
                    _t(r.selector(c.M_ENERGY_COST_PER_HOUR, exp), "{{gpu_uuid}} ({{currency}})"),
                    _t(
                        r.selector(c.M_MODEL_ENERGY_COST_PER_HOUR, exp),
                        "{{model}} v{{version}} ({{currency}})",
                    ),
                ],
                stack=False,
            ),
        ],
    )
    layout.row(
        "Utilisation",
        [
            _gpu_utilization(res),
            _cpu_utilization(res),
            _ts(
                "GPU memory used / total",
                "Triton's nv_gpu_memory_used_bytes over nv_gpu_memory_total_bytes per GPU.",
                "percentunit",
                [
                    _t(
                        f"{r.selector(c.NV_GPU_MEMORY_USED_BYTES, res)} / "
                        f"({r.selector(c.NV_GPU_MEMORY_TOTAL_BYTES, res)} > 0)",
                        "{{instance}} {{gpu_uuid}}",
                    )
                ],
            ),
        ],
    )
    variables = _variables(spec, multi_model=True)
    variables.list = [v for v in variables.list if v.name != "model"]  # capacity is per GPU and host
    return _dashboard(
        "Triton / Capacity",
        UID_CAPACITY,
        "Per GPU: memory per model, headroom and how many more models fit, load times, power and "
        "energy cost, GPU and CPU utilisation.",
        variables,
        layout,
    )
