"""Flagger's rendering of a MetricTemplate's query, done by Go's own text/template: the program in
tests/go/flaggerrender (standard library only) builds the template as Flagger's RenderQuery does
(missingkey=error, the model's fields as functions) and is compiled once per test process with
Debian's golang-go (scripts/setup.sh installs it; a missing `go` fails the test, tests/binaries.py).
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from binaries import binary

SOURCE = Path(__file__).resolve().parent / "go" / "flaggerrender"


@functools.cache
def _program() -> str:
    work = tempfile.mkdtemp(prefix="flaggerrender-")
    atexit.register(shutil.rmtree, work, True)
    env = {**os.environ, "GOCACHE": f"{work}/cache", "GOPATH": f"{work}/path", "GOFLAGS": "-mod=mod"}
    env["GOTOOLCHAIN"] = "local"  # never download a toolchain
    out = f"{work}/flaggerrender"
    built = subprocess.run(
        [binary("go"), "build", "-o", out, "."], cwd=SOURCE, env=env, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    return out


def render(
    queries: Sequence[str],
    variables: Mapping[str, str] | None,
    *,
    namespace: str,
    target: str,
    interval: str,
) -> list[tuple[str, str]]:
    """Each query as Flagger renders it for a Canary `target` in `namespace` whose metric has
    `interval` and `templateVariables` (None: the field left out): (query, "") or ("", Go's error)."""
    model = {"name": target, "namespace": namespace, "target": target, "service": target}
    model.update(ingress=target, route=target, interval=interval, variables=variables)
    body = json.dumps({"model": model, "queries": list(queries)})
    done = subprocess.run([_program()], input=body, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [(row.get("query", ""), row.get("error", "")) for row in json.loads(done.stdout)]
