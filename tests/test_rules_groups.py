"""Rule groups at fleet size (issue 13): how the recording rules are split, which group reads which,
and the evaluation order the promtool tests fix (docs/scaling.md, "Which group reads which")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from triton_sre import conventions as c
from triton_sre.generate import rulefile as r
from triton_sre.generate.families import rule_files
from triton_sre.generate.families import test_files as promtool_files
from triton_sre.generate.recording import RECORDING_FILE
from triton_sre.slo import default_spec

REPO = Path(__file__).resolve().parents[1]
FILES = rule_files(default_spec())


def _group(name: str) -> dict:
    return next(g for f in FILES.values() for g in f["groups"] if g["name"] == name)


def _raw_rates(group: dict) -> list[str]:
    """The Triton counters a group reads raw (with `rate(`), in rule order."""
    return [
        family
        for rule in group["rules"]
        for family in c.PER_MODEL_COUNTERS
        if re.search(rf"rate\({re.escape(family)}\{{", rule["expr"])
    ]


def test_each_counter_is_read_raw_once_and_no_recording_group_reads_them_all() -> None:
    groups = [_group(c.GROUP_RECORDING_REQUESTS), _group(c.GROUP_RECORDING_STAGES)]
    read = [family for g in groups for family in _raw_rates(g)]
    assert sorted(read) == sorted(c.PER_MODEL_COUNTERS)
    for g in groups:
        assert 0 < len(_raw_rates(g)) < len(c.PER_MODEL_COUNTERS), g["name"]
    assert _raw_rates(_group(c.GROUP_RECORDING_MODELS)) == []
    # every exporter derivation is still recorded at both levels, the stage share per model version
    recorded = {rule["record"] for g in FILES[RECORDING_FILE]["groups"] for rule in g["rules"]}
    for level in c.REC_LEVELS:
        for name in (
            c.rec_requests(level),
            c.rec_error_ratio(level),
            c.rec_batching_ratio(level),
            c.rec_stage_seconds(level),
            *(c.rec_rate(level, f) for f in c.PER_MODEL_COUNTERS),
        ):
            assert name in recorded, name
    assert c.rec_stage_fraction(c.REC_LEVEL_MODEL) in recorded
    assert c.rec_stage_fraction(c.REC_LEVEL_INSTANCE) not in recorded


def test_group_reads_of_the_shipped_rules() -> None:
    reads = r.group_reads(FILES)
    assert reads[c.GROUP_RECORDING_REQUESTS] == set()
    assert reads[c.GROUP_RECORDING_STAGES] == {c.GROUP_RECORDING_REQUESTS}  # success: the divisor
    assert reads[c.GROUP_RECORDING_MODELS] == {c.GROUP_RECORDING_REQUESTS, c.GROUP_RECORDING_STAGES}
    assert reads[c.GROUP_OPERATIONAL] == {
        c.GROUP_RECORDING_REQUESTS,
        c.GROUP_RECORDING_STAGES,
        c.GROUP_RECORDING_MODELS,
    }
    # the SLO groups record the same names, told apart by `slo`: none reads another's
    for name, deps in reads.items():
        if name.startswith(c.GROUP_SLO_PREFIX) or name in (c.GROUP_LLM, c.GROUP_CAPACITY):
            assert deps == set(), (name, deps)


def test_within_a_group_a_recorded_series_is_read_only_after_the_rule_recording_it() -> None:
    """Prometheus evaluates a group's rules in order: reading a later rule's series would see the
    previous evaluation, the same lag as a cross-group read, but undocumented."""
    for f in FILES.values():
        for g in f["groups"]:
            own = {rule["record"] for rule in g["rules"] if "record" in rule}
            seen: set[str] = set()
            for rule in g["rules"]:
                names = set(re.findall(r"[A-Za-z_:][\w:]*", rule["expr"])) & own
                assert names <= seen | {rule.get("record")}, (g["name"], rule.get("record"), names - seen)
                if "record" in rule:
                    seen.add(rule["record"])


def test_group_reads_resolves_shared_names_by_their_labels_and_eval_order_puts_readers_last() -> None:
    files = {
        "x.yaml": {
            "groups": [
                {"name": "alerts", "rules": [{"alert": "A", "expr": 'part:rate5m{slo="two"} > 1'}]},
                {"name": "one", "rules": [{"record": "part:rate5m", "expr": "x", "labels": {"slo": "one"}}]},
                {"name": "two", "rules": [{"record": "part:rate5m", "expr": "y", "labels": {"slo": "two"}}]},
            ]
        }
    }
    assert r.group_reads(files) == {"alerts": {"two"}, "one": set(), "two": set()}
    assert r.eval_order(files) == ["two", "alerts", "one"]
    files["x.yaml"]["groups"][2]["rules"].append({"alert": "B", "expr": "ALERTS"})
    files["x.yaml"]["groups"][0]["rules"].append({"record": "ALERTS", "expr": "part:rate5m"})
    with pytest.raises(ValueError, match="cycle"):
        r.eval_order(files)


class _CountedName(str):
    """A group name that counts the equality comparisons made with it (a hash lookup makes none
    unless two hashes collide; a list lookup compares with every name before it)."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedName.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_eval_order_does_not_compare_every_group_with_every_placed_one() -> None:
    """Looking each group up in the list of placed ones was quadratic in groups (one per SLO):
    4,000 groups made ~8 million name comparisons. Now a set: about none per group."""
    groups = [
        {"name": _CountedName(f"g{i}"), "rules": [{"record": f"r{i}", "expr": "x"}]} for i in range(4000)
    ]
    groups.append({"name": _CountedName("reader"), "rules": [{"alert": "A", "expr": "r0 + r3999"}]})
    _CountedName.compared = 0
    order = r.eval_order({"x.yaml": {"groups": groups}})
    assert order == [g["name"] for g in groups]
    assert _CountedName.compared < len(groups), _CountedName.compared


