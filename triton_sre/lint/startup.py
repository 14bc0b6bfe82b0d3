"""Measured load times against the startup-probe budget: size the probe at 2 x the slowest load + a margin.

Lint cannot measure a load; `--load-seconds MODEL=SECONDS` passes what the exporter measured
(`triton_sre_model_load_seconds`, `triton-sre report`), and the budget is
`operational.startup_probe_budget` of the SLO file (what deploy/k8s sizes Triton's probe with).
"""

from __future__ import annotations

import math

from triton_sre import conventions as c
from triton_sre.lint.issue import Issue, LintOptions, config_issue
from triton_sre.lint.repository import Repository
from triton_sre.probes import STARTUP_MARGIN_S, startup_budget

__all__ = ["PROBE_PERIOD_S", "check"]

PROBE_PERIOD_S = 5  # periodSeconds of the startup probe in deploy/k8s


def check(repo: Repository, options: LintOptions) -> list[Issue]:
    if not options.load_seconds or options.startup_probe_budget_s is None:
        return []
    measured = {m: s for m, s in options.load_seconds.items() if m in repo.models}
    if not measured:
        return []
    slowest = max(measured, key=lambda m: (measured[m], m))
    need = startup_budget(measured[slowest])
    budget = options.startup_probe_budget_s
    if need <= budget:
        return []
    return [
        config_issue(
            repo.models[slowest],
            c.ALERT_RUNBOOKS[c.ALERT_MODEL_LOAD_SLOW],
            f"measured load {measured[slowest]:.1f} s: the startup-probe budget {budget:.0f} s is under "
            f"2 x the slowest load + {STARTUP_MARGIN_S:.0f} s = {need:.0f} s; a restart can be killed "
            "before Triton is ready",
            f"startupProbe failureThreshold: {math.ceil(need / PROBE_PERIOD_S)} at periodSeconds: "
            f"{PROBE_PERIOD_S} (operational.startup_probe_budget: {math.ceil(need)}s in slos.yaml, then "
            "`triton-sre generate`)",
            "name",
            severity=c.IMPACT_WARNING,
        )
    ]
