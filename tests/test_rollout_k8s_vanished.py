"""The Argo Rollouts AnalysisTemplate and the Flagger MetricTemplates on a side that stopped being reported
mid-window (its version unloaded, its pods gone), run on a real Prometheus scraping every second: the side's
series get their staleness markers at the next scrape, and from then on every figure gives nothing
(inconclusive in Argo, a failed check in Flagger), as `rollout check` makes a pass on such a side
inconclusive. Before (probes21), both templates went on averaging the samples left in their rate window and
passed for up to that window (5m in Argo, the Canary's interval in Flagger)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from live_prometheus import Prom
from test_rollout_k8s_split import (
    INCONCLUSIVE,
    NAMESPACE,
    SUCCESSFUL,
    _argo_phase,
    _argo_query,
    _flagger_query,
    counter_lines,
    scraped_store,
)

from triton_sre import conventions as c

MODELS = ("kept", "dropped")  # both sides serve to the end; the candidate (version 2) stops mid-window
FIGURE = c.ROLLOUT_FIG_ERROR_RATIO
stopped: dict[str, float] = {}


def _exposition(started: float) -> str:
    elapsed = time.time() - started
    lines = []
    for model in MODELS:
        for version, pod in (("1", f"{model}-primary-7d9f"), ("2", f"{model}-5c8b")):
            if model == "dropped" and version == "2" and "at" in stopped:
                continue  # unloaded: Triton no longer exposes the version's series
            labels = [(c.LABEL_MODEL, model), (c.LABEL_VERSION, version), (c.LABEL_NAMESPACE, NAMESPACE)]
            lines += counter_lines([*labels, ("pod", pod)], 20.0, 1.5, elapsed)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prom]:
    started = time.time()
    work: Path = tmp_path_factory.mktemp("rollout-vanished")
    with scraped_store(work, lambda: _exposition(started)) as store:
        yield store


def test_a_side_that_stopped_being_reported_gives_no_figure_in_either_template(prom: Prom) -> None:
    before = time.time()
    for model in MODELS:  # both sides reporting: the figure is read and passes
        metric, result = _argo_query(prom, model, before, FIGURE)
        assert _argo_phase(metric, result) == SUCCESSFUL and result == [0.0], result
        assert _flagger_query(prom, model, before, FIGURE) == [0.0]
    stopped["at"] = time.time()
    time.sleep(3)  # a scrape (1 s) or two after the series went: their staleness markers are written
    at = time.time()
    metric, result = _argo_query(prom, "dropped", at, FIGURE)
    assert _argo_phase(metric, result) == INCONCLUSIVE and result == [], result
    assert _flagger_query(prom, "dropped", at, FIGURE) == []  # Flagger: no values found, advancement halted
    metric, result = _argo_query(prom, "kept", at, FIGURE)
    assert _argo_phase(metric, result) == SUCCESSFUL and result == [0.0], result
    assert _flagger_query(prom, "kept", at, FIGURE) == [0.0]
