"""promtool tests of the capacity alerts (capacity.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate.annotations import plain_labels, render_any
from triton_sre.generate.calc import TEST_EXPORTER_INSTANCE, TEST_MODEL, TEST_VERSION
from triton_sre.generate.capacity import CAPACITY_FILE, capacity_groups
from triton_sre.slo import Spec


def capacity_tests(spec: Spec, base_url: str) -> list[dict[str, Any]]:
    """Each capacity alert fires on series shaped like the exporter's, and stays silent just below."""
    rules = {rule["alert"]: rule for g in capacity_groups(spec, base_url)["groups"] for rule in g["rules"]}
    e_inst = {c.LABEL_JOB: spec.exporter_job, c.LABEL_INSTANCE: TEST_EXPORTER_INSTANCE}

    def case(
        title: str,
        alert: str,
        series: list[dict[str, str]],
        silent: list[dict[str, str]],
        at: str,
        labels: Mapping[str, str],
        value: float,
    ) -> dict[str, Any]:
        rule = rules[alert]
        all_labels = {**labels, **rule["labels"]}
        expected = {
            "exp_labels": dict(sorted(all_labels.items())),
            "exp_annotations": {k: render_any(v, all_labels, value) for k, v in rule["annotations"].items()},
        }
        return {
            "name": title,
            "interval": "1m",
            "input_series": series + silent,
            "alert_rule_test": [
                {"eval_time": "0m", "alertname": alert, "exp_alerts": []},  # pending, not firing
                {"eval_time": at, "alertname": alert, "exp_alerts": [expected]},
            ],
        }

    low, ok = {**e_inst, c.LABEL_GPU_UUID: "GPU-0"}, {**e_inst, c.LABEL_GPU_UUID: "GPU-1"}
    largest = 4_000_000_000
    limit = spec.operational.startup_probe_budget_s * spec.operational.load_slow_share
    slow, quick = (
        {**e_inst, c.LABEL_MODEL: TEST_MODEL, c.LABEL_VERSION: TEST_VERSION},
        {**e_inst, c.LABEL_MODEL: "quick", c.LABEL_VERSION: TEST_VERSION},
    )
    return [
        case(
            "headroom below the largest resident model",
            c.ALERT_GPU_MEMORY_HEADROOM_LOW,
            [
                {
                    "series": f"{c.M_GPU_MEMORY_HEADROOM_BYTES}{plain_labels(low)}",
                    "values": f"{largest - 1}x30",
                },
                {"series": f"{c.M_GPU_LARGEST_MODEL_BYTES}{plain_labels(low)}", "values": f"{largest}x30"},
            ],
            [  # exactly the largest model free: it fits, no alert
                {"series": f"{c.M_GPU_MEMORY_HEADROOM_BYTES}{plain_labels(ok)}", "values": f"{largest}x30"},
                {"series": f"{c.M_GPU_LARGEST_MODEL_BYTES}{plain_labels(ok)}", "values": f"{largest}x30"},
            ],
            "20m",
            low,
            largest - 1,
        ),
        case(
            "a load longer than the share of the startup-probe budget",
            c.ALERT_MODEL_LOAD_SLOW,
            [{"series": f"{c.M_MODEL_LOAD_SECONDS}{plain_labels(slow)}", "values": f"{limit + 1:g}x10"}],
            [{"series": f"{c.M_MODEL_LOAD_SECONDS}{plain_labels(quick)}", "values": f"{limit:g}x10"}],
            "5m",
            slow,
            limit + 1,
        ),
    ]


def test_files(spec: Spec, base_url: str) -> dict[str, dict[str, Any]]:
    """Test file name (under alerts/tests/) -> promtool document."""
    return {
        "triton-capacity-alerts.test.yaml": {
            "rule_files": [f"../{CAPACITY_FILE}"],
            "evaluation_interval": "1m",
            "tests": capacity_tests(spec, base_url),
        }
    }
