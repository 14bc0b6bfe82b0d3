"""Capture the real 2.51's ``/metrics`` in its first second and 3 s later (tidy36; the files and what they
show: tests/data/restart_2.51/README.md).

    python tests/restart_fresh_capture.py tests/data/restart_2.51
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import requests

from triton_sre import conventions as c
from triton_sre.demo import SAMPLE_REPOSITORY, VECTOR_SCALE
from triton_sre.stack.local_triton import LocalTriton


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        server = LocalTriton(
            SAMPLE_REPOSITORY, workdir=workdir, model_control_mode="explicit", load_models=(VECTOR_SCALE,)
        )
        server.start()
        try:
            first = requests.get(server.metrics_url, timeout=10).text
            time.sleep(3)
            later = requests.get(server.metrics_url, timeout=10).text
        finally:
            server.stop()
    (out / "metrics_first_second.txt").write_text(first)
    (out / "metrics_3s_later.txt").write_text(later)
    for body in (first, later):
        print([line for line in body.splitlines() if line.startswith(c.NV_CPU_MEMORY_TOTAL_BYTES)])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
