"""SLO burn alerts exactly as Prometheus renders them: the expectations of the generated promtool
tests (`alerts/tests/`), which `tests/test_rules_promtool.py` runs through promtool. A bot test that
sends these labels and annotations sends what a real Prometheus would."""

from __future__ import annotations

from pathlib import Path

import yaml

from triton_sre import conventions as c

REPO = Path(__file__).resolve().parents[1]
SLO_TESTS = REPO / "alerts" / "tests" / "triton-slo-rules.test.yaml"


def rendered_burn_alert(
    alertname: str = c.ALERT_SLO_ERROR_BUDGET_BURN,
) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, annotations) of the first firing `alertname` the shipped promtool tests expect."""
    doc = yaml.safe_load(SLO_TESTS.read_text(encoding="utf-8"))
    for group in doc["tests"]:
        for check in group["alert_rule_test"]:
            if check["alertname"] == alertname and check["exp_alerts"]:
                first = check["exp_alerts"][0]
                return {c.LABEL_ALERTNAME: alertname, **first["exp_labels"]}, dict(first["exp_annotations"])
    raise AssertionError(f"no firing {alertname} expected in {SLO_TESTS}")


def as_old_rules_rendered(annotations: dict[str, str]) -> dict[str, str]:
    """The same alert from rule files generated before the burn_rate annotation existed."""
    return {k: v for k, v in annotations.items() if k != c.ANNOTATION_BURN_RATE}
