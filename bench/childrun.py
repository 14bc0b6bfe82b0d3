"""Shared by the in-process benches that measure each size in a child process of a chosen checkout
(fleet34's `bench_report_slo_fleet.py`, `bench_doctor_llm_slos.py`, `bench_bot_outbox_drain.py`)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def add_src_and_child(parser: argparse.ArgumentParser, **child: Any) -> None:
    """`--src DIR` (the checkout whose package runs) and the hidden `--child` a size's process gets."""
    parser.add_argument("--src", type=Path, help="checkout whose package runs (default: this one)")
    parser.add_argument("--child", help=argparse.SUPPRESS, **child)


def run_child(script: str, arguments: list[str], src: Path | None) -> dict[str, Any]:
    """`script ARGUMENTS` run with `src` (default: this checkout) first on PYTHONPATH: its last line, JSON."""
    root = (src or Path(__file__).resolve().parent.parent).resolve()
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, script, *arguments], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])
