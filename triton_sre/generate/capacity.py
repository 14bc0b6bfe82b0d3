"""Capacity alerts (issue 16): headroom for a side-by-side reload, slow loads vs the startup probe."""

from __future__ import annotations

from triton_sre import conventions as c
from triton_sre.durations import format_duration
from triton_sre.generate.rulefile import Rule, RuleFile, alert, runbook_url
from triton_sre.promql import Matcher, label_sets, num, on, selector
from triton_sre.slo import Spec

CAPACITY_FILE = "triton-capacity-alerts.yaml"


def capacity_groups(spec: Spec, base_url: str) -> RuleFile:
    """Capacity alerts (issue 16): headroom for a side-by-side reload, slow loads vs the startup probe."""
    exporter: list[Matcher] = [(c.LABEL_JOB, "=", spec.exporter_job)]
    op = spec.operational
    budget = op.startup_probe_budget_s
    limit = budget * op.load_slow_share
    url = lambda alert: runbook_url(base_url, c.ALERT_RUNBOOKS[alert])  # noqa: E731
    rules: list[Rule] = [
        alert(
            c.ALERT_GPU_MEMORY_HEADROOM_LOW,
            f"{selector(c.M_GPU_MEMORY_HEADROOM_BYTES, exporter)}\n"
            f"< {on(label_sets(spec.cluster_label).keep(c.LABEL_JOB, c.LABEL_INSTANCE, c.LABEL_GPU_UUID))} "
            f"{selector(c.M_GPU_LARGEST_MODEL_BYTES, exporter)}",
            "15m",
            c.SEVERITY_PAGE,
            "GPU {{ $labels.gpu_uuid }} on {{ $labels.instance }} cannot load a new version beside its "
            "largest model",
            'GPU {{ $labels.gpu_uuid }} has {{ $value | printf "%.0f" }} bytes free, less than its largest '
            f"resident model ({c.M_GPU_LARGEST_MODEL_BYTES}): loading that model's next version side by "
            f"side (blue/green) will run out of memory. The models on it: {c.M_MODEL_MEMORY_BYTES} "
            "with device = the GPU's uuid.",
            url(c.ALERT_GPU_MEMORY_HEADROOM_LOW),
        ),
        alert(
            c.ALERT_MODEL_LOAD_SLOW,
            f"{selector(c.M_MODEL_LOAD_SECONDS, exporter)} > {num(limit)}",
            "1m",
            c.SEVERITY_TICKET,
            'Model {{ $labels.model }} took {{ $value | printf "%.1f" }} s to load',
            "The last load of model {{ $labels.model }} version {{ $labels.version }} took "
            '{{ $value | printf "%.1f" }} s, '
            f"more than {num(op.load_slow_share * 100)}% of the "
            f"{format_duration(budget)} startup-probe budget (operational.startup_probe_budget): a restart "
            "loading it may be killed before it is ready. Size the startup probe at 2 x the slowest load "
            "+ a margin.",
            url(c.ALERT_MODEL_LOAD_SLOW),
        ),
    ]
    return {"groups": [{"name": c.GROUP_CAPACITY, "rules": rules}]}


def rule_file(spec: Spec, base_url: str) -> RuleFile:
    """The family's rule file (registered in generate/families.py)."""
    return capacity_groups(spec, base_url)
