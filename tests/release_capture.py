"""One real Triton release (an unpacked `nvidia-pytriton` wheel) serving the sample models under
traffic, captured into tests/data/releases/<release>/ (compat32).

The repository is the demo's (dynamic batching, a queue, strings, a latency tail, two decoupled
LLM-shaped models, a slow load and three models that fail to load) plus `pipeline`, a one-step
ensemble over `vector_scale`. The capture: the real exporter (`triton-sre export`, a subprocess)
is started first and polls every second; after two of its polls `metrics_1.txt` and `api_1.json`
(index, all-model statistics, each READY model's config) are read, then the traffic below, then
`metrics_2.txt` and `api_2.json`; after two more polls the exporter's own `/metrics` is kept as
`exporter.txt`, and `doctor --format json` and `triage --triton-url --format json` as
`doctor.json` and `triage.json`. tests/test_exporter_releases.py feeds the two captures through the
exporter and checks its figures against the captured statistics.

Run `python tests/release_capture.py OUT_DIR [--wheel /tmp/wheels/0.4.2]` (the folder of an unpacked
wheel; without it, the installed one).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import requests
from corpus import config_pbtxt
from namespacing_capture import ENSEMBLE as ENSEMBLE_PBTXT  # a one-step ensemble, FP32 [8]

from triton_sre import conventions as c
from triton_sre.demo import LLM_MODELS, SAMPLE_REPOSITORY, SLOW_MODEL, TAIL_MODEL, TEXT_ECHO, VECTOR_SCALE
from triton_sre.demo.traffic import (
    drive,
    failing_payload,
    llm_payload,
    slow_model_payload,
    stream_generate,
    vector_scale_payload,
)
from triton_sre.stack.local_triton import LocalTriton, find_server, install_in
from triton_sre.stack.processes import free_ports

ENSEMBLE = "pipeline"
# A decoupled model every release here can load (the demo's LLM-shaped models need the Python backend's
# histogram metrics, MetricFamily.HISTOGRAM, which 2.48 and older lack): COUNT responses per request.
STREAM = "stream_count"
STREAM_PBTXT = """name: "stream_count"
backend: "python"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "COUNT" data_type: TYPE_INT32 dims: [ 1 ] } ]
output [ { name: "INDEX" data_type: TYPE_INT32 dims: [ 1 ] } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
"""
STREAM_PY = """import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            count = int(pb_utils.get_input_tensor_by_name(request, "COUNT").as_numpy()[0])
            for i in range(count):
                time.sleep(0.005)
                out = pb_utils.Tensor("INDEX", np.array([i], dtype=np.int32))
                sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""
STREAMED = (6, 5)  # requests to STREAM over gRPC, responses each
# The same with `async def execute` (as the vLLM backend): doctor's decoupled-compute-time pitfall.
ASYNC_STREAM = "stream_count_async"
ASYNC_STREAM_PY = """import asyncio

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    async def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            count = int(pb_utils.get_input_tensor_by_name(request, "COUNT").as_numpy()[0])
            for i in range(count):
                await asyncio.sleep(0.005)
                out = pb_utils.Tensor("INDEX", np.array([i], dtype=np.int32))
                sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""
# A model that returns its error instead of raising: doctor's python-returned-errors pitfall.
RETURNS_ERROR = "returns_error"
RETURNS_ERROR_PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        error = pb_utils.TritonError("returns_error: refused on purpose")
        return [pb_utils.InferenceResponse(output_tensors=[], error=error) for _ in requests]
"""
RETURNED_ERRORS = 3
# model -> (concurrent clients, requests): what is sent between the two captures
TRAFFIC = {
    VECTOR_SCALE: (8, 160),
    ENSEMBLE: (4, 40),
    SLOW_MODEL: (4, 12),
    TEXT_ECHO: (4, 40),
    TAIL_MODEL: (2, 10),
}
FAILED = {VECTOR_SCALE: 3}  # requests that make the model raise (BACKEND failures), sent one at a time
STREAMS = 4  # generate_stream requests per LLM model
EXPORTER_INTERVAL = 1


def build_repository(root: Path) -> Path:
    repo = root / "repository"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(SAMPLE_REPOSITORY, repo, ignore=shutil.ignore_patterns("__pycache__", "README.md"))
    (repo / ENSEMBLE / "1").mkdir(parents=True)
    (repo / ENSEMBLE / "config.pbtxt").write_text(
        ENSEMBLE_PBTXT.format(name=ENSEMBLE, platform=c.PLATFORM_ENSEMBLE, step=VECTOR_SCALE),
        encoding="utf-8",
    )
    models = {
        STREAM: (STREAM_PBTXT, STREAM_PY),
        ASYNC_STREAM: (STREAM_PBTXT.replace(STREAM, ASYNC_STREAM), ASYNC_STREAM_PY),
        RETURNS_ERROR: (config_pbtxt(RETURNS_ERROR), RETURNS_ERROR_PY),
    }
    for name, (config, code) in models.items():
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "config.pbtxt").write_text(config, encoding="utf-8")
        (repo / name / "1" / "model.py").write_text(code, encoding="utf-8")
    return repo


