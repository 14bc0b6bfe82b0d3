"""Start-up footprint of `triton-sre export`: import time, peak RSS, modules loaded.

Starts the real command (`python -X importtime -m triton_sre.cli export`) under `/usr/bin/time -v`
against a Triton URL nobody listens on, waits until its /metrics answers (one poll done, the failure
reported as a metric), stops it with SIGTERM and prints:
- import time: the sum of every module's self time from `-X importtime` (ms);
- peak RSS from `/usr/bin/time -v`;
- how many modules were imported, and which of the heavy libraries among them.

    python bench/bench_export_footprint.py            # the installed / checked-out triton_sre
    PYTHONPATH=/path/to/old/tree python bench/...     # the same for another tree (A/B)
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HEAVY = ("pandas", "matplotlib", "grafanalib", "slack_sdk", "jinja2", "tritonclient", "pytriton")
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_once() -> dict[str, object]:
    port, dead = free_port(), free_port()
    argv = [
        "/usr/bin/time", "-v", sys.executable, "-X", "importtime", "-m", "triton_sre.cli", "export",
        f"--triton-url=http://127.0.0.1:{dead}", f"--listen=127.0.0.1:{port}", "--interval=1",
    ]  # fmt: skip
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=1) as r:
                    r.read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("exporter did not answer /metrics") from None
                time.sleep(0.05)
        # SIGTERM the Python child of /usr/bin/time, so time reports normally.
        child = int(subprocess.check_output(["pgrep", "-P", str(proc.pid)]).split()[0])
        os.kill(child, signal.SIGTERM)
        proc.wait(timeout=30)
        err.seek(0)
        text = err.read().decode(errors="replace")
    self_us = 0
    modules = []
    for line in text.splitlines():
        m = IMPORT_LINE.match(line)
        if m:
            self_us += int(m.group(1))
            modules.append(m.group(4))
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return {
        "import_ms": self_us / 1000,
        "rss_mb": int(rss.group(1)) / 1024 if rss else float("nan"),
        "modules": len(modules),
        "heavy": sorted({m.split(".")[0] for m in modules if m.split(".")[0] in HEAVY}),
    }


def main() -> None:
    runs = [run_once() for _ in range(5)]
    imports = sorted(r["import_ms"] for r in runs)  # type: ignore[type-var]
    rss = sorted(r["rss_mb"] for r in runs)  # type: ignore[type-var]
    print(f"import time (sum of self times): median {imports[2]:.0f} ms, min {imports[0]:.0f} ms")
    print(f"peak RSS: median {rss[2]:.1f} MB")
    print(f"modules imported: {runs[0]['modules']}; heavy libraries among them: {runs[0]['heavy'] or 'none'}")


if __name__ == "__main__":
    main()
