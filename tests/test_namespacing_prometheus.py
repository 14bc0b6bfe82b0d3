"""The generated recording rules and the shipped PodMonitor's metric relabelling on a real
Prometheus, scraping the real Triton 2.51's bodies with model namespacing on
(tests/data/namespacing_2.51/) beside a Kubernetes `namespace` target label, as the Prometheus
Operator attaches it: two repositories' `vector_scale` models keep their own batching ratio."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from live_prometheus import serve_text, start_prometheus, stop_prometheus, wait_ready
from namespacing_capture import REPOSITORIES
from test_namespacing import FIRST, SECOND, namespaces

from triton_sre import conventions as c
from triton_sre.demo import VECTOR_SCALE
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
K8S_NAMESPACE = "inference"  # what the operator's target label would hold
FIRST_SCRAPES = 3  # FIRST is served to this many scrapes, then SECOND


def _snake(key: str) -> str:
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in key)


def podmonitor_relabelling() -> list[dict[str, Any]]:
    """The shipped PodMonitor's metricRelabelings of Triton's endpoint, as Prometheus config."""
    monitor = yaml.safe_load((ROOT / "deploy" / "k8s" / "podmonitor.yaml").read_text(encoding="utf-8"))
    endpoint = monitor["spec"]["podMetricsEndpoints"][0]
    return [{_snake(k): v for k, v in rule.items()} for rule in endpoint["metricRelabelings"]]


def _bodies() -> Callable[[], str]:
    """FIRST for the first scrapes, then SECOND: the counters move once."""
    served = [0]

    def body() -> str:
        served[0] += 1
        return FIRST if served[0] <= FIRST_SCRAPES else SECOND

    return body


def test_rules_keep_two_namespaces_apart_behind_the_operator_s_namespace_label(tmp_path: Path) -> None:
    triton = serve_text(_bodies())
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "rule_files": [str(ROOT / "alerts" / "triton-recording-rules.yaml")],
        "scrape_configs": [
            {
                "job_name": "triton",
                "static_configs": [
                    {
                        "targets": [f"127.0.0.1:{triton.server_port}"],
                        "labels": {c.LABEL_NAMESPACE: K8S_NAMESPACE},
                    }
                ],
                "metric_relabel_configs": podmonitor_relabelling(),
            }
        ],
    }
    proc, log = start_prometheus(tmp_path, config, port)
    try:
        prom = wait_ready(proc, tmp_path, port)
        rule = f'{c.rec_batching_ratio(c.REC_LEVEL_INSTANCE)}{{{c.LABEL_MODEL}="{VECTOR_SCALE}"}}'
        found = namespaces(SECOND)
        want = {found[folder]: float(rows) for folder, (_ensemble, rows) in REPOSITORIES.items()}
        ratios: dict[str, float] = {}
        for _ in range(3):  # the rule's first evaluations may still see FIRST alone
            result = prom.wait_for(rule)
            ratios = {r["metric"].get(c.LABEL_NAMESPACE, ""): float(r["value"][1]) for r in result}
            if ratios == want:
                break
            prom.wait_for(f"{rule} unless {rule}", timeout=2.0)  # about two more evaluations
        assert ratios == want
        # a series without Triton's namespace keeps the target's (Kubernetes) one, nothing else
        cpu = prom.wait_for(c.NV_CPU_UTILIZATION)
        assert [r["metric"].get(c.LABEL_NAMESPACE) for r in cpu] == [K8S_NAMESPACE]
        exported = c.EXPORTED_LABEL_PREFIX + c.LABEL_NAMESPACE
        assert prom.query(f'count({{{exported}!=""}})') == []
    finally:
        stop_prometheus(proc, log)
        triton.shutdown()
