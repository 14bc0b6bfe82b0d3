"""Pure: the `TritonSREInputMissing` alert on the exporter's `triton_sre_input_missing{check}`.

Registered in the operational group (generate/operational.py); its runbook is
`c.RUNBOOK_INPUT_MISSING`, in `c.ALERT_RUNBOOKS`.
"""

from __future__ import annotations

from typing import Any

from triton_sre import conventions as c
from triton_sre.promql import by, label_sets, q
from triton_sre.slo import Spec

FOR = "15m"  # a missing input is a setup fault: no hurry, but not a blip during a restart either


def input_missing_alert(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, Any]:
    """One alert per instance and check whose needed input stays missing (severity ticket), unless the
    exporter says this Triton release predates the input (`needs_release` set): a flag, a config or a
    scrape fixes what it alerts on, and only an upgrade fixes the rest (the runbook's "Only an upgrade
    fixes it"; the gauge keeps saying so, with the release, for a dashboard or a report)."""
    base = base_url if base_url.endswith("/") else base_url + "/"
    job = f"{c.LABEL_JOB}={q(spec.exporter_job)}"
    return {
        "alert": c.ALERT_INPUT_MISSING,
        "expr": (
            f"max {by(label_sets(spec.cluster_label).keep(c.LABEL_JOB, c.LABEL_INSTANCE, c.L_CHECK))} "
            f'({c.M_INPUT_MISSING}{{{job},{c.L_NEEDS_RELEASE}=""}}) == 1'
        ),
        "for": FOR,
        "labels": {c.L_SEVERITY: c.SEVERITY_TICKET},
        "annotations": {
            c.ANNOTATION_SUMMARY: "Triton does not export what triton-sre's {{ $labels.check }} check needs",
            c.ANNOTATION_DESCRIPTION: (
                "The exporter on {{ $labels.instance }} finds the input of check {{ $labels.check }} "
                "missing from Triton: the metrics, alerts and panels built on it are empty. Run "
                "`triton-sre doctor --triton-url <Triton>` for what is missing and the exact fix."
            ),
            c.ANNOTATION_RUNBOOK_URL: f"{base}{c.RUNBOOK_INPUT_MISSING}.md",
        },
    }
