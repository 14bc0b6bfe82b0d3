"""`python -m triton_sre.stack.run_triton`: the real local Triton as a foreground process.

`triton-sre stack up` runs this detached in its own process group: it starts `LocalTriton` (which
knows how the nvidia-pytriton wheel's parts fit together), writes ``--ready-file`` (JSON: URLs and
the server's pid) once the server answers, and on SIGTERM/SIGINT stops the server, its Python stubs
and their shared memory. Exit code 1 if the server does not start (its log tail on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from triton_sre.files import write_atomic
from triton_sre.shutdown import stop_on_signals


def main(argv: Sequence[str] | None = None) -> int:
    from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

    parser = argparse.ArgumentParser(prog="python -m triton_sre.stack.run_triton")
    parser.add_argument("--model-repository", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--grpc-port", type=int, required=True)
    parser.add_argument("--metrics-port", type=int, required=True)
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument("--startup-timeout", type=float, default=120.0)
    # `triton-sre gameday` loads and unloads models: explicit mode with --load-model=* at startup
    parser.add_argument("--model-control-mode", choices=["none", "explicit", "poll"], default="none")
    parser.add_argument("--load-model", action="append", default=[], help="repeatable (explicit mode)")
    args = parser.parse_args(argv)

    stop = stop_on_signals()
    triton = LocalTriton(
        args.model_repository,
        http_port=args.http_port,
        grpc_port=args.grpc_port,
        metrics_port=args.metrics_port,
        exit_on_error=False,
        model_control_mode=args.model_control_mode,
        load_models=args.load_model,
        workdir=args.workdir,
        startup_timeout=args.startup_timeout,
    )
    try:
        triton.start()
    except LocalTritonError as exc:
        print(f"run_triton: {exc}", file=sys.stderr, flush=True)
        return 1
    try:
        ready = {
            "pid": triton.pid,
            "http_url": triton.http_url,
            "grpc_url": triton.grpc_url,
            "metrics_url": triton.metrics_url,
            "log": str(triton.log_path),
            "startup_seconds": triton.startup_seconds,
        }
        write_atomic(args.ready_file, json.dumps(ready))
        print(
            f"run_triton: tritonserver pid {triton.pid} up on {triton.http_url}", file=sys.stderr, flush=True
        )
        while not stop.wait(1.0):
            if not triton.is_running():
                print(
                    f"run_triton: tritonserver exited with code {triton.returncode}; last lines:\n"
                    f"{triton.log_tail()}",
                    file=sys.stderr,
                    flush=True,
                )
                return 1
        return 0
    finally:
        triton.stop()
        args.ready_file.unlink(missing_ok=True)


if __name__ == "__main__":
    sys.exit(main())