def stream(grpc_url: str, model: str) -> dict[str, Any]:
    """STREAMED requests to the decoupled model over one gRPC stream: responses received, errors."""
    import queue

    import numpy as np
    import tritonclient.grpc as grpcclient

    requests_, count = STREAMED
    got: queue.Queue[Any] = queue.Queue()
    with grpcclient.InferenceServerClient(grpc_url) as client:
        client.start_stream(callback=lambda result, error: got.put(error or result))
        for _ in range(requests_):
            tensor = grpcclient.InferInput("COUNT", [1], "INT32")
            tensor.set_data_from_numpy(np.array([count], dtype=np.int32))
            client.async_stream_infer(model, [tensor])
        answers: list[Any] = []
        while len(answers) < requests_ * count:  # a model that is not loaded answers once per request
            try:
                answers.append(got.get(timeout=5))
            except queue.Empty:
                break
        client.stop_stream()
    errors = sorted({str(a) for a in answers if isinstance(a, Exception)})
    return {"requests": requests_, "responses": len(answers) - len(errors), "errors": errors}


def answer(response: requests.Response) -> dict[str, Any]:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    return {"status": response.status_code, "body": body}


def read_api(http_url: str, metrics_url: str) -> tuple[str, dict[str, Any]]:
    metrics = requests.get(metrics_url, timeout=30).text
    index = answer(requests.post(f"{http_url}/v2/repository/index", json={}, timeout=30))
    api: dict[str, Any] = {
        "index": index,
        "stats": answer(requests.get(f"{http_url}/v2/models/stats", timeout=30)),
    }
    ready = sorted({e["name"] for e in index["body"] if e.get("state") == c.STATE_READY})
    api["configs"] = {m: answer(requests.get(f"{http_url}/v2/models/{m}/config", timeout=30)) for m in ready}
    return metrics, api


def send_traffic(http_url: str, grpc_url: str) -> dict[str, Any]:
    sent: dict[str, Any] = {}
    for model, (clients, total) in TRAFFIC.items():
        payload = vector_scale_payload() if model == ENSEMBLE else None
        result = drive(http_url, model, clients, requests_total=total, payload=payload)
        sent[model] = {"clients": clients, "ok": result.ok, "failed": result.failed, "errors": result.errors}
    for model, count in FAILED.items():
        result = drive(http_url, model, 1, requests_total=count, payload=failing_payload(model))
        sent[f"{model} (failing)"] = {"ok": result.ok, "failed": result.failed, "errors": result.errors}
    for model in (STREAM, ASYNC_STREAM):
        sent[f"{model} (gRPC stream)"] = stream(grpc_url, model)
    result = drive(http_url, RETURNS_ERROR, 1, requests_total=RETURNED_ERRORS, payload=slow_model_payload())
    sent[f"{RETURNS_ERROR} (returned errors)"] = {
        "ok": result.ok,
        "failed": result.failed,
        "errors": result.errors,
    }
    with requests.Session() as session:
        for model in LLM_MODELS:
            outcomes = [
                stream_generate(session, f"{http_url}/v2/models/{model}/generate_stream", llm_payload(), 30)
                for _ in range(STREAMS)
            ]
            sent[f"{model} (generate_stream)"] = {
                "ok": sum(1 for o in outcomes if o[3] is None),
                "errors": sorted({o[3] for o in outcomes if o[3] is not None}),
                "tokens": sum(o[2] for o in outcomes),
            }
    return sent


