"""What the report's per-model config gauges rest on, checked on the real Triton 2.51: a reload
that changes a model's config and fails for one of its versions changes the config of none.

`ranker` (`tests/data/report_versions`, `version_policy: { all: {} }`, max_batch_size 4, a batcher
waiting 20 ms) is loaded in two versions; its config is then changed (max_batch_size 8, 1 ms) and
version 2's `initialize` made to raise, and the model reloaded. Triton refuses the load as a whole
(400, "version 2 is at UNAVAILABLE state"): both versions keep serving, both on the previous config,
which the model's and each version's `/config` answer alike. So versions served side by side share
one config (the exporter's gauges per model hold for each version, docs/report.md "Per-version
configs"); were this to change, the report's version rows would need the version's own config.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import requests

from triton_sre.stack.local_triton import LocalTriton

pytestmark = [pytest.mark.triton, pytest.mark.server]  # a private Triton started without the fixtures

REPOSITORY = Path(__file__).parent / "data" / "report_versions"
MODEL = "ranker"
PATHS = (f"/v2/models/{MODEL}/config", *(f"/v2/models/{MODEL}/versions/{v}/config" for v in ("1", "2")))


def _configs(url: str) -> list[tuple[int, int]]:
    """(max_batch_size, max_queue_delay_microseconds) the model's and each version's config answer."""
    seen = []
    for path in PATHS:
        answer = requests.get(url + path, timeout=10)
        assert answer.status_code == 200, (path, answer.text)
        config = answer.json()
        seen.append(
            (config["max_batch_size"], int(config["dynamic_batching"]["max_queue_delay_microseconds"]))
        )
    return seen


def test_a_reload_failing_for_one_version_changes_no_versions_config(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(REPOSITORY, repo, symlinks=False)  # version 2's model.py a file of its own
    triton = LocalTriton(
        repo, model_control_mode="explicit", load_models=[MODEL], workdir=tmp_path / "triton"
    )
    triton.start()
    try:
        url = triton.http_url
        assert _configs(url) == [(4, 20000)] * 3
        config = repo / MODEL / "config.pbtxt"
        text = config.read_text(encoding="utf-8")
        assert "max_batch_size: 4" in text and "max_queue_delay_microseconds: 20000" in text
        config.write_text(text.replace("max_batch_size: 4", "max_batch_size: 8").replace("20000", "1000"))
        model = repo / MODEL / "2" / "model.py"
        head = "    def initialize(self, args):\n"
        model.write_text(model.read_text().replace(head, f"{head}        raise RuntimeError('no load')\n"))
        reload = requests.post(f"{url}/v2/repository/models/{MODEL}/load", json={}, timeout=120)
        assert reload.status_code == 400 and "version 2 is at UNAVAILABLE state" in reload.text, reload.text
        assert _configs(url) == [(4, 20000)] * 3  # neither version took the new config
        index = requests.post(f"{url}/v2/repository/index", json={}, timeout=10).json()
        assert {(row["version"], row["state"]) for row in index} == {("1", "READY"), ("2", "READY")}
        body = {"inputs": [{"name": "INPUT", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
        for version in ("1", "2"):
            answer = requests.post(f"{url}/v2/models/{MODEL}/versions/{version}/infer", json=body, timeout=30)
            assert answer.status_code == 200, (version, answer.text)
    finally:
        triton.stop()
