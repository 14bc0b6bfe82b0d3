"""The stack's model loads after the exporter is up (`stack.loads`): paced on the exporter's polls,
and loaded again when the exporter did not see a load (one shorter than the gap between polls)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import requests
from namespacing_capture import ENSEMBLE

from triton_sre import conventions as c
from triton_sre.demo import BROKEN_INIT, SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.stack import loads as stack_loads
from triton_sre.stack.loads import load_every_model

PIPELINE = "pipeline"


def _state(url: str, model: str) -> str:
    index = requests.post(f"{url}/v2/repository/index", json={}, timeout=10).json()
    return next(row.get("state", "") for row in index if row["name"] == model)


@pytest.mark.triton
def test_a_missed_load_is_made_again_and_a_failed_one_is_not(fresh_triton_factory, tmp_path: Path):
    repo = tmp_path / "repo"
    for model in (VECTOR_SCALE, BROKEN_INIT):
        shutil.copytree(SAMPLE_REPOSITORY / model, repo / model)
    triton = fresh_triton_factory(repo, model_control_mode="explicit")
    paced: list[str] = []
    asked: list[str] = []
    said: list[str] = []

    def measured(model: str) -> bool:
        asked.append(model)
        assert _state(triton.http_url, model) == "READY"  # asked after the load, never before
        return asked.count(model) >= 2  # the first load "fell between two polls"

    loads = {
        x.model: x
        for x in load_every_model(
            triton.http_url,
            said.append,
            before_each=lambda: paced.append("poll"),
            measured=measured,
            attempts=3,
        )
    }
    assert loads[VECTOR_SCALE].ok and loads[VECTOR_SCALE].attempts == 2, loads
    assert not loads[BROKEN_INIT].ok and loads[BROKEN_INIT].attempts == 1, loads  # a failure is not retried
    assert asked == [VECTOR_SCALE, VECTOR_SCALE]
    assert len(paced) == 3  # every load, the second one included, waits for a fresh poll
    assert _state(triton.http_url, VECTOR_SCALE) == "READY"
    assert any(f"did not see {VECTOR_SCALE} loading" in line for line in said), said


@pytest.mark.triton
def test_loads_stop_after_the_allowed_attempts(fresh_triton_factory, tmp_path: Path):
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    triton = fresh_triton_factory(repo, model_control_mode="explicit")
    loads = load_every_model(triton.http_url, lambda _: None, measured=lambda _: False, attempts=2)
    assert [(x.model, x.ok, x.attempts) for x in loads] == [(VECTOR_SCALE, True, 2)]
    assert _state(triton.http_url, VECTOR_SCALE) == "READY"  # left loaded: the model serves, unmeasured


@pytest.mark.triton
def test_an_ensemble_is_not_loaded_again(fresh_triton_factory, tmp_path: Path, monkeypatch):
    """journey26: the stack loaded the team's ensemble three times, and each load reloaded its step."""
    repo = tmp_path / "repo"
    shutil.copytree(SAMPLE_REPOSITORY / VECTOR_SCALE, repo / VECTOR_SCALE)
    (repo / PIPELINE / "1").mkdir(parents=True)
    config = ENSEMBLE.format(name=PIPELINE, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE)
    (repo / PIPELINE / "config.pbtxt").write_text(config, encoding="utf-8")
    triton = fresh_triton_factory(repo, model_control_mode="explicit")
    made: list[str] = []
    real_load = stack_loads._load

    def counted(session, url, name, timeout, before_each):
        made.append(name)
        return real_load(session, url, name, timeout, before_each)

    monkeypatch.setattr(stack_loads, "_load", counted)
    said: list[str] = []
    loads = load_every_model(triton.http_url, said.append, measured=lambda _: False, attempts=3)
    assert [(x.model, x.ok, x.attempts) for x in loads] == [(PIPELINE, True, 1), (VECTOR_SCALE, True, 3)]
    assert made == [PIPELINE, VECTOR_SCALE, VECTOR_SCALE, VECTOR_SCALE]  # the ensemble's load made once
    assert any(f"{PIPELINE} is an ensemble" in line for line in said), said
    assert _state(triton.http_url, PIPELINE) == "READY"
