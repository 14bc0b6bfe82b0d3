"""Model namespacing (`--model-namespacing=true`, Triton 24.05+): two repositories each hold a model
named `vector_scale`. The bodies and answers are the real Triton 2.51's (tests/data/namespacing_2.51/,
captured by tests/namespacing_capture.py): the exporter keeps the two models apart by Triton's
`namespace` label, and adds that label to its figures only when Triton gave one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from namespacing_capture import FIRST_ROUND, REPOSITORIES, SECOND_ROUND

from triton_sre import conventions as c
from triton_sre.demo import VECTOR_SCALE
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.doctor.checks import model_memory
from triton_sre.doctor.command import statistics
from triton_sre.doctor.facts import TritonFacts
from triton_sre.exporter.collector import ExporterView, render
from triton_sre.exporter.derive import derive
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.replay import MetricsPlan, same_rows
from triton_sre.exporter.snapshot import Snapshot, index_from_json, keep_family, row_value
from triton_sre.pricing import Pricing
from triton_sre.triton.client import FetchError
from triton_sre.triton.exposition import parse
from triton_sre.triton.skeleton import Skeleton

DATA = Path(__file__).parent / "data" / "namespacing_2.51"
FIRST = (DATA / "metrics_1.txt").read_text(encoding="utf-8")
SECOND = (DATA / "metrics_2.txt").read_text(encoding="utf-8")
API = json.loads((DATA / "api.json").read_text(encoding="utf-8"))


def namespaces(text: str) -> dict[str, str]:
    """Repository folder name -> the `namespace` Triton gave its models in `text`."""
    found = {
        dict(s.labels)[c.LABEL_NAMESPACE]
        for s in parse(text)
        if s.name == c.NV_EXEC_COUNT and c.LABEL_NAMESPACE in dict(s.labels)
    }
    return {Path(ns).name: ns for ns in found}


def without_namespace(text: str) -> str:
    """The same body as Triton writes it without namespacing: no `namespace` label. The ensembles
    keep their distinct names; the two `vector_scale` series then collide, so only repo_a's is kept."""
    repo_a, repo_b = namespaces(text)["repo_a"], namespaces(text)["repo_b"]
    lines = [
        line for line in text.splitlines() if f'namespace="{repo_b}"' not in line or VECTOR_SCALE not in line
    ]
    return "".join(
        line.replace(f'namespace="{repo_a}",', "").replace(f'namespace="{repo_b}",', "") + "\n"
        for line in lines
    )


def snapshot(t: float, text: str) -> Snapshot:
    by_model, gpus = counters_from_samples(parse(text))
    return Snapshot(taken_at=t, counters=by_model, gpu_uuids=gpus, stats=None, index=None)


def test_the_fixture_is_what_the_brief_says_triton_does() -> None:
    """Triton 2.51 labels every per-model series with its repository path; the index carries none
    and the all-model statistics are refused (core's ModelReadyVersions keys them `<ns>::<model>`)."""
    found = namespaces(SECOND)
    assert sorted(found) == sorted(REPOSITORIES)
    assert all(Path(ns).is_absolute() for ns in found.values())
    names = [row.name for row in index_from_json(API["index"]["body"])]
    assert names.count(VECTOR_SCALE) == 2  # two identical rows: the index cannot tell them apart
    assert all(set(entry) == {"name", "version", "state"} for entry in API["index"]["body"])
    assert API["stats"]["status"] == 400
    assert "::" in API["stats"]["body"]["error"]
    assert API["config_vector_scale"]["status"] == 400
    assert API["infer_vector_scale"]["status"] == 400


