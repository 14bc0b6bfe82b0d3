"""The Argo Rollouts AnalysisTemplate and the Flagger MetricTemplates on a global store (slos.yaml
`cluster_label`), run on a real Prometheus: whether a dynamic batcher runs is read from the exporter's
triton_sre_model_dynamic_batching of the model *in the cluster judged*, as the rules match it on
(model, cluster). Two clusters serve a model of one name, each a canary batching half as much as its
primary at the primary's traffic: east's model runs a dynamic batcher (the ratio is judged: it fails),
west's does not (the ratio is its clients' batch size: not judged). By model name alone, east's
batcher decided west's canary, which then failed both tools. A third cluster, north, serves it without an
exporter (no gauge): read with west, nothing is said of north's model and the ratio is judged."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import pytest
from live_prometheus import Prom
from test_rollout_k8s_split import (
    BATCHING,
    FAILED,
    HALTED,
    NAMESPACE,
    SUCCESSFUL,
    _argo_phase,
    _argo_query,
    _flagger_query,
    counter_lines,
    scraped_store,
)
from test_rollout_k8s_split import spec as shipped_spec

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.rollout.figures import FIGURES
from triton_sre.rollout.k8s import ARG_CLUSTER, JUDGED, NOT_JUDGED, NOT_JUDGED_FLAG, threshold
from triton_sre.slo import Spec

MODEL = "ranker"
EAST, WEST, NORTH = "east", "west", "north"  # north: no exporter scraped (no gauge)
BATCHER = {EAST: 1, WEST: 0}  # the exporter's triton_sre_model_dynamic_batching of MODEL per cluster
# (requests/s, inferences per execution) of the primary / version 1, of the canary / version 2
SIDES = ((50.0, 2.0), (48.0, 1.0))


def spec() -> Spec:
    return dataclasses.replace(shipped_spec(), cluster_label=c.LABEL_CLUSTER)


def _exposition(started: float) -> str:
    elapsed = time.time() - started
    lines = []
    for cluster in (*BATCHER, NORTH):
        pods = (f"{MODEL}-primary-7d9f", f"{MODEL}-5c8b")
        for version, pod, (rps, batching) in zip(("1", "2"), pods, SIDES, strict=True):
            labels = [(c.LABEL_MODEL, MODEL), (c.LABEL_VERSION, version), (c.LABEL_NAMESPACE, NAMESPACE)]
            lines += counter_lines(
                [*labels, ("pod", pod), (c.LABEL_CLUSTER, cluster)], rps, batching, elapsed
            )
        said = pq.equal([(c.LABEL_MODEL, MODEL), (c.LABEL_CLUSTER, cluster)])
        if cluster in BATCHER:
            lines.append(f"{pq.selector(c.M_MODEL_DYNAMIC_BATCHING, said)} {BATCHER[cluster]}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    """A global store's series: each carries its cluster label (written in the page here)."""
    started = time.time()
    with scraped_store(tmp_path_factory.mktemp("rollout-clusters"), lambda: _exposition(started)) as store:
        yield store


def _argo(prom: Prom, cluster: str, at: float, name: str) -> tuple[dict[str, Any], list[float]]:
    return _argo_query(prom, MODEL, at, name, spec(), {ARG_CLUSTER: cluster})


def _flagger(prom: Prom, cluster: str, at: float, name: str) -> list[float]:
    return _flagger_query(prom, MODEL, at, name, spec(), {ARG_CLUSTER: cluster})


def verdicts(prom: Prom, cluster: str, at: float) -> dict[str, tuple[str, list[float]]]:
    """The batching ratio in each tool for `cluster`: (how the tool takes the measurement, its value)."""
    metric, argo = _argo(prom, cluster, at, BATCHING)
    flagger = _flagger(prom, cluster, at, BATCHING)
    side, bound = threshold(next(f for f in FIGURES if f.name == BATCHING), spec().rollout.margins[BATCHING])
    assert side == "min"  # the Canary's thresholdRange for the batching ratio (docs/rollouts.md)
    # scheduler_metrics.go: no values found, or a value below thresholdRange.min, halts advancement
    return {
        "argo": (_argo_phase(metric, argo), argo),
        "flagger": (SUCCESSFUL if flagger and flagger[0] >= bound else HALTED, flagger),
    }


def judged(prom: Prom, cluster: str, at: float) -> dict[str, list[float]]:
    """batching-ratio-judged's value in each tool for `cluster`."""
    _, argo = _argo(prom, cluster, at, c.ROLLOUT_BATCHING_JUDGED)
    return {"argo": argo, "flagger": _flagger(prom, cluster, at, c.ROLLOUT_BATCHING_JUDGED)}


def test_a_cluster_without_a_batcher_is_not_judged_for_a_same_named_model_elsewhere(prom: Prom) -> None:
    """tidy31: west's model runs no dynamic batcher; east's of the same name does. West's canary, half
    the batching at the primary's traffic, was judged on east's gauge and failed (Argo Failed, Flagger
    halted, about 0.5); read on (model, cluster) it answers NOT_JUDGED and passes, flagged not judged."""
    at = time.time() - 1
    assert verdicts(prom, WEST, at) == {
        "argo": (SUCCESSFUL, [NOT_JUDGED]),
        "flagger": (SUCCESSFUL, [NOT_JUDGED]),
    }
    assert judged(prom, WEST, at) == {"argo": [NOT_JUDGED_FLAG], "flagger": [NOT_JUDGED_FLAG]}


def test_the_cluster_with_a_batcher_still_fails_its_worse_canary(prom: Prom) -> None:
    """East's model runs a dynamic batcher: its canary's halved batching is judged and fails, west's
    gauge (0) notwithstanding."""
    at = time.time() - 1
    found = verdicts(prom, EAST, at)
    assert (found["argo"][0], found["flagger"][0]) == (FAILED, HALTED), found
    assert all(len(v) == 1 and 0.45 < v[0] < 0.55 for _, v in found.values()), found
    assert judged(prom, EAST, at) == {"argo": [JUDGED], "flagger": [JUDGED]}


def test_a_model_served_without_the_gauge_keeps_the_ratio_judged(prom: Prom) -> None:
    """tidy32: read over west and north (the cluster arg a regular expression), west's model says no
    dynamic batcher and north's says nothing. The templates answered NOT_JUDGED on west's word alone
    (the gauge joined to the models served left north's out); the guard and `rollout check` judge a
    model the exporter says nothing of, and so do the templates now: both canaries' halved batching fails."""
    at = time.time() - 1
    both = f"{WEST}|{NORTH}"
    found = verdicts(prom, both, at)
    assert (found["argo"][0], found["flagger"][0]) == (FAILED, HALTED), found
    assert all(len(v) == 1 and 0.45 < v[0] < 0.55 for _, v in found.values()), found
    assert judged(prom, both, at) == {"argo": [JUDGED], "flagger": [JUDGED]}
