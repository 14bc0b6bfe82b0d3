"""What the real Triton 2.51 reports for a three-step ensemble and each step under load (ensembles29).

Starts tritonserver on tests/ensemble_steps.py's repository (pipeline3 = prep -> slow_batch -> post,
slow_batch batching with one instance), sends concurrent requests to the ensemble, samples
nv_inference_pending_request_count every 50 ms while they run, and prints per model: the requests,
executions, average seconds per request of each stage (queue, compute, other) from /metrics' counters,
and the pending gauge's peak. Run: PYTHONPATH=. .venv/bin/python bench/bench_ensemble_steps.py
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ensemble_steps import ENSEMBLE, STEPS, build_repository, infer, load

from triton_sre import conventions as c
from triton_sre.stack.local_triton import LocalTriton
from triton_sre.triton.exposition import parse

MODELS = (ENSEMBLE, *STEPS)
FAMILIES = (
    c.NV_REQUEST_SUCCESS,
    c.NV_INFERENCE_COUNT,
    c.NV_EXEC_COUNT,
    c.NV_REQUEST_DURATION_US,
    *c.STAGE_COUNTERS.values(),
)


def read(metrics_url: str) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for sample in parse(requests.get(metrics_url, timeout=30).text):
        model = dict(sample.labels).get(c.LABEL_MODEL)
        if model in MODELS and (sample.name in FAMILIES or sample.name == c.NV_PENDING_REQUEST_COUNT):
            out[(model, sample.name)] = out.get((model, sample.name), 0.0) + sample.value
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--per-client", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        triton = LocalTriton(build_repository(Path(tmp)), workdir=Path(tmp) / "work")
        triton.start()
        try:
            infer(triton.http_url)  # every step's instance warmed once
            before = read(triton.metrics_url)
            peaks = dict.fromkeys(MODELS, 0.0)

            def sample() -> None:
                now = read(triton.metrics_url)
                for model in MODELS:
                    peaks[model] = max(peaks[model], now.get((model, c.NV_PENDING_REQUEST_COUNT), 0.0))

            wall = load(triton.http_url, args.clients, args.per_client, sample)
            after = read(triton.metrics_url)
        finally:
            triton.stop()
    print(f"{args.clients} clients x {args.per_client} requests to {ENSEMBLE} in {wall:.2f} s")
    stages = [*c.STAGE_COUNTERS, c.STAGE_OTHER]
    header = " ".join(f"{s:>14}" for s in stages)
    print(f"model        requests  execs  infer  request_ms {header}  pending_peak")
    for model in MODELS:
        delta = {f: after.get((model, f), 0.0) - before.get((model, f), 0.0) for f in FAMILIES}
        n = delta[c.NV_REQUEST_SUCCESS]
        ms = {s: delta[f] / n / 1e3 for s, f in c.STAGE_COUNTERS.items()}
        request_ms = delta[c.NV_REQUEST_DURATION_US] / n / 1e3
        ms[c.STAGE_OTHER] = request_ms - sum(ms.values())
        print(
            f"{model:12} {n:8.0f} {delta[c.NV_EXEC_COUNT]:6.0f} {delta[c.NV_INFERENCE_COUNT]:6.0f} "
            f"{request_ms:11.2f} " + " ".join(f"{ms[s]:14.3f}" for s in stages) + f"  {peaks[model]:12.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
