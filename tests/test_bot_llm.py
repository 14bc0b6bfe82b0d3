"""The bot's LLM alert figures: TTFT p99, KV cache use, waiting requests and the verdict, rendered
into the message; the queries run against the real Prometheus of the live test session."""

from __future__ import annotations

import json
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot import llm
from triton_sre.bot.enrich import Facts, Links, enrich
from triton_sre.bot.payload import parse_group
from triton_sre.bot.slack import Renderer
from triton_sre.bot.slack_limits import validate_blocks
from triton_sre.demo import LLM_TRTLLM, LLM_VLLM
from triton_sre.generate.llm import alert_rules
from triton_sre.prom import Prometheus
from triton_sre.slo import default_spec, parse_spec


def group(name: str, model: str, annotations: dict[str, str] | None = None) -> Any:
    return parse_group(
        {
            "version": "4",
            "groupKey": "{}:{x}",
            "status": "firing",
            "commonLabels": {"alertname": name, "model": model},
            "alerts": [
                {
                    "status": "firing",
                    "labels": {"alertname": name, "model": model, "version": "1", "severity": "ticket"},
                    "annotations": annotations or {"summary": f"{name} on {model}"},
                    "fingerprint": "f1",
                    "startsAt": "2026-11-29T10:00:00Z",
                }
            ],
        }
    )


def test_verdict_names_the_bound_with_its_numbers() -> None:
    memory = llm.verdict({llm.KV_CACHE: 0.97, llm.WAITING: 5}, 0.95)
    assert memory.startswith("memory-bound") and "97%" in memory and "5 requests" in memory
    compute = llm.verdict({llm.KV_CACHE: 0.4, llm.WAITING: 3}, 0.95)
    assert compute.startswith("compute-bound") and "40%" in compute and "3 requests" in compute
    assert llm.verdict({llm.KV_CACHE: 0.99, llm.WAITING: 0}, 0.95) == ""
    assert llm.verdict({llm.WAITING: 2}, 0.95) == ""  # no cache figure: no verdict
    # no threshold on the alert (rules generated before the annotation): its `bound` label decides
    assert llm.verdict({llm.KV_CACHE: 0.5, llm.WAITING: 2}, None, c.BOUND_MEMORY).startswith("memory")
    assert llm.verdict({llm.KV_CACHE: 0.5, llm.WAITING: 2}, None) == ""
    assert llm.saturation_threshold({c.ANNOTATION_KV_CACHE_SATURATED_RATIO: "0.8"}) == 0.8
    for bad in ("", "high", "nan", "1.5", "0"):
        assert llm.saturation_threshold({c.ANNOTATION_KV_CACHE_SATURATED_RATIO: bad}) is None


def _alert_annotations(spec_text: str | None, name: str) -> dict[str, str]:
    """The annotations the generated rule `name` gives its alerts, for a spec (None: the default)."""
    spec = parse_spec(spec_text) if spec_text else default_spec()
    (rule,) = [r for r in alert_rules(spec, "https://runbooks.example") if r["alert"] == name]
    return dict(rule["annotations"])


def test_verdict_follows_the_specs_kv_threshold_not_a_constant() -> None:
    """Issue 25 item 4: a spec with ratio 0.8 makes 85 % memory-bound; the default (0.95) does not."""
    custom = "slos: [{name: a, type: availability, objective: 99}]\nllm: {kv_cache_saturated_ratio: 0.8}\n"
    facts = Facts(llm={"f1": {llm.TTFT_P99: 0.2, llm.KV_CACHE: 0.85, llm.WAITING: 4}})
    verdicts = {}
    for spec_text in (custom, None):
        for name in (c.ALERT_LLM_KV_CACHE_SATURATED, c.ALERT_LLM_REQUESTS_WAITING):
            annotations = _alert_annotations(spec_text, name)
            view = enrich(group(name, LLM_VLLM, annotations), facts, Links()).alerts[0]
            verdicts[spec_text is None, name] = view.llm_verdict
    carried = _alert_annotations(custom, c.ALERT_LLM_KV_CACHE_SATURATED)
    assert carried[c.ANNOTATION_KV_CACHE_SATURATED_RATIO] == "0.8"
    for name in (c.ALERT_LLM_KV_CACHE_SATURATED, c.ALERT_LLM_REQUESTS_WAITING):
        assert verdicts[False, name].startswith("memory-bound: KV cache 85% full"), verdicts
        assert verdicts[True, name].startswith("compute-bound: 4 requests waiting with the KV cache at 85%")


def test_message_shows_ttft_cache_waiting_and_verdict() -> None:
    g = group(
        c.ALERT_LLM_KV_CACHE_SATURATED, LLM_VLLM, _alert_annotations(None, c.ALERT_LLM_KV_CACHE_SATURATED)
    )
    facts = Facts(llm={"f1": {llm.TTFT_P99: 0.412, llm.KV_CACHE: 0.97, llm.WAITING: 6}})
    model = enrich(g, facts, Links())
    blocks = Renderer().blocks(model.context())
    validate_blocks(blocks)
    text = json.dumps(blocks)
    assert "*TTFT p99:* 0.412 s" in text and "*KV cache:* 97.0%" in text and "*Waiting:* 6" in text
    assert "memory-bound: KV cache 97% full with 6 requests waiting" in text
    assert c.ALERT_RUNBOOKS[c.ALERT_LLM_KV_CACHE_SATURATED] in text  # the runbook link
    grafana = Links(grafana_url="https://grafana.example.com", dashboard_uid_llm=c.UID_LLM_DASHBOARD)
    assert f"/d/{c.UID_LLM_DASHBOARD}?var-model={LLM_VLLM}" in json.dumps(enrich(g, facts, grafana).context())
    # a non-LLM alert gets none of it; missing figures read n/a
    other = enrich(group(c.ALERT_SERVER_DOWN, LLM_VLLM), facts, Links())
    assert other.alerts[0].llm is None
    partial = enrich(g, Facts(llm={"f1": {llm.WAITING: 2}}), Links())
    assert "*TTFT p99:* n/a" in json.dumps(Renderer().blocks(partial.context()))


def test_figure_queries_answer_on_the_real_prometheus(live: dict[str, Any]) -> None:
    prom = Prometheus(live["prom"].url)
    got = {
        m: {k: prom.instant(e) for k, e in llm.figure_exprs(m, "1").items()} for m in (LLM_VLLM, LLM_TRTLLM)
    }
    assert got[LLM_VLLM][llm.TTFT_P99] is not None and got[LLM_VLLM][llm.TTFT_P99] > 0.004
    for model in (LLM_VLLM, LLM_TRTLLM):
        assert got[model][llm.KV_CACHE] is not None and 0 <= got[model][llm.KV_CACHE] <= 1
        assert got[model][llm.WAITING] is not None and got[model][llm.WAITING] >= 0
    assert got[LLM_TRTLLM][llm.TTFT_P99] is None  # TensorRT-LLM's families carry no TTFT
