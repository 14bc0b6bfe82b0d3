"""`generate` on fleet-sized specs: work that must grow with the spec, not with its square."""

from __future__ import annotations

import re
import types
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.generate import tests_operational
from triton_sre.generate.tests_operational import operational_tests, slos_covering
from triton_sre.slo import SpecError, parse_spec, spec_from_mapping


def _latency(i: int, models: str) -> str:
    return (
        f"  - {{name: latency-{i}, type: latency, models: {models}, objective: 99, period: 30d,"
        " threshold: 500ms, quantile: 0.99, min_request_rate: 0.1}"
    )


def _spec(selectors: list[str]) -> Any:
    lines = ["scrape: {triton_job: triton, exporter_job: triton-sre, latency_metrics: [summary]}", "slos:"]
    lines += [_latency(i, models) for i, models in enumerate(selectors)]
    return parse_spec("\n".join(lines) + "\n", "fleet.yaml")


SELECTORS = [
    "[model-0]",
    '["a.b", "m+1"]',  # names holding regex syntax are names
    "[model-0, model-2]",  # model-0 in two SLOs
    "[model-3]",
    '{regex: "model-[0-3]"}',
    '{regex: "a.b"}',  # matches "a.b" and "axb" as a regex
    "all",
]
MODELS = ["model-0", "model-2", "model-3", "model-9", "a.b", "axb", "m+1", "mm1", "", "model-00"]


@pytest.mark.parametrize("model", MODELS)
def test_the_covering_slos_are_those_whose_pattern_fully_matches(model: str) -> None:
    latency = [s for s in _spec(SELECTORS).slos if s.type == c.SLO_LATENCY]
    slow = [s for s in latency if s.models.pattern is None or re.fullmatch(s.models.pattern, model)]
    assert slos_covering(latency)(model) == slow


def test_queue_time_cases_do_not_match_every_slo_against_every_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each latency SLO's queue-time case asked every latency SLO's pattern: n x n `re.fullmatch`,
    each compiled again once more than 512 patterns were in use (2,000 SLOs: 96 s of generate).
    Named models are looked up now; only regex selectors are matched, each compiled once."""
    calls = {"fullmatch": 0, "compile": 0}

    def fullmatch(pattern: str, text: str) -> Any:
        calls["fullmatch"] += 1
        return re.fullmatch(pattern, text)

    def compile_(pattern: str) -> re.Pattern[str]:
        calls["compile"] += 1
        return re.compile(pattern)

    counted = types.SimpleNamespace(fullmatch=fullmatch, compile=compile_, Pattern=re.Pattern)
    monkeypatch.setattr(tests_operational, "re", counted)
    n = 300
    spec = _spec([f"[model-{i}]" for i in range(n)] + ['{regex: "special-.*"}'])
    groups = operational_tests(spec, "runbooks/")
    queue_cases = [g for g in groups if g["name"].startswith("queue time high")]
    # one case per SLO, and the fallback threshold's (no SLO covers the test model): nothing skipped
    assert len(queue_cases) == n + 2
    assert calls["fullmatch"] == 0  # the module's pattern-per-call matching is gone
    assert calls["compile"] == 1  # the one regex selector
    # each named model's case expects its own SLO's alert only
    first = next(g for g in queue_cases if g["name"] == "queue time high (latency-0)")
    expected = first["alert_rule_test"][1]["exp_alerts"]
    assert [a["exp_labels"][c.L_SLO] for a in expected] == ["latency-0"]


class _Counted(str):
    """A name that counts the comparisons made with it."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Counted.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


AVAILABILITY = [{"name": "a", "type": "availability", "objective": 99.9, "period": "30d"}]


def test_autoscaling_entries_and_pairs_are_not_compared_with_every_earlier_one() -> None:
    """Each autoscaling entry was compared with every earlier one (deployment and job), each pair's
    name with every earlier pair's: 4,000 of each were 8 million comparisons and 31 s of parsing."""
    n = 2000
    entries = [
        {"deployment": _Counted(f"d-{i}"), "job": _Counted(f"j-{i}"), "max_replicas": 3} for i in range(n)
    ]
    pairs = [{"name": _Counted(f"p-{i}"), "baseline": f"b-{i}", "candidate": f"c-{i}"} for i in range(n)]
    _Counted.compared = 0
    spec = spec_from_mapping(
        {"slos": AVAILABILITY, "autoscaling": entries, "rollout": {"pairs": pairs}}, "s.yaml"
    )
    assert [e.deployment for e in spec.autoscaling] == [f"d-{i}" for i in range(n)]
    assert [p.name for p in spec.rollout.pairs] == [f"p-{i}" for i in range(n)]
    assert _Counted.compared < 3 * n, _Counted.compared


@pytest.mark.parametrize(
    ("clash", "message"),
    [
        # the deployment of [0] and the job of [2]: the first earlier entry sharing either is named
        ({"deployment": "d0", "job": "j2"}, "autoscaling[4] (d0): deployment: autoscaling[0] (d0) scales"),
        # the job of [1] and the deployment of [3]: [1], for its job
        (
            {"deployment": "d3", "job": "j1"},
            "autoscaling[4] (d3): job: autoscaling[1] (d1) scales the servers",
        ),
        # both of [2]: its deployment is named first
        ({"deployment": "d2", "job": "j2"}, "autoscaling[4] (d2): deployment: autoscaling[2] (d2) scales"),
    ],
)
def test_a_clash_names_the_first_earlier_entry_it_shares_a_name_with(
    clash: dict[str, str], message: str
) -> None:
    entries = [{"deployment": f"d{i}", "job": f"j{i}", "max_replicas": 3} for i in range(4)]
    with pytest.raises(SpecError) as err:
        spec_from_mapping(
            {"slos": AVAILABILITY, "autoscaling": [*entries, {**clash, "max_replicas": 3}]}, "s.yaml"
        )
    assert str(err.value).startswith(f"s.yaml: {message}")