def test_two_namespaces_are_two_keys_with_their_own_counters() -> None:
    by_model, _ = counters_from_samples(parse(SECOND))
    found = namespaces(SECOND)
    for folder, (_ensemble, rows) in REPOSITORIES.items():
        key = (VECTOR_SCALE, "1", found[folder])
        requests = FIRST_ROUND + SECOND_ROUND[folder]
        assert row_value(by_model[key], c.NV_EXEC_COUNT) == requests
        assert row_value(by_model[key], c.NV_INFERENCE_COUNT) == requests * rows
    assert (VECTOR_SCALE, "1") not in by_model


def test_two_same_named_models_get_their_own_batching_ratio() -> None:
    """Summed, the two models would share one ratio between 2 and 4 (26/8 = 3.25 in this body)."""
    d = derive([snapshot(0.0, FIRST), snapshot(10.0, SECOND)], Pricing(), diagnose_reason)
    found = namespaces(SECOND)
    ratios = {m.namespace: m.batching_ratio for m in d.models if m.model == VECTOR_SCALE}
    assert ratios == {found[folder]: float(rows) for folder, (_e, rows) in REPOSITORIES.items()}
    splits = [m.stage_fraction for m in d.models if m.model == VECTOR_SCALE]
    assert all(split is not None and sum(split.values()) == pytest.approx(1.0) for split in splits)


def test_exported_figures_carry_the_namespace_only_when_triton_gave_one() -> None:
    found = namespaces(SECOND)
    d = derive([snapshot(0.0, FIRST), snapshot(10.0, SECOND)], Pricing(), diagnose_reason)
    ratios = {
        (dict(s.labels)[c.LABEL_MODEL], dict(s.labels).get(c.LABEL_NAMESPACE)): s.value
        for s in parse(render(ExporterView(up=True, derivation=d)))
        if s.name == c.M_BATCHING_RATIO
    }
    assert ratios[(VECTOR_SCALE, found["repo_a"])] == 2.0
    assert ratios[(VECTOR_SCALE, found["repo_b"])] == 4.0

    plain = derive(
        [snapshot(0.0, without_namespace(FIRST)), snapshot(10.0, without_namespace(SECOND))],
        Pricing(),
        diagnose_reason,
    )
    text = render(ExporterView(up=True, derivation=plain))
    assert f"{c.LABEL_NAMESPACE}=" not in text
    assert {m.namespace for m in plain.models} == {""}
    assert {(m.model, m.batching_ratio) for m in plain.models if m.model == VECTOR_SCALE} == {
        (VECTOR_SCALE, 2.0)
    }


def test_the_replayed_fold_keeps_the_namespaces_apart_too() -> None:
    """The service replays repeated bodies with a learned plan: it must key them as the fold does."""
    skeleton = Skeleton.of(SECOND, keep=keep_family)
    assert skeleton is not None
    replayed = MetricsPlan(skeleton, keep=keep_family).replay(SECOND)
    assert replayed is not None
    reference, _ = counters_from_samples(parse(SECOND))
    assert same_rows(replayed[0], reference)
    assert sum(1 for key in reference if key[0] == VECTOR_SCALE) == 2


class _RefusingClient:
    """A Triton client whose all-model statistics fail as 2.51's do with namespacing on."""

    def __init__(self, kind: str = c.FAULT_HTTP_STATUS) -> None:
        self.kind = kind

    def all_stats(self):
        raise FetchError(c.TARGET_STATS, self.kind, API["stats"]["body"]["error"])


def test_doctor_reads_refused_statistics_as_a_finding_under_namespacing() -> None:
    stats, refused = statistics(_RefusingClient(), SECOND)
    assert stats == [] and "namespacing" in refused
    facts = TritonFacts(None, frozenset(), (), frozenset(), frozenset(), stats_refused=refused)
    check = model_memory(facts)
    assert not check.ok and not check.missing and check.found == refused
    # the same answer without namespace labels, or a fault that is no answer, still fails the run
    with pytest.raises(FetchError):
        statistics(_RefusingClient(), without_namespace(SECOND))
    with pytest.raises(FetchError):
        statistics(_RefusingClient(c.FAULT_CONNECTION), SECOND)
