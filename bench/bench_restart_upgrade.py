"""The exporter across a real Triton upgrade behind the same ports, with no poll between the old server's
stop and the new one's answer (exporter/restarts.py), and what the restart check costs a poll.

    PYTHONPATH=. python bench/bench_restart_upgrade.py --old-wheel /tmp/wheels/0.5.10 [--rows 1000,10000]

`--old-wheel` is an unpacked older `nvidia-pytriton` wheel (`pip download --no-deps nvidia-pytriton==0.5.10`,
unzipped: Triton 2.48); the new server is the installed wheel's (2.51). Both serve the demo's `vector_scale`
and `text_echo` (model control explicit) on the same three ports. Prints one line per poll (up, restarts
counted, the release exported, GET /v2 reads) and the check's time per poll on tables of `--rows` model
versions (dict rows, as a parsed body, and the replayed matrix).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.demo import SAMPLE_REPOSITORY, TEXT_ECHO, VECTOR_SCALE, traffic
from triton_sre.exporter.replay import CounterTable
from triton_sre.exporter.restarts import counts_of, restarted
from triton_sre.exporter.service import Exporter
from triton_sre.exporter.snapshot import ROW_FAMILIES
from triton_sre.stack.local_triton import LocalTriton, install_in

MODELS = (VECTOR_SCALE, TEXT_ECHO)


def _server(workdir: Path, install: object = None, ports: tuple[int, int, int] | None = None) -> LocalTriton:
    http, grpc, metrics = ports or (None, None, None)
    return LocalTriton(
        SAMPLE_REPOSITORY,
        model_control_mode="explicit",
        load_models=MODELS,
        http_port=http,
        grpc_port=grpc,
        metrics_port=metrics,
        workdir=workdir,
        install=install,  # type: ignore[arg-type]
    )


def upgrade(old_wheel: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="restart-upgrade-") as tmp:
        old = _server(Path(tmp) / "old", install_in(old_wheel / "pytriton")).start()
        ports = (old.http_port, old.grpc_port, old.metrics_port)
        settings = ExporterSettings(
            triton_url=old.http_url, metrics_url=old.metrics_url, interval=15, window=600
        )
        exporter = Exporter(settings)
        reads: list[int] = []
        kind = type(exporter.client)
        real = kind.server_metadata
        kind.server_metadata = lambda self: reads.append(1) or real(self)  # type: ignore[method-assign]

        def poll(what: str) -> None:
            exporter.poll_once()
            got = {
                f.name: f.samples for f in text_string_to_metric_families(exporter.metrics_text().decode())
            }
            up = got[c.M_UP][0].value
            restarts = got[c.M_TRITON_RESTARTS.removesuffix("_total")][0].value
            info = [s.labels[c.LABEL_VERSION] for s in got.get(c.M_TRITON_INFO, [])]
            print(f"{what:<44} up={up:.0f} restarts={restarts:.0f} version={info} GET /v2 reads={len(reads)}")

        new = _server(Path(tmp) / "new", ports=ports)  # type: ignore[arg-type]
        try:
            for model in MODELS:
                for _ in range(5):
                    traffic.infer(old.http_url, model)
            poll("old server, after 10 requests")
            poll("old server, idle")
            started = time.monotonic()
            old.stop()
            new.start()
            gap = time.monotonic() - started
            poll(f"new server on the same ports ({gap:.1f} s gap)")
            traffic.infer(new.http_url, VECTOR_SCALE)
            poll("new server, after 1 request")
        finally:
            kind.server_metadata = real  # type: ignore[method-assign]
            old.stop()
            new.stop()


def cost(rows: int, repeat: int = 50) -> None:
    rng = np.random.default_rng(1)
    keys = tuple((f"m{i}", "1") for i in range(rows))
    before = rng.integers(1, 10**6, size=(rows, len(ROW_FAMILIES))).astype(np.float64)
    now = before + rng.integers(0, 100, size=before.shape)
    index = {k: i for i, k in enumerate(keys)}
    tables = CounterTable(keys, index, before), CounterTable(keys, index, now)
    dicts = tuple({k: tuple(m[i].tolist()) for k, i in index.items()} for m in (before, now))
    for name, (a, b) in (("replayed matrix", tables), ("parsed rows", dicts)):
        last = counts_of(a)  # kept from the last poll
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            seen = restarted(last, counts_of(b))  # what a poll adds
            times.append(time.perf_counter() - t0)
        assert not seen
        print(
            f"{rows:>6} model versions, {name:<15}: median {statistics.median(times) * 1e3:.2f} ms per poll"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-wheel", type=Path, help="an unpacked older nvidia-pytriton wheel")
    parser.add_argument("--rows", default="1000,10000")
    args = parser.parse_args()
    if args.old_wheel:
        upgrade(args.old_wheel)
    for rows in (int(r) for r in args.rows.split(",") if r):
        cost(rows)


if __name__ == "__main__":
    main()
