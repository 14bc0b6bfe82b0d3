"""The rule-family registry: every Prometheus rule file `triton-sre generate` writes and its
promtool tests.

To add a family: write `generate/<family>.py` exposing its file name and
`rule_file(spec, base_url) -> RuleFile`, and `generate/tests_<family>.py` exposing
`test_files(spec, base_url) -> {test file name: promtool document}` (its `rule_files` are
`../<file name>`); then add one `Family(...)` to FAMILIES. Groups are ordered for promtool
(`group_eval_order`) across all families, so a family may read another's recorded series.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from triton_sre import conventions as c
from triton_sre.generate import (
    autoscaling,
    capacity,
    llm,
    operational,
    recording,
    rollout,
    slo_rules,
    tests_autoscaling,
    tests_capacity,
    tests_llm,
    tests_operational,
    tests_recording,
    tests_rollout,
    tests_slo,
)
from triton_sre.generate.rulefile import (
    ReadGraph,
    RuleFile,
    TestFile,
    group_names,
    read_graph,
    with_eval_order,
)
from triton_sre.slo import Spec


@dataclass(frozen=True)
class Family:
    """One rule file and the promtool tests that prove it."""

    file: str  # under alerts/
    rules: Callable[[Spec, str], RuleFile]  # (spec, runbook base url) -> rule file
    tests: Callable[[Spec, str], dict[str, TestFile]]  # (spec, base url) -> file under alerts/tests/ -> doc
    # the same, built as it is written (a family with many groups per SLO): TestStream
    stream: Callable[[Spec, str], TestStream] | None = None
    # the rule file's groups one by one, as they are built (a family with a group per SLO); its only key
    groups: Callable[[Spec, str], Iterator[dict[str, Any]]] | None = None


# file under alerts/tests/ -> its document without `tests` (its last key), then the test groups as they are
# built: (file, group) pairs, each file's in order
TestStream = tuple[dict[str, TestFile], Iterator[tuple[str, Any]]]


# Order matters: rule files (and so promtool's group order among independent groups) follow it.
FAMILIES: tuple[Family, ...] = (
    Family(recording.RECORDING_FILE, recording.rule_file, tests_recording.test_files),
    Family(
        slo_rules.SLO_FILE,
        slo_rules.rule_file,
        tests_slo.test_files,
        tests_slo.test_stream,
        slo_rules.group_stream,
    ),
    Family(operational.OPERATIONAL_FILE, operational.rule_file, tests_operational.test_files),
    Family(llm.LLM_FILE, llm.rule_file, tests_llm.test_files),
    Family(capacity.CAPACITY_FILE, capacity.rule_file, tests_capacity.test_files),
    Family(autoscaling.AUTOSCALING_FILE, autoscaling.rule_file, tests_autoscaling.test_files),
    Family(rollout.ROLLOUT_FILE, rollout.rule_file, tests_rollout.test_files),
)


def rule_files(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, RuleFile]:
    """File name -> rule file, for the `alerts/` directory."""
    return {family.file: family.rules(spec, base_url) for family in FAMILIES}


def rule_groups(family: Family, spec: Spec, base_url: str) -> Iterable[dict[str, Any]]:
    """The groups of `family`'s rule file (its only key), built one by one when the family streams them."""
    if family.groups is not None:
        return family.groups(spec, base_url)
    doc = family.rules(spec, base_url)
    if list(doc) != ["groups"]:
        raise ValueError(f"{family.file}: a rule file has only `groups`, not {list(doc)}")
    return doc["groups"]


def test_files(spec: Spec, base_url: str = c.DEFAULT_RUNBOOK_BASE_URL) -> dict[str, TestFile]:
    """File name (under alerts/tests/) -> promtool test document, groups in evaluation order."""
    rules = rule_files(spec, base_url)
    order, names = read_graph(rules).order(), group_names(rules)
    return {
        name: with_eval_order(doc, names, order)
        for family in FAMILIES
        for name, doc in family.tests(spec, base_url).items()
    }


def test_streams(spec: Spec, base_url: str, graph: ReadGraph) -> Iterator[TestStream]:
    """What test_files gives, family by family, each family's documents built only when its turn
    comes, its test groups (TestStream) one by one: `generate` writes each as it comes and holds
    neither the documents nor their text. `graph`: every rule group's reads (ReadGraph), all that the
    tests need of the rule files; not needed once this returns (the order is computed here)."""
    return _streams(spec, base_url, graph.files, graph.order())


def _streams(
    spec: Spec, base_url: str, names: Mapping[str, list[str]], order: list[str]
) -> Iterator[TestStream]:
    for family in FAMILIES:
        heads, groups = (
            family.stream(spec, base_url) if family.stream else _split(family.tests(spec, base_url))
        )
        yield {name: with_eval_order(head, names, order) for name, head in heads.items()}, groups


def _split(docs: dict[str, TestFile]) -> TestStream:
    heads = {}
    for name, doc in docs.items():
        *keys, last = doc
        if last != "tests":
            raise ValueError(f"{name}: `tests` is not the document's last key")
        heads[name] = {key: doc[key] for key in keys}
    return heads, ((name, group) for name, doc in docs.items() for group in doc["tests"])


def warnings(spec: Spec) -> list[str]:
    """What the generated tests leave out for this spec (generate prints them on stderr)."""
    return tests_slo.dropped_scenarios(spec)
