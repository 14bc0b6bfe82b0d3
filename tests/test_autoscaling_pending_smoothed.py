"""The pending-requests scaling signal is the backlog averaged over the rule window, not an instant of
Triton's gauge: under load a batching instance takes the whole queue and the gauge reads 0 at a third
of the scrapes (journey27, real Triton at ~630 requests/s: 11 of 32 readings), so an HPA reading an
instant scaled on whichever scrape it caught."""

from __future__ import annotations

from pathlib import Path

import yaml
from test_generate_any_spec import _promtool_test, _render

from triton_sre import conventions as c
from triton_sre.generate.calc import plain_labels
from triton_sre.promql import selector

STEP_S = 15  # a scrape interval the rules support (4 scrapes in their 1m windows)


def test_an_alternating_backlog_reads_its_average_at_every_scrape(tmp_path: Path) -> None:
    """One Triton whose gauge reads 4, 0, 4, 0 … : the per-server and per-job signals read about 2
    (1.6-2.4 with the window's 4 or 5 samples) both on a scrape that read 4 and on one that read 0.
    An instant read 4 then 0: the HPA would ask for 4 replicas, then for none."""
    _render(
        {
            "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
            "autoscaling": [{"deployment": "triton", "max_replicas": 10}],
        },
        tmp_path,
    )
    server = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_INSTANCE: "triton-0:8002"}
    gauge = {**server, c.LABEL_MODEL: "ranker", c.LABEL_VERSION: "1"}
    checks = []
    for rule in (c.REC_PENDING_INSTANCE, c.REC_PENDING_JOB):
        within = f"count({selector(rule, [(c.LABEL_JOB, '=', c.DEFAULT_TRITON_JOB)])} >= 1.5 <= 2.5)"
        for at in ("4m", "4m15s"):  # a scrape that read 4, the next that read 0
            checks.append({"expr": within, "eval_time": at, "exp_samples": [{"labels": "{}", "value": 1}]})
    doc = {
        "rule_files": ["../triton-autoscaling-rules.yaml"],
        "evaluation_interval": f"{STEP_S}s",
        "tests": [
            {
                "interval": f"{STEP_S}s",
                "input_series": [
                    {
                        "series": f"{c.NV_PENDING_REQUEST_COUNT}{plain_labels(gauge)}",
                        "values": " ".join("4 0" for _ in range(20)),
                    },
                    {"series": f"up{plain_labels(server)}", "values": "1x40"},
                ],
                "promql_expr_test": checks,
            }
        ],
    }
    (tmp_path / "alerts" / "tests" / "pending.test.yaml").write_text(yaml.safe_dump(doc))
    _promtool_test(tmp_path, "pending.test.yaml")
