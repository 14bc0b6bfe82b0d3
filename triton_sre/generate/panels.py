"""The Grafana panel DSL the dashboards are built with (grafanalib is imported here and by the
dashboard modules only): matchers for Triton and the exporter, rates and per-request ratios, the tail
latency panels, layout on the 24-column grid, the template variables and the dashboard envelope.

Triton panels query Triton's raw counters with `$__rate_interval` (the same no-double-counting
selection as the recording rules, `promql.counter_rate`); derived panels query the exporter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from grafanalib import core as g
from grafanalib._gen import DashboardEncoder

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.slo import Spec

RATE = "$__rate_interval"
CLUSTER_VAR = "cluster"  # the dashboards' variable; the label it reads is the spec's cluster_label
DS = {"type": "prometheus", "uid": "${datasource}"}
WIDTH = 24
HEIGHT = 8

Matchers = list[pq.Matcher]
EXPORTER_JOB_VAR = "exporter_job"  # the dashboards' variable holding the exporter's scrape job
STEP_LABELS = (c.LABEL_MODEL, c.L_STEP, c.L_STAGE)  # an ensemble's time by step (ensemble_steps)


def var_matcher(label: str, op: str, name: str) -> pq.Matcher:
    """`label op <the dashboard variable name>`, a valid PromQL literal whatever the value holds (`"`,
    `\\`, `|`, `.`, `{`): Grafana's `regex` format (each value regex-escaped, several as `(a|b)`, All as
    the variable's own `.*`) in a raw string, which PromQL reads without escapes; `=` and `!=` become
    `=~` and `!~` on the escaped value (the same series). Not the `json` format: Grafana's current
    formatter (the scenes registry core Grafana uses) writes a single string value as it is, no quotes,
    so `job=${job:json}` was sent as `job=triton` and every panel failed to parse (older releases
    JSON-quoted it). A plain `"$job"` ended the string at a `"` in the value (Grafana's Prometheus
    escaping covers backslashes and regex marks, never quotes). Left: a backtick in a value."""
    regex_op = {"=": "=~", "!=": "!~"}.get(op, op)
    return (label, regex_op, pq.Literal(f"`${{{name}:regex}}`"))


JOB_VAR_MATCHER = var_matcher(c.LABEL_JOB, "=", "job")  # single-valued: the escaped value


def cluster_matchers(spec: Spec) -> Matchers:
    """The selected cluster (`$cluster`, one at a time) when the spec sets `cluster_label`: every
    query of a dashboard reads one cluster, so its `by (model, ...)` never sums two clusters."""
    return [var_matcher(spec.cluster_label, "=", CLUSTER_VAR)] if spec.cluster_label else []


def triton_matchers(spec: Spec, model_op: str = "=~") -> Matchers:
    return [
        *cluster_matchers(spec),
        JOB_VAR_MATCHER,
        var_matcher(c.LABEL_INSTANCE, "=~", "instance"),
        var_matcher(c.LABEL_MODEL, model_op, "model"),
    ]


def model_level_matchers(spec: Spec, model_op: str = "=~") -> Matchers:
    """Triton recording rules aggregated per model (no `instance` label): filtering them by
    `$instance` would empty the panel as soon as one instance is selected (issue 26 item 3)."""
    return [*cluster_matchers(spec), JOB_VAR_MATCHER, var_matcher(c.LABEL_MODEL, model_op, "model")]


def resource_matchers(spec: Spec) -> Matchers:
    """Per-server panels (GPU, CPU, memory): the job and instance variables."""
    return [*cluster_matchers(spec), JOB_VAR_MATCHER, var_matcher(c.LABEL_INSTANCE, "=~", "instance")]


def exporter_matchers(spec: Spec, model_op: str | None = "=~") -> Matchers:
    """The exporter's series: its scrape job is the `$exporter_job` variable (default the spec's
    `exporter_job`), never a literal (a PodMonitor names it `<namespace>/<podmonitor>`)."""
    ms: Matchers = [*cluster_matchers(spec), var_matcher(c.LABEL_JOB, "=", EXPORTER_JOB_VAR)]
    return [*ms, var_matcher(c.LABEL_MODEL, model_op, "model")] if model_op else ms


def panel_rate(family: str, ms: Matchers, labels: Sequence[str]) -> str:
    return pq.counter_rate(family, ms, RATE, labels)


def recorded(family: str, ms: Matchers, labels: Sequence[str]) -> str:
    """Fleet-wide panels: the recording rules' per-instance 5m rate (GPU series already counted
    once), summed `by labels`, instead of a raw rate over every series of the fleet (issue 13)."""
    return f"sum {pq.by(labels)} ({pq.selector(c.rec_rate(c.REC_LEVEL_INSTANCE, family), ms)})"


def recorded_without_ensembles(spec: Spec) -> Callable[[str, Matchers, Sequence[str]], str]:
    """`recorded`, leaving out the models the exporter marks as ensembles: an ensemble's request is a
    request of each step again, and Triton counts its steps' queue in none of its stages (its queue is
    the hand-off to its first step, the rest reads as other; docs/exporter.md)."""
    ensemble = pq.ensemble_marked(pq.label_sets(spec.cluster_label).per_model, exporter_matchers(spec, None))

    def rate(family: str, ms: Matchers, labels: Sequence[str]) -> str:
        series = pq.selector(c.rec_rate(c.REC_LEVEL_INSTANCE, family), ms)
        return f"sum {pq.by(labels)} ({series} unless {ensemble})"

    return rate


def ensemble_steps(
    spec: Spec, stages: Sequence[str] = (), labels: Sequence[str] = STEP_LABELS, model_op: str = "=~"
) -> str:
    """The exporter's seconds per ensemble request by step (`stages` only, when given), averaged
    over the exporters that report it, `by labels`."""
    ms = exporter_matchers(spec, model_op)
    if stages:
        ms = [*ms, (c.L_STAGE, "=~", "|".join(stages))]
    return f"avg {pq.by(labels)} ({pq.selector(c.M_ENSEMBLE_STEP_SECONDS, ms)})"


def request_rate(ms: Matchers, labels: Sequence[str], rate: Any = panel_rate) -> str:
    success = rate(c.NV_REQUEST_SUCCESS, ms, labels)
    return f"{success} + ({rate(c.NV_REQUEST_FAILURE, ms, labels)} or {success} * 0)"


def per_request(numerator: str, ms: Matchers, labels: Sequence[str], rate: Any = panel_rate) -> str:
    return f"{numerator} / 1e6 / ({rate(c.NV_REQUEST_SUCCESS, ms, labels)} > 0)"


def stage_targets(
    ms: Matchers, labels: Sequence[str], legend_prefix: str, rate: Any = panel_rate
) -> list[g.Target]:
    targets = []
    for stage, family in c.STAGE_COUNTERS.items():
        targets.append(
            target(per_request(rate(family, ms, labels), ms, labels, rate), f"{legend_prefix}{stage}")
        )
    measured = " - ".join(rate(f, ms, labels) for f in c.STAGE_COUNTERS.values())
    other = f"({rate(c.NV_REQUEST_DURATION_US, ms, labels)} - {measured})"
    targets.append(
        target(f"clamp_min({per_request(other, ms, labels, rate)}, 0)", f"{legend_prefix}{c.STAGE_OTHER}")
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
    branches = [f"{pq.summary_quantile(summary, ms, quantile, labels)} / 1e6"]
    if histogram:
        branches.insert(0, f"{pq.histogram_quantile(histogram, ms, quantile, RATE, labels)} / 1e3")
    return pq.first_of(branches, labels)


def latency_panel(spec: Spec, measure: str, ms: Matchers, labels: Sequence[str], prefix: str) -> g.TimeSeries:
    average_family = c.NV_REQUEST_DURATION_US if measure == c.LATENCY_REQUEST else c.NV_QUEUE_DURATION_US
    targets = [
        target(quantile_expr(measure, ms, q, labels), f"{prefix}{c.quantile_name(q)}")
        for q in c.LATENCY_QUANTILES
    ]
    targets.append(
        target(per_request(panel_rate(average_family, ms, labels), ms, labels), f"{prefix}{_AVERAGE_LEGEND}")
    )
    latency = [s for s in spec.slos if s.type == c.SLO_LATENCY]
    for slo in latency:  # the request SLO threshold, or the queue-time alert's share of it
        share = 1.0 if measure == c.LATENCY_REQUEST else slo.queue_time_share
        targets.append(
            target(f"vector({pq.num(slo.threshold_s * share)})", f"SLO {slo.name} {_THRESHOLD_LEGEND}")
        )
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
    bucket = pq.selector(f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket", ms)
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


def tail_row(layout: Layout, spec: Spec, ms: Matchers, labels: Sequence[str], prefix: str) -> None:
    panels: list[Any] = [
        latency_panel(spec, c.LATENCY_REQUEST, ms, labels, prefix),
        latency_panel(spec, c.LATENCY_QUEUE, ms, labels, prefix),
    ]
    if c.LATENCY_SOURCE_HISTOGRAM in spec.latency_metrics:
        panels.append(_latency_heatmap(ms))
    layout.row("Tail latency", panels)


def target(expr: str, legend: str, *, instant: bool = False, table: bool = False) -> g.Target:
    return g.Target(
        expr=expr,
        legendFormat=legend,
        instant=instant,
        format="table" if table else "time_series",
        datasource=DS,
    )


class Layout:
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

    def explain_empty(self, reasons: dict[str, str]) -> None:
        """why_empty on the panels titled as the keys (every title must exist)."""
        found = {panel.title: panel for panel in self.panels if panel.title in reasons}
        missing = set(reasons) - set(found)
        if missing:
            raise KeyError(f"no panel titled {sorted(missing)}")
        for title, reason in reasons.items():
            why_empty(found[title], reason)


def timeseries(
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


def stat(title: str, description: str, unit: str, targets: list[g.Target]) -> g.Stat:
    """A single-value panel showing each series' last value."""
    return g.Stat(
        title=title,
        description=description,
        format=unit,
        dataSource=DS,
        reduceCalc="lastNotNull",
        targets=targets,
    )