# Reads a promtool file leaves without data on purpose, with the reason (a gap to close, not a rule).
UNFED = {
    ("triton-rollout-rules.test.yaml", c.GROUP_LATENCY_QUANTILES): (
        "the guard's p99 figure is not exercised by promtool; rollout check judges it on the real Triton"
    ),
}


@pytest.mark.parametrize("name", sorted(promtool_files(default_spec(), c.DEFAULT_RUNBOOK_BASE_URL)))
def test_each_shipped_promtool_file_fixes_the_order_of_every_group_it_loads(name: str) -> None:
    doc = yaml.safe_load((REPO / "alerts" / "tests" / name).read_text())
    loaded = [g["name"] for path in doc["rule_files"] for g in FILES[Path(path).name]["groups"]]
    assert sorted(doc["group_eval_order"]) == sorted(loaded)
    order = doc["group_eval_order"]
    reads = r.group_reads(FILES)
    groups = {g["name"]: g for f in FILES.values() for g in f["groups"]}
    fed = {s["series"].split("{", 1)[0] for t in doc["tests"] for s in t.get("input_series", [])}
    for i, group in enumerate(order):
        # a group this file loads runs after every loaded group it reads ...
        assert reads[group] & set(loaded) <= set(order[:i]), (name, group)
        # ... and a group it reads but does not load is stood in for by input series it records
        for missing in reads[group] - set(loaded) - {m for (f, m) in UNFED if f == name}:
            recorded = {rule["record"] for rule in groups[missing]["rules"] if "record" in rule}
            assert recorded & fed, (name, group, missing)


def test_docs_table_lists_which_group_reads_which() -> None:
    """docs/scaling.md's table `| group | reads recorded series of |` is the computed graph."""
    text = (REPO / "docs" / "scaling.md").read_text()
    section = text.split("### Which group reads which", 1)[1].split("\n#", 1)[0]
    documented: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].startswith("`triton-sre."):
            documented[cells[0].strip("`")] = set(re.findall(r"`(triton-sre\.[\w.-]+)`", cells[1]))
    computed = {name: deps for name, deps in r.group_reads(FILES).items() if deps}
    assert documented == computed


_RECORDED_NAME = r"[a-z_]+:[a-zA-Z0-9_]+:[a-zA-Z0-9_]+"


def test_a_difference_of_recorded_series_is_read_within_one_group() -> None:
    """Groups are evaluated at different instants: a ratio of two groups' series is off by at most an
    interval's change, but a difference of them is not small (the stage split's `other`, request duration
    minus the stages, showed 2-5 % of the request time whenever traffic changed while the duration was
    recorded by another group). So both sides of every `a - b` of recorded series come from the rule's
    own group."""
    own: dict[str, set[str]] = {}
    for f in FILES.values():
        for g in f["groups"]:
            own[g["name"]] = {rule["record"] for rule in g["rules"] if "record" in rule}
    pair = re.compile(rf"({_RECORDED_NAME})(?:\{{[^}}]*\}})?\s+-\s+({_RECORDED_NAME})")
    checked = 0
    for f in FILES.values():
        for g in f["groups"]:
            for rule in g["rules"]:
                expr = rule["expr"]
                for start in range(len(expr)):  # overlapping pairs: a - b - c checks (a, b) and (b, c)
                    m = pair.match(expr, start)
                    if m and (start == 0 or not re.match(r"[\w:]", expr[start - 1])):
                        assert {m[1], m[2]} <= own[g["name"]], (g["name"], rule.get("record"), m[1], m[2])
                        checked += 1
    assert checked >= 8  # the stage split's `other` at both levels subtracts four stages each
