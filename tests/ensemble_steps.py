"""A three-step ensemble with a slow batching step, on the real Triton 2.51 (ensembles29).

`pipeline3` = `prep` -> `slow_batch` -> `post`. `prep` and `post` are quick Python models with no
batcher and two instances; `slow_batch` has one instance, a dynamic batcher (max_batch_size 4) and a
fixed cost per execution, so concurrent requests wait in its queue. `load` sends concurrent requests
to the ensemble and samples the pending-requests gauge while they run.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import requests
from live_prometheus import private_prometheus, wait_scraped_and_evaluated_after

from triton_sre import conventions as c
from triton_sre.slo import default_spec
from triton_sre.stack.local_triton import LocalTriton

ENSEMBLE = "pipeline3"
PREP, SLOW, POST = "prep", "slow_batch", "post"
STEPS = (PREP, SLOW, POST)
SLOW_COST_S = 0.05  # slow_batch's cost per execution
SLOW_MAX_BATCH = 4

_MODEL_PY = """import json
import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def initialize(self, args):
        params = json.loads(args["model_config"]).get("parameters", {})
        self.cost = float(params.get("COST_S", {}).get("string_value", "0"))

    def execute(self, requests):
        if self.cost:
            time.sleep(self.cost)
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            out.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT", x + 1)]))
        return out
"""

_STEP = """name: "{name}"
backend: "python"
max_batch_size: {max_batch}
input [ {{ name: "INPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
instance_group [ {{ count: {instances} kind: KIND_CPU }} ]
parameters {{ key: "COST_S" value: {{ string_value: "{cost}" }} }}
{batcher}"""

_ENSEMBLE = """name: "{name}"
platform: "{platform}"
max_batch_size: 4
input [ {{ name: "INPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 8 ] }} ]
ensemble_scheduling {{ step [
  {{ model_name: "{prep}" model_version: -1
     input_map {{ key: "INPUT" value: "INPUT" }} output_map {{ key: "OUTPUT" value: "a" }} }},
  {{ model_name: "{slow}" model_version: -1
     input_map {{ key: "INPUT" value: "a" }} output_map {{ key: "OUTPUT" value: "b" }} }},
  {{ model_name: "{post}" model_version: 1
     input_map {{ key: "INPUT" value: "b" }} output_map {{ key: "OUTPUT" value: "OUTPUT" }} }}
] }}
"""


def build_repository(root: Path) -> Path:
    """The ensemble and its three steps under `root`/repo."""
    repo = root / "repo"
    for name, cost, instances, batcher in (
        (PREP, 0, 2, ""),
        (SLOW, SLOW_COST_S, 1, "dynamic_batching { max_queue_delay_microseconds: 2000 }\n"),
        (POST, 0, 2, ""),
    ):
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "1" / "model.py").write_text(_MODEL_PY, encoding="utf-8")
        config = _STEP.format(
            name=name, max_batch=SLOW_MAX_BATCH, instances=instances, cost=cost, batcher=batcher
        )
        (repo / name / "config.pbtxt").write_text(config, encoding="utf-8")
    (repo / ENSEMBLE / "1").mkdir(parents=True)
    config = _ENSEMBLE.format(name=ENSEMBLE, platform=c.PLATFORM_ENSEMBLE, prep=PREP, slow=SLOW, post=POST)
    (repo / ENSEMBLE / "config.pbtxt").write_text(config, encoding="utf-8")
    return repo


def infer(http_url: str, model: str = ENSEMBLE) -> None:
    body = {"inputs": [{"name": "INPUT", "shape": [1, 8], "datatype": "FP32", "data": [1.0] * 8}]}
    requests.post(f"{http_url}/v2/models/{model}/infer", json=body, timeout=60).raise_for_status()


def load(http_url: str, clients: int, per_client: int, sample: Callable[[], None] | None = None) -> float:
    """`clients` threads each sending `per_client` ensemble requests one after the other; `sample` is
    called every 50 ms while they run. Returns the wall time in seconds. Raises if any request failed."""
    errors: list[BaseException] = []

    def client() -> None:
        try:
            for _ in range(per_client):
                infer(http_url)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        if sample is not None:
            sample()
        time.sleep(0.05)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return time.monotonic() - started


@contextlib.contextmanager
def loaded_pipeline(
    root: Path, clients: int, per_client: int, before_load: Callable[[LocalTriton], None] | None = None
) -> Iterator[tuple[Any, float, float]]:
    """The real Triton serving `build_repository(root)`, scraped with its exporter by a private
    Prometheus (the default spec's rules loaded), after `load` of `clients` x `per_client` requests:
    yields (prom, when the load started, when it stopped: epoch seconds), every process stopped after.
    `before_load(triton)` is called just before the load (to read Triton's statistics then)."""
    spec = default_spec()
    with contextlib.ExitStack() as stack:
        triton = LocalTriton(build_repository(root), workdir=root / "triton")
        triton.start()
        stack.callback(triton.stop)
        prom, _exporter = stack.enter_context(private_prometheus(root, spec, triton, rules=True))
        infer(triton.http_url)
        # a scrape before the load: a counter's first sample taken after it gives no rate
        scraped = f'{c.NV_REQUEST_SUCCESS}{{{c.LABEL_MODEL}="{SLOW}"}} == 1'
        assert prom.wait_for(scraped), "no scrape of Triton before the load"
        if before_load is not None:
            before_load(triton)
        started = time.time()
        load(triton.http_url, clients, per_client)
        stopped = time.time()
        wait_scraped_and_evaluated_after(prom, stopped, spec.triton_job)
        assert prom.wait_for(f'{c.M_ENSEMBLE_STEP_SECONDS}{{{c.L_STEP}="{SLOW}"}}')
        yield prom, started, stopped