def cli(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "triton_sre", *args], capture_output=True, text=True, timeout=120, check=False
    )
    return done.returncode, done.stdout


def exporter_polls(url: str) -> int:
    text = requests.get(url, timeout=10).text
    for line in text.splitlines():
        if line.startswith(c.M_POLL_DURATION + "_count"):
            return int(float(line.split()[-1]))
    return 0


def wait_polls(url: str, more: int) -> None:
    target = exporter_polls(url) + more
    deadline = time.monotonic() + 60
    while exporter_polls(url) < target:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the exporter did not poll {more} more times in 60 s")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--wheel", type=Path, help="folder of an unpacked nvidia-pytriton wheel")
    parser.add_argument("--no-summaries", action="store_true", help="leave out --metrics-config")
    args = parser.parse_args()
    out: Path = args.out.absolute()
    out.mkdir(parents=True, exist_ok=True)
    install = install_in(args.wheel.absolute() / "pytriton") if args.wheel else find_server()
    work = out / "work"
    metrics_config = () if args.no_summaries else ("summary_latencies=true",)
    server = LocalTriton(build_repository(work), workdir=work, install=install, metrics_config=metrics_config)
    with server:
        meta = requests.get(f"{server.http_url}/v2", timeout=10).json()
        port = free_ports(1, "127.0.0.1")[0]
        exporter_url = f"http://127.0.0.1:{port}{c.PATH_METRICS}"
        exporter = subprocess.Popen(
            [sys.executable, "-m", "triton_sre", "export", "--triton-url", server.http_url,
             "--metrics-url", server.metrics_url, "--listen", f"127.0.0.1:{port}",
             "--interval", str(EXPORTER_INTERVAL), "--window", "600"],
            stdout=subprocess.DEVNULL, stderr=(out / "work" / "exporter.log").open("wb"),
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    wait_polls(exporter_url, 2)
                    break
                except requests.RequestException:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            metrics_1, api_1 = read_api(server.http_url, server.metrics_url)
            started = time.monotonic()
            sent = send_traffic(server.http_url, server.grpc_url)
            traffic_s = time.monotonic() - started
            metrics_2, api_2 = read_api(server.http_url, server.metrics_url)
            wait_polls(exporter_url, 2)
            exported = requests.get(exporter_url, timeout=10).text
        finally:
            exporter.terminate()
            exporter.wait(10)
        doctor = cli(
            "doctor", "--triton-url", server.http_url, "--metrics-url", server.metrics_url, "--format", "json"
        )
        triage = cli("triage", "--triton-url", server.http_url, "--format", "json")
    files = {
        "metrics_1.txt": metrics_1,
        "metrics_2.txt": metrics_2,
        "api_1.json": json.dumps(api_1, indent=1) + "\n",
        "api_2.json": json.dumps(api_2, indent=1) + "\n",
        "exporter.txt": exported,
        "doctor.json": doctor[1],
        "triage.json": triage[1],
    }
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    capture = {
        "server": meta,
        "wheel": args.wheel.name if args.wheel else "installed",
        "command": server.read_log().splitlines()[0].removeprefix("# triton-sre LocalTriton: "),
        "traffic": sent,
        "traffic_seconds": round(traffic_s, 2),
        "exit_codes": {"doctor": doctor[0], "triage": triage[0]},
    }
    (out / "capture.json").write_text(json.dumps(capture, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(capture, indent=1))


if __name__ == "__main__":
    main()
