"""The gameday's `rollout-worse-version` scenario (docs/gamedays.md): traffic split between two versions
of one model through Triton's versioned inference API, on the real Triton 2.51; and the whole scenario
on the gameday's own stack (Triton, Prometheus with the scaled rules, Alertmanager, the bot, the Slack
stand-in): TritonRolloutRegression fires on the worse version, reaches Slack naming its runbook,
`rollout check` exits 1, and the rollback leaves version 1 serving."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import requests
from test_gameday_smoke import _gameday

from triton_sre import conventions as c
from triton_sre.demo.traffic import TrafficDriver
from triton_sre.gameday import worse_version as wv
from triton_sre.stack.components import STATE_FILE
from triton_sre.stack.local_triton import LocalTriton

SCENARIO = "rollout-worse-version"
REQUESTS = 90


def _stats(url: str, version: str) -> dict[str, Any]:
    answer = requests.get(f"{url}/v2/models/{wv.MODEL}/versions/{version}/stats", timeout=10)
    assert answer.status_code == 200, answer.text
    ((row,),) = [answer.json()["model_stats"]]
    return row


@pytest.mark.server
def test_split_traffic_reaches_each_version_and_the_candidate_is_slower(
    tmp_path: Path, fresh_triton_factory: Callable[..., LocalTriton]
) -> None:
    """TrafficDriver's `versions`: each key's clients send to its own version. Triton's per-version
    statistics count every successful request on the version it was sent to, and the candidate's
    compute per inference is EXTRA_SECONDS above the baseline's (the figure the guard compares)."""
    repository = tmp_path / "models"
    repository.mkdir()
    wv.write_model(repository)
    triton = fresh_triton_factory(repository)
    mix, options = wv.split_traffic()
    driver = TrafficDriver(triton.http_url, mix, max_requests=REQUESTS, **options).start()
    deadline = time.monotonic() + 120
    while driver.running:
        assert time.monotonic() < deadline, driver.results()
        time.sleep(0.2)
    sent = {key: result.ok for key, result in driver.stop().items()}
    assert sum(sent.values()) == REQUESTS and all(sent.values()), driver.results()
    served = {version: _stats(triton.http_url, version) for version in wv.CLIENTS}
    for key, (_, version) in options["versions"].items():
        assert served[version][c.STATS_INFERENCE_STATS]["success"]["count"] == sent[key], (key, served)
    compute = {
        version: row[c.STATS_INFERENCE_STATS]["compute_infer"]["ns"] / row["inference_count"] / 1e9
        for version, row in served.items()
    }
    assert compute[wv.CANDIDATE] - compute[wv.BASELINE] >= wv.EXTRA_SECONDS * 0.9, compute


@pytest.mark.server
@pytest.mark.timeout(900)
def test_a_worse_version_beside_the_old_one_pages_fails_the_check_and_is_rolled_back(tmp_path: Path) -> None:
    workdir = tmp_path / "gd"
    code, out, err = _gameday(["--workdir", str(workdir), "--format", "json", "--scenario", SCENARIO], 720)
    assert code == 0, out + err[-4000:]
    (row,) = json.loads(out)["scenarios"]
    assert row["name"] == SCENARIO and row["detected"] and row["restored"] and row["lost"] == [], row
    assert row["alert"] == c.ALERT_ROLLOUT_REGRESSION
    assert row["runbook"] == row["diagnosis_runbook"] == c.ALERT_RUNBOOKS[c.ALERT_ROLLOUT_REGRESSION], row
    assert 0 < row["seconds_to_alert"] <= row["seconds_to_notify"], row
    assert f"rollout check: exit {c.EXIT_FAILURE}, verdict {c.ROLLOUT_FAIL}" in err
    assert f"load {wv.MODEL} (rolled back to version {wv.BASELINE}): HTTP 200" in err
    assert not (workdir / "stack" / STATE_FILE).exists()  # the stack was stopped
