"""Benchmark `triton-sre triage` on a large verbose Triton log against `grep -c`.

Generates a verbose-style log (the request lines the real Triton 2.51 writes with ``--log-verbose=1``; a few
``W``/``E`` lines, a status table, a Python traceback now and then) of ``--size-mb`` (default 1024), warms the
page cache, then times

- ``grep -c -E '^E[0-9]{4} ' FILE`` (the floor: a C scan that only counts), and
- ``triton-sre triage --format json FILE`` in a child process (the whole CLI: scan, parse,
  diagnose, render),

and reports throughput as the ratio triage/grep and the triage process's peak RSS
(``resource.getrusage(RUSAGE_CHILDREN)``). Targets: ratio >= 0.25, RSS <= 100 MB.

    python bench/bench_triage.py                 # ~1 GB, a temp file removed afterwards
    python bench/bench_triage.py --size-mb 100   # quick run
    python bench/bench_triage.py --keep /tmp/big.log
"""

# ruff: noqa: E501 - log lines are test data and keep their real length

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 0.25
TARGET_RSS_MB = 100.0


# One inference request as the real Triton 2.51 (nvidia-pytriton wheel, --log-verbose=1) logs it.
REQUEST_LINES = (
    'http_server.cc:4599] "HTTP request: 2 /v2/models/vector_scale/infer"',
    'infer_request.cc:132] "[request id: <id_unknown>] Setting state from INITIALIZED to INITIALIZED"',
    'infer_request.cc:905] "[request id: <id_unknown>] prepared: [0x0x7f69f{n:07x}] request id: , model: '
    "vector_scale, requested version: -1, actual version: 1, flags: 0x0, correlation id: 0, batch size: 1, "
    'priority: 0, timeout (us): 0\\nrequest inputs: INPUT:FP32:[1,8]\\nrequested outputs:\\n"',
    'infer_request.cc:132] "[request id: <id_unknown>] Setting state from INITIALIZED to PENDING"',
    'infer_request.cc:132] "[request id: <id_unknown>] Setting state from PENDING to EXECUTING"',
    'python_be.cc:1310] "model vector_scale, instance vector_scale_0_0, executing 1 requests"',
    'infer_response.cc:174] "add response output: output: OUTPUT, type: FP32, shape: [1,8]"',
    "http_server.cc:1280] \"HTTP using buffer for: 'OUTPUT', size: 32, addr: 0x7f69d{n:07x}\"",
    'http_server.cc:1354] "HTTP release: size 32, addr 0x7f69d{n:07x}"',
    'infer_request.cc:132] "[request id: <id_unknown>] Setting state from EXECUTING to RELEASED"',
    'python_be.cc:2369] "TRITONBACKEND_ModelInstanceExecute: model instance name vector_scale_0_0 released 1 requests"',
)


def _block(seed: int) -> bytes:
    """About 1 MB of verbose request logging, with one failing model and one warning per block."""
    lines: list[str] = []
    size = 0
    n = 0
    while size < 1_000_000:
        us = (seed * 7919 + n * 13) % 1_000_000
        head = f"I1129 16:{(seed // 60) % 60:02d}:{seed % 60:02d}.{us:06d} 16844 "
        line = head + REQUEST_LINES[n % len(REQUEST_LINES)].format(n=n) + "\n"
        lines.append(line)
        size += len(line)
        n += 1
    t = f"1129 16:{(seed // 60) % 60:02d}:{seed % 60:02d}.000001 16844"
    lines.insert(
        len(lines) // 2,
        f"W{t} model_lifecycle.cc:111] \"ignore version directory 'v{seed}' which fails to convert to integral number\"\n",
    )
    lines.insert(
        len(lines) // 3,
        f"E{t} model_lifecycle.cc:642] \"failed to load 'broken_{seed % 50}' version 1: Internal: ModuleNotFoundError: "
        f"No module named 'dep_{seed % 50}'\\n\\nAt:\\n  /models/broken_{seed % 50}/1/model.py(1): <module>\\n\"\n",
    )
    if seed % 100 == 0:
        lines.append(
            f"I{t} pb_stub.cc:298]  Failed to initialize Python stub for auto-complete: SyntaxError: bad\n"
        )
        lines.append("\nAt:\n  /models/stub_model/1/model.py(3): <module>\n")
    return "".join(lines).encode()


def generate(path: Path, size_mb: int) -> int:
    header = (
        b"I1129 16:00:00.000001 2701 server.cc:674] \n"
        b"+--------------+---------+--------+\n| Model        | Version | Status |\n"
        b"+--------------+---------+--------+\n| vector_scale | 1       | READY  |\n"
        b"+--------------+---------+--------+\n"
    )
    written = 0
    with path.open("wb") as f:
        f.write(header)
        written += len(header)
        seed = 0
        blocks = [_block(s) for s in range(16)]
        while written < size_mb * 1024 * 1024:
            block = blocks[seed % len(blocks)]
            f.write(block)
            written += len(block)
            seed += 1
    return written


def _timed(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--keep", type=Path, help="write the log here and keep it")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each (best is reported)")
    args = parser.parse_args(argv)

    tmpdir = None
    if args.keep:
        path = args.keep
    else:
        tmpdir = tempfile.mkdtemp(prefix="bench-triage-")
        path = Path(tmpdir) / "verbose.log"
    try:
        size = generate(path, args.size_mb) if not (args.keep and path.exists()) else path.stat().st_size
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        grep_cmd = ["grep", "-c", "-E", "^E[0-9]{4} ", str(path)]
        triage_cmd = [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json", str(path)]
        grep_s = min(_timed(grep_cmd)[0] for _ in range(args.repeat))
        triage_runs = [_timed(triage_cmd) for _ in range(args.repeat)]
        triage_s = min(t for t, _ in triage_runs)
        report = json.loads(triage_runs[0][1])
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        ratio = grep_s / triage_s
        result = {
            "log_mb": round(size / 1e6, 1),
            "grep_seconds": round(grep_s, 3),
            "grep_mb_per_s": round(size / 1e6 / grep_s, 1),
            "triage_seconds": round(triage_s, 3),
            "triage_mb_per_s": round(size / 1e6 / triage_s, 1),
            "throughput_ratio_vs_grep": round(ratio, 3),
            "peak_rss_mb": round(rss_mb, 1),
            "findings": len(report["findings"]),
            "targets": {"ratio": TARGET_RATIO, "rss_mb": TARGET_RSS_MB},
            "cpus": os.cpu_count(),
        }
        print(json.dumps(result, indent=2))
        return 0 if ratio >= TARGET_RATIO and rss_mb <= TARGET_RSS_MB else 1
    finally:
        if tmpdir:
            path.unlink(missing_ok=True)
            os.rmdir(tmpdir)


if __name__ == "__main__":
    sys.exit(main())
