"""The gauge scaling signals (pending requests, LLM requests waiting) are the gauge averaged over two
scrapes of `scrape.interval` (30 s at the default 15 s), neither an instant nor a minute:
- an instant: under load a batching instance takes the whole queue and the gauge reads 0 at a third
  of the scrapes (journey27, real Triton at ~630 requests/s: 11 of 32 readings), so an HPA reading an
  instant scaled on whichever scrape it caught;
- a minute (autoscale29): a step of the backlog showed at a quarter of its height at the first scrape
  after it, and the HPA scaled 15-30 s later than on the instant (bench/RESULTS.md, autoscale30)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from test_generate_any_spec import _promtool_test, _render

from triton_sre import conventions as c
from triton_sre.generate.annotations import plain_labels
from triton_sre.promql import selector
from triton_sre.slo import SpecError, spec_from_mapping

STEP_S = 15  # the default scrape.interval: the gauge signals average over [30s]
_SERVER = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_INSTANCE: "triton-0:8002"}
_GAUGE = {**_SERVER, c.LABEL_MODEL: "ranker", c.LABEL_VERSION: "1"}
_LLM = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: "llm", c.LABEL_VERSION: "1"}
_SPEC = {
    "slos": [{"name": "a", "type": "availability", "objective": 99.9}],
    "autoscaling": [{"deployment": "triton", "max_replicas": 10}],
}


def _within(rule: str, low: float, high: float, at: str) -> dict[str, Any]:
    count = f"count({selector(rule, [(c.LABEL_JOB, '=', c.DEFAULT_TRITON_JOB)])} >= {low:g} <= {high:g})"
    return {"expr": count, "eval_time": at, "exp_samples": [{"labels": "{}", "value": 1}]}


def _run(tmp_path: Path, series: list[tuple[str, str]], checks: list[dict[str, Any]]) -> None:
    _render(_SPEC, tmp_path)
    doc = {
        "rule_files": ["../triton-autoscaling-rules.yaml"],
        "evaluation_interval": f"{STEP_S}s",
        # the usage ratio reads the signal of the same evaluation (promtool orders no groups unless told)
        "group_eval_order": [c.GROUP_AUTOSCALING, c.GROUP_AUTOSCALING_ALERTS],
        "tests": [
            {
                "interval": f"{STEP_S}s",
                "input_series": [
                    *({"series": name, "values": values} for name, values in series),
                    {"series": f"up{plain_labels(_SERVER)}", "values": "1x40"},
                ],
                "promql_expr_test": checks,
            }
        ],
    }
    (tmp_path / "alerts" / "tests" / "pending.test.yaml").write_text(yaml.safe_dump(doc))
    _promtool_test(tmp_path, "pending.test.yaml")


def test_an_alternating_backlog_reads_its_average_at_every_scrape(tmp_path: Path) -> None:
    """One Triton whose gauge reads 4, 0, 4, 0 … : the per-server and per-job signals read 4/3 to 8/3
    (Prometheus 2's closed range holds 3 samples of a 30 s window, Prometheus 3's 2: then 2) both on a
    scrape that read 4 and on one that read 0. An instant read 4 then 0: the HPA would ask for 4
    replicas, then for none."""
    gauge = f"{c.NV_PENDING_REQUEST_COUNT}{plain_labels(_GAUGE)}"
    checks = [
        _within(rule, 1.3, 2.7, at)
        for rule in (c.REC_PENDING_INSTANCE, c.REC_PENDING_JOB)
        for at in ("4m", "4m15s")  # a scrape that read 4, the next that read 0
    ]
    _run(tmp_path, [(gauge, " ".join("4 0" for _ in range(20)))], checks)


def test_a_step_of_the_backlog_asks_for_replicas_at_the_first_scrape_after_it(tmp_path: Path) -> None:
    """The backlog of one serving replica steps from 0 to 4 at 2m: at the first scrape of 4 the signal
    reads 4/3 (Prometheus 2: 1 of the window's 3 samples) or 2 (Prometheus 3: 1 of 2), and the HPA's
    usage ratio (target 1) is over its 10 % tolerance: it scales at that sync. Averaged over 1m
    (autoscale29) it read 0.8 or 1 then, inside the tolerance: the HPA scaled a sync later."""
    gauge = f"{c.NV_PENDING_REQUEST_COUNT}{plain_labels(_GAUGE)}"
    checks = [_within(rule, 1.3, 2.1, "2m") for rule in (c.REC_PENDING_INSTANCE, c.REC_PENDING_JOB)]
    over = f"count({c.REC_AUTOSCALE_USAGE} > {1 + c.HPA_TOLERANCE:g})"
    checks.append({"expr": over, "eval_time": "2m", "exp_samples": [{"labels": "{}", "value": 1}]})
    _run(tmp_path, [(gauge, "0x7 4x32")], checks)


def test_llm_requests_waiting_are_averaged_as_the_backlog_is(tmp_path: Path) -> None:
    """The LLM scheduler's queue empties at every scheduler step as a batcher's does: waiting
    requests 6, 0, 6, 0 … read 2 to 4 per job at both kinds of scrape, not 6 then 0."""
    waiting = f"{c.REC_LLM_WAITING}{plain_labels(_LLM)}"
    checks = [_within(c.REC_LLM_WAITING_JOB, 1.9, 4.1, at) for at in ("4m", "4m15s")]
    _run(tmp_path, [(waiting, " ".join("6 0" for _ in range(20)))], checks)


def test_the_window_follows_the_configured_scrape_interval(tmp_path: Path) -> None:
    """scrape.interval 5s: the gauge signals average over 10s (two scrapes); unset: 30s (15 s)."""
    default = _render(_SPEC, tmp_path / "default")
    faster = _render({**_SPEC, "scrape": {"interval": "5s"}}, tmp_path / "faster")
    assert (default.signal_window_s, faster.signal_window_s) == (2 * STEP_S, 10)
    rules = (tmp_path / "faster" / "alerts" / "triton-autoscaling-rules.yaml").read_text()
    assert f"avg_over_time({c.REC_LLM_WAITING}[10s])" in rules
    assert f'avg_over_time({c.NV_PENDING_REQUEST_COUNT}{{job="{c.DEFAULT_TRITON_JOB}"}}[10s])' in rules
    # the bursty lagging test feeds samples a quarter of the window apart; promtool passes it
    _promtool_test(tmp_path / "faster", "triton-autoscaling-rules.test.yaml")


@pytest.mark.parametrize("value", ["500ms", "1500ms", "2m", 15, "soon"])
def test_a_scrape_interval_the_window_cannot_follow_is_refused_by_name(value: object) -> None:
    with pytest.raises(SpecError, match=r"scrape\.interval: "):
        spec_from_mapping({**_SPEC, "scrape": {"interval": value}})
