"""The overview dashboard shows which step of an ensemble queues (ensembles29): its Latency row's
queries, with Grafana's variables filled in, on a real Prometheus (the generated rules loaded) scraping
the real Triton 2.51 and the exporter, under load on tests/ensemble_steps.py's pipeline3.

Before: the latency split summed the ensemble with its steps, and Triton counts the steps' queue under
none of the ensemble's stages, so a third of the request time read "other" (as much as the queue); the
queue panel gave the ensemble its hand-off to the first step (about 1 us a request) while slow_batch
queued 140 ms.
"""

from __future__ import annotations

from typing import Any

import pytest
from ensemble_steps import ENSEMBLE, POST, PREP, SLOW, STEPS, loaded_pipeline
from grafana_vars import fill

from triton_sre import conventions as c
from triton_sre.generate.dashboards import dashboards, iter_targets
from triton_sre.slo import default_spec

pytestmark = [pytest.mark.triton, pytest.mark.server]

CLIENTS, PER_CLIENT = 16, 20


def panel_queries(title: str, model: str, uid: str = c.UID_OVERVIEW_DASHBOARD) -> dict[str, str]:
    """legend -> query of the panel `title` of the dashboard `uid` (the overview), `model` selected."""
    spec = default_spec()
    board = next(b for b in dashboards(spec).values() if b["uid"] == uid)
    texts = {
        "job": spec.triton_job,
        "instance": ".*",
        "model": model,
        "exporter_job": spec.exporter_job,
        "__rate_interval": "5m",
    }
    found = {t["legendFormat"]: fill(t["expr"], texts) for p, t in iter_targets(board) if p["title"] == title}
    assert found, title
    return found


def values(prom: Any, expr: str, *labels: str) -> dict[tuple[str, ...], float]:
    return {tuple(r["metric"].get(k, "") for k in labels): float(r["value"][1]) for r in prom.query(expr)}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("ensemble-steps-live")
    with loaded_pipeline(root, CLIENTS, PER_CLIENT) as (prom, _started, _stopped):
        yield prom


def test_the_queue_panel_gives_an_ensemble_its_steps_queue(loaded: Any) -> None:
    (query,) = panel_queries("Queue time per request", ".*").values()
    queue = {model: v for (model,), v in values(loaded, query, c.LABEL_MODEL).items()}
    print(f"queue per request by model: {queue}")
    assert set(queue) == {ENSEMBLE, *STEPS}
    assert queue[SLOW] > 0.02
    # the ensemble's queue is its steps' (the exporter's window and rate5m both hold the whole load)
    assert queue[ENSEMBLE] == pytest.approx(sum(queue[s] for s in STEPS), rel=0.25)
    (alone,) = panel_queries("Queue time per request", ENSEMBLE).values()
    assert values(loaded, alone, c.LABEL_MODEL) == {(ENSEMBLE,): queue[ENSEMBLE]}


def test_the_latency_split_reads_the_steps_queue_as_queue_not_other(loaded: Any) -> None:
    split = {}
    for legend, query in panel_queries("Latency split by stage", ".*").items():
        (split[legend],) = values(loaded, query).values()
    print(f"latency split: {split}")
    assert split[c.STAGE_QUEUE] > 0.01
    assert split[c.STAGE_OTHER] < split[c.STAGE_QUEUE] / 10


def test_the_step_panel_names_the_step_that_queues(loaded: Any) -> None:
    (query,) = panel_queries("Ensemble time by step", ".*").values()
    steps = values(loaded, query, c.LABEL_MODEL, c.L_STEP, c.L_STAGE)
    assert {(m, step) for m, step, _stage in steps} == {(ENSEMBLE, s) for s in STEPS}
    queues = {step: v for (_m, step, stage), v in steps.items() if stage == c.STAGE_QUEUE}
    assert max(queues, key=queues.__getitem__) == SLOW
    assert queues[SLOW] > 10 * max(queues[PREP], queues[POST])



def test_the_model_dashboard_draws_an_ensembles_steps_and_nothing_for_a_step(loaded: Any) -> None:
    (query,) = panel_queries("Time by step", ENSEMBLE, c.UID_MODEL_DASHBOARD).values()
    steps = values(loaded, query, c.LABEL_VERSION, c.L_STEP, c.L_STAGE)
    assert {step for _v, step, _stage in steps} == set(STEPS)
    queues = {step: v for (_v, step, stage), v in steps.items() if stage == c.STAGE_QUEUE}
    assert max(queues, key=queues.__getitem__) == SLOW
    (query,) = panel_queries("Time by step", SLOW, c.UID_MODEL_DASHBOARD).values()
    assert values(loaded, query) == {}
