"""The gameday's rollout scenario: a worse version loaded beside the one serving, traffic split between
the two through Triton's versioned inference API, detected by the continuous guard
(`TritonRolloutRegression`) and by `triton-sre rollout check`, then rolled back.

Model control happens here only through the gameday's Context (its own stack). The restore runs
`rollout check` over the guard's (scaled) window before it rolls back, and fails the scenario when the
check does not exit 1: the pipeline's verdict is proved with the page.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.data import shipped
from triton_sre.gameday.context import Context
from triton_sre.gameday.stack import add_echo_model
from triton_sre.slo import DEFAULT_SPEC_FILE, load_spec

MODEL = "gd_rollout"  # an echo copy with two versions
BASELINE, CANDIDATE = "1", "2"
EXTRA_SECONDS = 0.05  # what the worse version adds to every execution (~0.5 ms for the baseline)
CLIENTS = {BASELINE: 2, CANDIDATE: 1}  # a canary split: the baseline stays the busiest version
THINK_S = 0.02
TRAFFIC = "rollout"
CHECK_TIMEOUT_S = 120.0
PAYLOAD = {"inputs": [{"name": "INPUT", "shape": [4], "datatype": "FP32", "data": [1.0, 2.0, 3.0, 4.0]}]}
SLOWER = "import time\n"  # prepended to the echo source; the sleep goes into execute()


ALL_VERSIONS = "{ all { } }"  # both versions served, as a canary with explicit model control


def set_policy(folder: Path, policy: str) -> None:
    """The model's config with `version_policy: <policy>` (any earlier one replaced)."""
    config = folder / "config.pbtxt"
    kept = [line for line in config.read_text(encoding="utf-8").splitlines() if "version_policy" not in line]
    config.write_text("\n".join([*kept, f"version_policy: {policy}", ""]), encoding="utf-8")


def worse_source() -> bytes:
    """The echo model whose execute() first sleeps EXTRA_SECONDS: same answers, slower compute."""
    source = Context.echo_source().decode()
    marker = "    def execute(self, requests):\n"
    if marker not in source:
        raise RuntimeError("gd_echo's execute() is not where the worse version expects it")
    slower = source.replace(marker, f"{marker}        time.sleep({EXTRA_SECONDS})\n")
    return (SLOWER + slower).encode()


def write_model(repository: Path) -> Path:
    """MODEL in `repository`: version BASELINE the echo model, CANDIDATE the worse one, both served."""
    folder = add_echo_model(repository, MODEL)
    set_policy(folder, ALL_VERSIONS)
    (folder / CANDIDATE).mkdir()
    (folder / CANDIDATE / "model.py").write_bytes(worse_source())
    return folder


def split_traffic() -> tuple[dict[str, int], dict[str, Any]]:
    """TrafficDriver's mix and options for CLIENTS split between the two versions."""
    keys = {version: f"{MODEL} v{version}" for version in CLIENTS}
    options = {
        "versions": {keys[v]: (MODEL, v) for v in CLIENTS},
        "payloads": {keys[v]: PAYLOAD for v in CLIENTS},
        "think_time_s": THINK_S,
    }
    return {keys[v]: n for v, n in CLIENTS.items()}, options


def _load(ctx: Context, what: str) -> None:
    status, error = ctx.load(MODEL)
    ctx.say(f"load {MODEL} ({what}): HTTP {status} {error[:120]}".rstrip())
    if status != 200:
        raise RuntimeError(f"loading {MODEL} ({what}) answered HTTP {status}: {error[:200]}")


def inject(ctx: Context) -> None:
    write_model(ctx.repository)
    _load(ctx, f"versions {BASELINE} and {CANDIDATE}")
    mix, options = split_traffic()
    ctx.traffic(TRAFFIC, mix, **options)


def check_command(ctx: Context) -> list[str]:
    """`triton-sre rollout check` of the candidate against the baseline over the guard's scaled window."""
    spec_file = ctx.stack.opts.slo_file or shipped(DEFAULT_SPEC_FILE)
    window = ctx.stack.scale.rollout_window(load_spec(Path(spec_file)).rollout.window)
    return [
        sys.executable, "-m", "triton_sre", "rollout", "check",
        "--prometheus", ctx.stack.url("prometheus"), "--spec", str(spec_file),
        "--model", MODEL, "--baseline-version", BASELINE, "--candidate-version", CANDIDATE,
        "--window", window, "--format", "json",
    ]  # fmt: skip


def restore(ctx: Context) -> None:
    """`rollout check` first (the worse version still serving), then the runbook's roll back: a version
    policy naming the baseline only, loaded through model control; the split traffic stops."""
    check = subprocess.run(check_command(ctx), capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    try:
        verdict = json.loads(check.stdout).get("verdict")
    except ValueError:
        verdict = None
    ctx.state["rollout_check"] = {"exit": check.returncode, "verdict": verdict}
    ctx.say(f"rollout check: exit {check.returncode}, verdict {verdict}")
    ctx.stop_traffic(TRAFFIC)
    set_policy(ctx.model_dir(MODEL), f"{{ specific {{ versions: [{BASELINE}] }} }}")
    _load(ctx, f"rolled back to version {BASELINE}")
    if check.returncode != c.EXIT_FAILURE:
        detail = (check.stderr or check.stdout).strip()[-300:]
        raise RuntimeError(f"rollout check exited {check.returncode}, not {c.EXIT_FAILURE}: {detail}")
