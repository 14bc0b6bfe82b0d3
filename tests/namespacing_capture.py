"""Two model repositories, each holding a model named `vector_scale`, on the real Triton with
`--model-namespacing=true`; what Triton then shows, captured into tests/data/namespacing_2.51/.

Each repository also holds an ensemble (`pipeline_a`, `pipeline_b`) whose one step is `vector_scale`:
an ensemble step resolves the model in the ensemble's own namespace, and a request naming
`vector_scale` itself is refused (two identifiers), so the ensembles are the way to reach each one.
`pipeline_a` is sent batches of 2 rows, `pipeline_b` batches of 4, one request at a time: each
`vector_scale` executes once per request, so its batching ratio is the batch size it was sent.

Run `python tests/namespacing_capture.py OUT_DIR` (with the [server] extra) to capture again;
tests/test_namespacing_real_triton.py checks the same facts on a live server.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE

# repository folder -> (its ensemble, the rows per request it is sent)
REPOSITORIES = {"repo_a": ("pipeline_a", 2), "repo_b": ("pipeline_b", 4)}
NAMESPACING_FLAG = "--model-namespacing=true"
FIRST_ROUND = 1  # requests per ensemble before the first /metrics body
SECOND_ROUND = {"repo_a": 3, "repo_b": 5}  # requests per ensemble between the two bodies

# one-step ensemble: format name, platform and step (a model with INPUT, OUTPUT FP32 [8]: vector_scale)
ENSEMBLE = """name: "{name}"
platform: "{platform}"
max_batch_size: 16
input [ {{ name: "INPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
ensemble_scheduling {{ step [ {{ model_name: "{step}" model_version: -1
  input_map {{ key: "INPUT" value: "INPUT" }} output_map {{ key: "OUTPUT" value: "OUTPUT" }} }} ] }}
"""


def build_repositories(root: Path) -> list[Path]:
    """The two repositories under `root` (made afresh), in the order given to Triton."""
    paths = []
    for folder, (ensemble, _rows) in REPOSITORIES.items():
        repo = root / folder
        if repo.exists():
            shutil.rmtree(repo)
        shutil.copytree(
            SAMPLE_REPOSITORY / VECTOR_SCALE,
            repo / VECTOR_SCALE,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        (repo / ensemble / "1").mkdir(parents=True)
        (repo / ensemble / "config.pbtxt").write_text(
            ENSEMBLE.format(name=ensemble, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE), encoding="utf-8"
        )
        paths.append(repo)
    return paths


def triton_arguments(repositories: list[Path]) -> tuple[Path, list[str]]:
    """LocalTriton's repository and extra arguments: the other repositories and namespacing on."""
    first, *others = repositories
    return first, [*(f"--model-repository={path}" for path in others), NAMESPACING_FLAG]


def infer(http_url: str, model: str, rows: int) -> requests.Response:
    body = {"inputs": [{"name": "INPUT", "shape": [rows, 8], "datatype": "FP32", "data": [1.0] * (8 * rows)}]}
    return requests.post(f"{http_url}/v2/models/{model}/infer", json=body, timeout=30)


def send(http_url: str, requests_per_repository: dict[str, int]) -> None:
    for folder, count in requests_per_repository.items():
        ensemble, rows = REPOSITORIES[folder]
        for _ in range(count):
            infer(http_url, ensemble, rows).raise_for_status()


def answer(response: requests.Response) -> dict[str, Any]:
    """An HTTP answer as the fixture keeps it: status and JSON body."""
    return {"status": response.status_code, "body": response.json()}


def capture(http_url: str, metrics_url: str) -> dict[str, Any]:
    """Two /metrics bodies around the second round of traffic, then the HTTP API's answers."""
    send(http_url, dict.fromkeys(REPOSITORIES, FIRST_ROUND))
    first = requests.get(metrics_url, timeout=30).text
    send(http_url, SECOND_ROUND)
    second = requests.get(metrics_url, timeout=30).text
    api = {
        "index": answer(requests.post(f"{http_url}/v2/repository/index", timeout=30)),
        "stats": answer(requests.get(f"{http_url}/v2/models/stats", timeout=30)),
        "stats_vector_scale": answer(requests.get(f"{http_url}/v2/models/{VECTOR_SCALE}/stats", timeout=30)),
        "stats_pipeline_a": answer(requests.get(f"{http_url}/v2/models/pipeline_a/stats", timeout=30)),
        "config_vector_scale": answer(
            requests.get(f"{http_url}/v2/models/{VECTOR_SCALE}/config", timeout=30)
        ),
        "infer_vector_scale": answer(infer(http_url, VECTOR_SCALE, 1)),
    }
    return {"metrics_1": first, "metrics_2": second, "api": api}


def main(out: Path) -> None:
    from triton_sre.stack.local_triton import LocalTriton

    out.mkdir(parents=True, exist_ok=True)
    repository, extra = triton_arguments(build_repositories(out / "repositories"))
    server = LocalTriton(repository, extra_args=extra, workdir=out / "work")
    with server:
        found = capture(server.http_url, server.metrics_url)
    (out / "metrics_1.txt").write_text(found["metrics_1"], encoding="utf-8")
    (out / "metrics_2.txt").write_text(found["metrics_2"], encoding="utf-8")
    (out / "api.json").write_text(json.dumps(found["api"], indent=1) + "\n", encoding="utf-8")
    (out / "server.log").write_text(server.read_log(), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]).absolute())
