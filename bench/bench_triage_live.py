"""Benchmark: `triage --triton-url` against a large repository index, under `/usr/bin/time -v`.

A loopback stand-in answers the two endpoints the live triage reads, as Triton 2.51 writes them:
`POST /v2/repository/index` (N models x 3 versions, READY but for one model in 50: UNAVAILABLE with a
load failure's reason, six shapes in turn, each naming its model) and `GET /v2` (server metadata).
No model-control call is answered. N goes 1x, 4x, 16x of `--base` (2,500: 2,500 / 10,000 / 40,000
models).

    python bench/bench_triage_live.py [--base 2500] [--scales 1,4,16]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed

REASONS = (
    "unable to load model '{m}': Invalid argument: model '{m}', tensor 'INPUT0': the model expects 2 "
    "dimensions (shape [-1,16]) but the model configuration specifies 2 dimensions (shape [-1,8])",
    "Internal: ModuleNotFoundError: No module named 'tokenizers_v2'\n\nAt:\n  /models/{m}/1/model.py(3): "
    "<module>\n",
    "failed to load '{m}' version 1: Internal: Unable to initialize shared memory key "
    "'triton_python_backend_shm_region_{m}' to requested size (1048576 bytes). If you are running "
    "Triton inside docker, use '--shm-size' flag to control the shared memory region size.",
    "Invalid argument: unexpected inference output 'OUTPUT0', allowed outputs are: OUTPUT__0",
    "Internal: unable to create stream: the provided PTX was compiled with an unsupported toolchain.",
    "Not found: unable to load shared library: libtorchtrt.so: cannot open shared object file: "
    "No such file or directory",
)


def index_body(models: int) -> bytes:
    entries = []
    for i in range(models):
        name = f"model_{i:05d}"
        for version in ("1", "2", "3"):
            if i % 50 == 7:
                reason = REASONS[(i // 50) % len(REASONS)].format(m=name)
                entries.append({"name": name, "version": version, "state": "UNAVAILABLE", "reason": reason})
            else:
                entries.append({"name": name, "version": version, "state": "READY", "reason": ""})
    return json.dumps(entries).encode()


def serve(index: bytes) -> ThreadingHTTPServer:
    metadata = json.dumps({"name": "triton", "version": "2.51.0", "extensions": ["classification"]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, metadata) if self.path == "/v2" else self._send(404, b'{"error":"not found"}')

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/v2/repository/index":
                self._send(200, index)
            else:  # no model control: load/unload are refused
                self._send(403, b'{"error":"explicit model load / unload is not allowed"}')

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=2500)
    parser.add_argument("--scales", default="1,4,16")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-triage-live-") as tmp:
        for scale in (int(s) for s in args.scales.split(",")):
            models = args.base * scale
            body = index_body(models)
            httpd = serve(body)
            out = Path(tmp) / f"out-{models}.json"
            url = f"http://127.0.0.1:{httpd.server_address[1]}"
            figures = timed(["triage", "--triton-url", url, "--format", "json"], Path(tmp), stdout=out)
            httpd.shutdown()
            found = json.loads(out.read_text()) if out.stat().st_size else {}
            findings = len(found.get("findings", [])) if isinstance(found, dict) else 0
            name = f"triage --triton-url, {models:,} models x 3 versions ({len(body) / 1e6:.1f} MB index)"
            rows.append((f"{name}, {findings:,} findings", figures))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