def templating_of(variables: list[g.Template]) -> g.Templating:
    return g.Templating(list=variables)


def table(
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


def query_var(name: str, label: str, expr: str, default: str | None, multi: bool) -> g.Template:
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


DATASOURCE_VAR = g.Template(
    name="datasource", label="Data source", query="prometheus", type="datasource", default=None
)


def exporter_job_var(spec: Spec) -> g.Template:
    """The exporter's scrape job, chosen among the jobs that have its `up` series."""
    return query_var(
        EXPORTER_JOB_VAR, "Exporter job", f"label_values({c.M_UP}, job)", spec.exporter_job, False
    )


def cluster_variables(spec: Spec) -> list[g.Template]:
    """The cluster variable (single-valued) when the spec sets `cluster_label`, else nothing."""
    if not spec.cluster_label:
        return []
    values = f"label_values({c.NV_INFERENCE_COUNT}, {spec.cluster_label})"
    return [query_var(CLUSTER_VAR, "Cluster", values, None, False)]


def variables(spec: Spec, *, multi_model: bool) -> g.Templating:
    query = query_var
    cluster = cluster_matchers(spec)
    job_count = pq.selector(c.NV_INFERENCE_COUNT, [*cluster, JOB_VAR_MATCHER])
    instance_count = pq.selector(c.NV_INFERENCE_COUNT, resource_matchers(spec))
    jobs = pq.selector(c.NV_INFERENCE_COUNT, cluster)
    return g.Templating(
        list=[
            DATASOURCE_VAR,
            *cluster_variables(spec),
            query("job", "Triton job", f"label_values({jobs}, job)", spec.triton_job, False),
            query("instance", "Instance", f"label_values({job_count}, instance)", "$__all", True),
            exporter_job_var(spec),
            query(
                "model",
                "Model",
                f"label_values({instance_count}, model)",
                "$__all" if multi_model else None,
                multi_model,
            ),
        ]
    )


def dashboard(
    title: str, uid: str, description: str, templating: g.Templating, layout: Layout
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


# Why a panel can be empty by design (Grafana's no-value text, also added to its description):
# users of the demo on a CPU host see these panels blank first (issue 26 item 2).
NEEDS_GPU = "No data without a GPU: Triton exports its nv_gpu_* metrics only on GPU hosts."
NEEDS_MEMORY_USAGE = (
    "No data unless a backend reports memory_usage in Triton's statistics (ONNX Runtime, TensorRT; "
    "the Python backend does not)."
)
NEEDS_GPU_MEMORY_USAGE = (
    "No data without a GPU and a backend that reports GPU memory_usage (ONNX Runtime, TensorRT; "
    "the Python backend does not)."
)
ALL_SERVED = "None: every model of the selection has a version READY."
NO_ENSEMBLE = (
    "No data without an ensemble among the selected models whose steps served requests in the "
    "exporter's window."
)
WHY_EMPTY = (NEEDS_GPU, NEEDS_MEMORY_USAGE, NEEDS_GPU_MEMORY_USAGE, ALL_SERVED, NO_ENSEMBLE)


def why_empty(panel: Any, reason: str) -> Any:
    """Say in the panel why it can have no data (noValue text and description)."""
    panel.description = f"{panel.description} {reason}".strip()
    panel.extraJson = {**(panel.extraJson or {}), "fieldConfig": {"defaults": {"noValue": reason}}}
    return panel


def gpu_utilization(res: Matchers) -> g.TimeSeries:
    return why_empty(
        timeseries(
            "GPU utilization",
            "Triton's nv_gpu_utilization per GPU (0-1).",
            "percentunit",
            [target(pq.selector(c.NV_GPU_UTILIZATION, res), "{{instance}} {{gpu_uuid}}")],
        ),
        NEEDS_GPU,
    )


def cpu_utilization(res: Matchers) -> g.TimeSeries:
    return timeseries(
        "CPU utilization",
        "Triton's nv_cpu_utilization of the host (0-1).",
        "percentunit",
        [target(pq.selector(c.NV_CPU_UTILIZATION, res), "{{instance}}")],
    )
