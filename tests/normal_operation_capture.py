"""The error- and warning-level lines the real Triton 2.51 writes while nothing is wrong with it (diag34).

A healthy server (two Python models: ``echo`` and the decoupled ``stream``, loaded with
``--model-control-mode=explicit``) is given what clients and operators do every day, then stopped with
SIGTERM: a good request; bad requests (an unknown input, a wrong shape, a wrong datatype, an unknown
model, an unknown version) over HTTP and gRPC; a streamed request cancelled by its client
(``stop_stream(cancel_requests=True)``); an HTTP client that hangs up while its request runs; an unload and
a reload through model control; the shutdown. Everything the server writes is kept.

Run ``python tests/normal_operation_capture.py OUT_DIR`` (the installed nvidia-pytriton's 2.51); it writes
``normal-operation-verbose.log`` (``--log-verbose=1``) and ``normal-operation.log`` (the default level),
which tests/test_diagnosis_log_levels.py reads: neither may give an error finding.
"""

# ruff: noqa: E501 - model code and request bodies are test data

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests

from triton_sre.stack.local_triton import LocalTriton

ECHO_PY = """import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            data = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            if float(data.flat[0]) < 0:
                time.sleep(1.5)  # a slow request, for the client that hangs up
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT", data)]))
        return out
"""
STREAM_PY = """import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            data = pb_utils.get_input_tensor_by_name(request, "INPUT").as_numpy()
            for _ in range(40):
                if request.is_cancelled():
                    error = pb_utils.TritonError("cancelled by the client", pb_utils.TritonError.CANCELLED)
                    sender.send(pb_utils.InferenceResponse(error=error), flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
                    break
                sender.send(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT", data)]))
                time.sleep(0.05)
            else:
                sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
"""
IO = (
    'input [ { name: "INPUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
    'output [ { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
)
CAPTURES = ("normal-operation-verbose.log", "normal-operation.log")
"""The two captures (``--log-verbose=1``, then the default level): healthy logs, which get no finding."""
MODELS = {
    "echo": (f'name: "echo"\nbackend: "python"\nmax_batch_size: 8\n{IO}dynamic_batching {{ }}\n', ECHO_PY),
    "stream": (
        f'name: "stream"\nbackend: "python"\nmax_batch_size: 0\n{IO}model_transaction_policy {{ decoupled: true }}\n',
        STREAM_PY,
    ),
}


def write_repository(repo: Path) -> None:
    for name, (config, code) in MODELS.items():
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "config.pbtxt").write_text(config)
        (repo / name / "1" / "model.py").write_text(code)


def _infer(url: str, model: str, body: dict) -> int:
    return requests.post(f"{url}/v2/models/{model}/infer", json=body, timeout=10).status_code


def _body(
    name: str = "INPUT", shape: tuple[int, ...] = (1, 4), datatype: str = "FP32", value: float = 1.0
) -> dict:
    count = int(np.prod(shape))
    return {"inputs": [{"name": name, "shape": list(shape), "datatype": datatype, "data": [value] * count}]}


def http_traffic(url: str) -> list[tuple[str, int]]:
    """A good request, then the bad requests a client sends; each with the status Triton answered."""
    codes = [("good", _infer(url, "echo", _body()))]
    codes.append(("unknown input", _infer(url, "echo", _body(name="INPUT_X"))))
    codes.append(("wrong shape", _infer(url, "echo", _body(shape=(1, 5)))))
    codes.append(("wrong datatype", _infer(url, "echo", _body(datatype="INT32"))))
    codes.append(("unknown model", _infer(url, "no_such_model", _body())))
    status = requests.post(f"{url}/v2/models/echo/versions/7/infer", json=_body(), timeout=10).status_code
    codes.append(("unknown version", status))
    codes.append(
        ("malformed json", requests.post(f"{url}/v2/models/echo/infer", data=b"{", timeout=10).status_code)
    )
    return codes


def client_hangs_up(host: str, port: int) -> None:
    """An HTTP client that sends a slow request and closes its socket before the answer."""
    body = b'{"inputs":[{"name":"INPUT","shape":[1,4],"datatype":"FP32","data":[-1,-1,-1,-1]}]}'
    head = (
        f"POST /v2/models/echo/infer HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(head + body)
        time.sleep(0.3)
    time.sleep(2.0)  # the model finishes its slow request after the client left


def grpc_traffic(url: str) -> None:
    """Bad requests over gRPC and a streamed request its client cancels."""
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import InferenceServerException

    client = grpcclient.InferenceServerClient(url)
    for model, name, shape in (
        ("echo", "INPUT_X", [1, 4]),
        ("echo", "INPUT", [1, 5]),
        ("nope", "INPUT", [1, 4]),
    ):
        tensor = grpcclient.InferInput(name, shape, "FP32")
        tensor.set_data_from_numpy(np.ones(shape, dtype=np.float32))
        with contextlib.suppress(InferenceServerException):
            client.infer(model, [tensor])
    received: list[object] = []
    client.start_stream(callback=lambda result, error: received.append(error or result))
    tensor = grpcclient.InferInput("INPUT", [4], "FP32")
    tensor.set_data_from_numpy(np.ones(4, dtype=np.float32))
    client.async_stream_infer("stream", [tensor], request_id="cancel-me")
    time.sleep(0.4)
    client.stop_stream(cancel_requests=True)
    time.sleep(1.0)
    client.close()


def model_control(url: str) -> None:
    for action in ("unload", "load"):
        requests.post(f"{url}/v2/repository/models/echo/{action}", timeout=60).raise_for_status()
    time.sleep(0.5)


def capture(out_dir: Path, verbose: int) -> Path:
    name = CAPTURES[0] if verbose else CAPTURES[1]
    with tempfile.TemporaryDirectory(prefix="diag34-") as tmp:
        repo = Path(tmp) / "repo"
        write_repository(repo)
        server = LocalTriton(
            repo,
            model_control_mode="explicit",
            load_models=tuple(MODELS),
            log_verbose=verbose,
            workdir=Path(tmp) / "work",
        )
        try:
            server.start()
            codes = http_traffic(server.http_url)
            client_hangs_up(server.host, server.http_port or 0)
            grpc_traffic(server.grpc_url)
            model_control(server.http_url)
        finally:
            exit_code = server.stop()
        log = server.read_log()
    target = out_dir / name
    target.write_text(log)
    print(f"{target}: exit {exit_code}, HTTP answers {codes}", file=sys.stderr)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    for verbose in (1, 0):
        capture(args.out_dir, verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
