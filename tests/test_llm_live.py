"""The LLM rules and the "Triton / LLM" dashboard on the real Prometheus, scraping the real Triton
serving the LLM sample models (and the exporter): every query returns data, nothing is NaN, and
the rules agree with the exporter."""

from __future__ import annotations

import math
from typing import Any

from grafana_vars import fill
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.demo import LLM_MODELS, LLM_TRTLLM, LLM_VLLM
from triton_sre.generate import dash_llm, dashboards, llm
from triton_sre.generate.panels import EXPORTER_JOB_VAR

SUBSTITUTIONS = {
    "$__rate_interval": "1m",
    "$job": c.DEFAULT_TRITON_JOB,
    "$instance": ".*",
    "$model": "|".join(LLM_MODELS),
    f"${EXPORTER_JOB_VAR}": c.DEFAULT_EXPORTER_JOB,
}


def test_every_llm_dashboard_query_returns_data(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    board = dashboards.dashboards(live["spec"])[dash_llm.FILE]
    assert board["uid"] == c.UID_LLM_DASHBOARD and board["title"] == "Triton / LLM"
    empty = []
    count = 0
    for panel, target in dashboards.iter_targets(board):
        expr = target["expr"]
        expr = fill(expr, SUBSTITUTIONS)
        assert "$" not in expr, expr
        count += 1
        # at the fixture's settled time: the 5m rates of its traffic end 5 minutes later, whenever this runs
        if not prom.query(expr, at=live["settled"]):
            empty.append((panel["title"], expr))
    assert count >= 12
    assert empty == [], empty


def test_llm_rules_have_data_for_both_backends_and_no_nan(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    records = [rule["record"] for rule in llm.recording_rules(live["spec"])]
    for record in set(records):
        result = prom.query(record, at=live["settled"])
        models = {r["metric"][c.LABEL_MODEL] for r in result}
        for r in result:
            assert not math.isnan(float(r["value"][1])), (record, r)
        if record in (c.REC_LLM_TTFT_QUANTILE, c.REC_LLM_TPOT_QUANTILE):
            assert models == {LLM_VLLM}, record  # only the vLLM families carry latency histograms
        else:
            assert models >= {LLM_VLLM, LLM_TRTLLM}, (record, models)


def test_llm_rules_agree_with_the_exporter(live: dict[str, Any]) -> None:
    prom: Prom = live["prom"]
    derived = {m.model: m for m in live["derivation"].llm}
    at = live["settled"]
    ttft = prom.query(f'{c.REC_LLM_TTFT_QUANTILE}{{model="{LLM_VLLM}", quantile="0.5"}}', at=at)
    assert len(ttft) == 1
    # the model's prefill is >= 4 ms: the p50 and the exporter's average both see it
    assert float(ttft[0]["value"][1]) > 0.004 and derived[LLM_VLLM].ttft_seconds > 0.004
    tpot = prom.query(f'{c.REC_LLM_TPOT_QUANTILE}{{model="{LLM_VLLM}", quantile="0.99"}}', at=at)
    # 2 ms per token, slowed by other sequences and by a loaded machine's scheduling: well under 100 ms
    assert 0.002 < float(tpot[0]["value"][1]) <= 0.1
    for model in LLM_MODELS:
        rate = prom.query(f'{c.REC_LLM_TOKENS_RATE}{{model="{model}", direction="output"}}', at=at)
        assert len(rate) == 1 and float(rate[0]["value"][1]) > 0
        assert derived[model].tokens[c.DIRECTION_OUTPUT] > 0
        kv = prom.query(f'{c.REC_LLM_KV_CACHE}{{model="{model}"}}', at=at)
        assert len(kv) == 1 and 0 <= float(kv[0]["value"][1]) <= 1


def test_llm_slos_read_the_real_histograms(live: dict[str, Any]) -> None:
    """The ttft and time-per-output-token SLO rules see llm_vllm's events, and the threshold's
    bucket matches the `le` the real server writes (else every event would count as bad): the
    rule's bad fraction is the one read off that exact bucket of the raw histogram."""
    prom: Prom = live["prom"]
    at = live["settled"]
    for slo in (s for s in live["spec"].slos if s.type in c.LLM_SLO_TYPES):
        sel = f'{{slo="{slo.name}", model="{LLM_VLLM}"}}'
        events = prom.query(f"{c.rec_slo_requests('5m')}{sel}", at=at)
        assert len(events) == 1 and float(events[0]["value"][1]) > 0, slo.name
        family = c.LLM_SLO_HISTOGRAMS[slo.type][0]
        model = f'model="{LLM_VLLM}"'
        les = {r["metric"]["le"] for r in prom.query(f"{family}_bucket{{{model}}}", at=at)}
        exact = [le for le in les if le != "+Inf" and float(le) == slo.threshold_s]
        assert len(exact) == 1, (slo.name, sorted(les))  # the server writes the threshold's bucket
        raw = prom.query(
            f'1 - sum(rate({family}_bucket{{{model}, le="{exact[0]}"}}[5m]))'
            f" / sum(rate({family}_count{{{model}}}[5m]))",
            at=at,
        )
        bad = prom.query(f"{c.rec_slo_errors('5m')}{sel}", at=at)
        # the share itself depends on the machine's load (12 clients on 2 cores): compare, not bound
        assert len(bad) == 1 and 0 <= float(bad[0]["value"][1]) < 1, (slo.name, bad)
        assert abs(float(bad[0]["value"][1]) - float(raw[0]["value"][1])) < 0.02, (slo.name, bad, raw)
        # TensorRT-LLM's families have no latency histograms: no SLO series for that model
        assert prom.query(f'{c.rec_slo_requests("5m")}{{slo="{slo.name}", model="{LLM_TRTLLM}"}}') == []
