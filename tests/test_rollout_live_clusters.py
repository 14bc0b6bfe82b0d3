"""`rollout check --cluster` and the bot's `/triton rollout <model> <cluster>` on a global store: whether
a dynamic batcher runs is read from the exporter's triton_sre_model_dynamic_batching of the model *in
the cluster judged*, on (model, cluster) as the rules match it. Two clusters serve a model of one name,
each a canary batching half as much as its primary at the same traffic; east's model runs a dynamic
batcher (the ratio is judged: it fails), west's does not (the ratio is its clients' batch size: not
judged). A second model, PIPELINE, is an ensemble in east only (the exporter's triton_sre_model_ensemble):
west's is judged as a model of its own. A real Prometheus holding twenty minutes of backfilled series
(tests/backfilled_prometheus.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from backfilled_prometheus import Series, backfilled
from live_prometheus import Prom

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.prom import Prometheus
from triton_sre.rollout.live import model_answer
from triton_sre.rollout.model import BATCHING_AT_LOWER_LOAD
from triton_sre.slo import default_spec

SCRAPE_S, HISTORY_S = 15.0, 1200.0  # the rollout window (15m) is inside the history
MODEL, EAST, WEST = "ranker", "east", "west"
BATCHER = {EAST: 1.0, WEST: 0.0}  # the exporter's gauge of MODEL per cluster
BATCHING = {"1": 2.0, "2": 1.0}  # inferences per execution of each version, in both clusters
RATE = 5.0  # requests a second of each version
PIPELINE = "pipeline"
ENSEMBLE = {EAST: 1.0, WEST: 0.0}  # the exporter's triton_sre_model_ensemble of PIPELINE per cluster


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    start = time.time() - HISTORY_S
    stamps = [start + SCRAPE_S * i for i in range(int(HISTORY_S / SCRAPE_S))]
    exporter_job = default_spec().exporter_job
    series: list[Series] = []
    for cluster, batcher in BATCHER.items():
        for model, version, batching in [(m, v, b) for m in (MODEL, PIPELINE) for v, b in BATCHING.items()]:
            labels = {c.LABEL_JOB: c.DEFAULT_TRITON_JOB, c.LABEL_MODEL: model, c.LABEL_VERSION: version}
            labels[c.LABEL_CLUSTER] = cluster
            per_s = {c.NV_REQUEST_SUCCESS: RATE, c.NV_INFERENCE_COUNT: RATE, c.NV_EXEC_COUNT: RATE / batching}
            series += [(name, labels, [(t, v * (t - start)) for t in stamps]) for name, v in per_s.items()]
        said = {c.LABEL_JOB: exporter_job, c.LABEL_MODEL: MODEL, c.LABEL_CLUSTER: cluster}
        series.append((c.M_MODEL_DYNAMIC_BATCHING, said, [(t, batcher) for t in stamps]))
        marked = {**said, c.LABEL_MODEL: PIPELINE}
        series.append((c.M_MODEL_ENSEMBLE, marked, [(t, ENSEMBLE[cluster]) for t in stamps]))
    with backfilled(tmp_path_factory.mktemp("prom"), series) as prom:
        yield prom


def _check(
    store: Prom, cluster: str, capsys: pytest.CaptureFixture[str], model: str = MODEL
) -> tuple[int, dict]:
    argv = ["rollout", "check", "--prometheus", store.url, "--model", model, "--baseline-version", "1"]
    code = main([*argv, "--candidate-version", "2", "--cluster", cluster, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _batching(verdict: dict) -> str:
    (figure,) = [f for f in verdict["figures"] if f["name"] == c.ROLLOUT_FIG_BATCHING_RATIO]
    assert figure["candidate"] / figure["baseline"] == pytest.approx(0.5, rel=0.02), figure
    return figure["verdict"]


def test_rollout_check_reads_the_batcher_of_the_cluster_it_judges(
    store: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """tidy31: west's canary was judged on east's gauge (max by model over both clusters) and failed
    on its clients' batch size; now it passes, the ratio not judged, and east's still fails."""
    code, west = _check(store, WEST, capsys)
    assert (code, west["verdict"], _batching(west)) == (c.EXIT_OK, c.ROLLOUT_PASS, BATCHING_AT_LOWER_LOAD), (
        west
    )
    assert "no dynamic batcher" in west["reason"], west["reason"]
    code, east = _check(store, EAST, capsys)
    assert (east["verdict"], _batching(east)) == (c.ROLLOUT_FAIL, c.ROLLOUT_FAIL), east
    assert code != c.EXIT_OK


def test_the_slash_command_reads_the_batcher_of_the_cluster_it_judges(store: Prom) -> None:
    """The bot's `/triton rollout ranker`: each cluster of the store is judged on its own, west with
    its own gauge (it failed on east's before)."""
    lines = model_answer(Prometheus(store.url), MODEL, default_spec())
    heads = {line.split(": ", 1)[0]: line for line in lines if f" vs {MODEL} v1 in " in line}
    assert set(heads) == {f"{MODEL} v2 in {cl} vs {MODEL} v1 in {cl}" for cl in (EAST, WEST)}, lines
    assert f": {c.ROLLOUT_PASS.upper()} " in heads[f"{MODEL} v2 in {WEST} vs {MODEL} v1 in {WEST}"], lines
    assert f": {c.ROLLOUT_FAIL.upper()} " in heads[f"{MODEL} v2 in {EAST} vs {MODEL} v1 in {EAST}"], lines


def test_rollout_check_names_an_ensemble_of_the_cluster_it_judges_only(
    store: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """tidy32: west's pipeline was named an ensemble (judged end to end, its batching ratio left out)
    because east's pipeline is one: live.ensembles matched on the model name alone."""
    _, west = _check(store, WEST, capsys, PIPELINE)
    assert west["ensembles"] == {"baseline": [], "candidate": []}, west
    assert "ensembles (" not in west["reason"], west["reason"]
    _, east = _check(store, EAST, capsys, PIPELINE)
    assert east["ensembles"] == {"baseline": [PIPELINE], "candidate": [PIPELINE]}, east


def test_the_slash_command_names_an_ensemble_of_the_cluster_it_judges_only(store: Prom) -> None:
    """The bot's `/triton rollout pipeline`: east's verdict names the ensemble, west's does not."""
    lines = model_answer(Prometheus(store.url), PIPELINE, default_spec())
    heads = {cl: ln for ln in lines for cl in (EAST, WEST) if ln.startswith(f"{PIPELINE} v2 in {cl} vs")}
    assert set(heads) == {EAST, WEST}, lines
    assert "ensembles (" in heads[EAST], lines
    assert "ensembles (" not in heads[WEST], lines


def test_west_judges_its_pipelines_scheduling_figures_though_east_marks_an_ensemble(
    store: Prom, capsys: pytest.CaptureFixture[str]
) -> None:
    """tidy32: the figures left out for an ensemble (queue-share, batching-ratio) dropped west's pipeline
    too: the exporter's mark was joined on the model name alone. West's pipeline is no ensemble and runs
    no gauge of a batcher (judged at comparable load): its halved batching is measured and fails; east's
    ensemble keeps the figure out."""
    code, west = _check(store, WEST, capsys, PIPELINE)
    assert (west["verdict"], _batching(west)) == (c.ROLLOUT_FAIL, c.ROLLOUT_FAIL), west
    assert code != c.EXIT_OK
    _, east = _check(store, EAST, capsys, PIPELINE)  # no sample: the figure is not in the verdict
    assert c.ROLLOUT_FIG_BATCHING_RATIO not in [f["name"] for f in east["figures"]], east
