"""The Argo Rollouts AnalysisTemplate and the Flagger MetricTemplates on a global store (slos.yaml
`cluster_label`), run on a real Prometheus: whether a dynamic batcher runs is read from the exporter's
triton_sre_model_dynamic_batching of the model *in the cluster judged*, as the rules match it on
(model, cluster). Two clusters serve a model of one name, each a canary batching half as much as its
primary at the primary's traffic: east's model runs a dynamic batcher (the ratio is judged: it fails),
west's does not (the ratio is its clients' batch size: not judged). By model name alone, east's
batcher decided west's canary, which then failed both tools."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import flagger_go
import pytest
from k8s_schemas import problems
from live_prometheus import Prom, serve_text, start_prometheus, stop_prometheus, wait_ready
from test_rollout_k8s_split import FAILED, HALTED, SUCCESSFUL, _argo_phase

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.data import shipped
from triton_sre.rollout.figures import FIGURES
from triton_sre.rollout.k8s import (
    ARG_CLUSTER,
    JUDGED,
    NOT_JUDGED,
    NOT_JUDGED_FLAG,
    TEMPLATE_NAME,
    analysis_template,
    metric_templates,
    threshold,
)
from triton_sre.slo import Spec, parse_spec
from triton_sre.stack.processes import free_port

NAMESPACE, MODEL, INTERVAL_S = "ml", "ranker", 20
EAST, WEST = "east", "west"
BATCHER = {EAST: 1, WEST: 0}  # the exporter's triton_sre_model_dynamic_batching of MODEL per cluster
# (requests/s, inferences per execution) of the primary / version 1, of the canary / version 2
SIDES = ((50.0, 2.0), (48.0, 1.0))
BATCHING = c.ROLLOUT_FIG_BATCHING_RATIO


def spec() -> Spec:
    shipped_spec = parse_spec(shipped("slos.yaml").read_text())
    return dataclasses.replace(shipped_spec, cluster_label=c.LABEL_CLUSTER)


def _exposition(started: float) -> str:
    elapsed = time.time() - started
    lines = []
    for cluster, batcher in BATCHER.items():
        pods = (f"{MODEL}-primary-7d9f", f"{MODEL}-5c8b")
        for version, pod, (rps, batching) in zip(("1", "2"), pods, SIDES, strict=True):
            labels = [(c.LABEL_MODEL, MODEL), (c.LABEL_VERSION, version), (c.LABEL_NAMESPACE, NAMESPACE)]
            labels += [("pod", pod), (c.LABEL_CLUSTER, cluster)]
            counters = {
                c.NV_REQUEST_SUCCESS: rps,
                c.NV_REQUEST_FAILURE: 0.0,
                c.NV_INFERENCE_COUNT: rps,
                c.NV_EXEC_COUNT: rps / batching,
            }
            lines += [
                f"{pq.selector(name, pq.equal(labels))} {per_s * elapsed:.3f}"
                for name, per_s in counters.items()
            ]
        said = pq.equal([(c.LABEL_MODEL, MODEL), (c.LABEL_CLUSTER, cluster)])
        lines.append(f"{pq.selector(c.M_MODEL_DYNAMIC_BATCHING, said)} {batcher}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    work = tmp_path_factory.mktemp("rollout-clusters")
    started = time.time()
    server = serve_text(lambda: _exposition(started))
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [  # a global store's series: each carries its cluster label (in the page here)
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{server.server_address[1]}"]}]}
            for job in (c.DEFAULT_TRITON_JOB, spec().exporter_job)
        ],
    }
    port = free_port()
    proc, log = start_prometheus(work, config, port)
    try:
        store = wait_ready(proc, work, port)
        full = f"count_over_time(up{{job={pq.q(c.DEFAULT_TRITON_JOB)}}}[{INTERVAL_S}s]) >= {INTERVAL_S - 2}"
        deadline = time.monotonic() + INTERVAL_S + 30
        while not store.query(full):
            assert time.monotonic() < deadline, (work / "prometheus.log").read_text()
            time.sleep(1)
        yield store
    finally:
        stop_prometheus(proc, log)
        server.shutdown()
        server.server_close()


def _answer(prom: Prom, query: str, at: float) -> list[float]:
    return [float(row["value"][1]) for row in prom.query(query, at)]


def _argo(prom: Prom, cluster: str, at: float, name: str) -> tuple[dict[str, Any], list[float]]:
    template = analysis_template(spec())
    assert problems(template) == []
    (metric,) = [m for m in template["spec"]["metrics"] if m["name"] == name]
    args = {"model": MODEL, "baseline-version": "1", "candidate-version": "2", ARG_CLUSTER: cluster}
    query = metric["provider"]["prometheus"]["query"]
    for arg, value in args.items():  # Argo substitutes {{args.NAME}} as plain text
        query = query.replace(f"{{{{args.{arg}}}}}", value)
    assert "{{" not in query, query
    return metric, _answer(prom, query, at)


def _flagger(prom: Prom, cluster: str, at: float, name: str) -> list[float]:
    (template,) = [t for t in metric_templates(spec()) if t["metadata"]["name"] == f"{TEMPLATE_NAME}-{name}"]
    assert problems(template) == []
    ((query, error),) = flagger_go.render(
        [template["spec"]["query"]],
        {ARG_CLUSTER: cluster},
        namespace=NAMESPACE,
        target=MODEL,
        interval=f"{INTERVAL_S}s",
    )
    assert not error, error
    return _answer(prom, query, at)


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
