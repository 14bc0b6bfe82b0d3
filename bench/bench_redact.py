"""Redaction over the real-log corpus: how many lines `redact` changes, and its CPU time.

    python bench/bench_redact.py [--repeat 5] [--show 40] [--base main]

Every `.log` file under tests/data/logs (sorted, concatenated) is split into lines and each line
goes through `redact` (`queries=True`, what log records get) and `redact(queries=False)` (stderr
and Slack text). It prints the number of lines each changes, the best CPU time of `--repeat` runs
(`time.process_time`) and the first `--show` changed lines, before and after, for reading.
`--base REV` also loads `triton_sre/redact.py` as it is at git revision REV and times both in
alternation, so a loaded machine slows both alike.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from triton_sre.redact import redact  # noqa: E402

LOGS = ROOT / "tests" / "data" / "logs"
Redact = Callable[..., str]


def corpus() -> list[str]:
    files = sorted(p for p in LOGS.rglob("*.log") if p.is_file())
    text = "".join(p.read_text(encoding="utf-8", errors="replace") for p in files)
    return text.splitlines()


def redact_at(rev: str) -> Redact:
    """`redact` of the module as committed at `rev` (a leaf: it loads on its own)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:triton_sre/redact.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "redact_base.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("redact_base", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.redact  # type: ignore[no-any-return]


def cpu(fn: Redact, lines: list[str], queries: bool) -> tuple[float, list[str]]:
    start = time.process_time()
    out = [fn(line, queries=queries) for line in lines]
    return time.process_time() - start, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--show", type=int, default=40)
    parser.add_argument("--base", help="a git revision to compare with (e.g. main)")
    args = parser.parse_args()
    lines = corpus()
    print(f"{len(lines):,} lines, {sum(map(len, lines)):,} characters")
    versions = {"this tree": redact}
    if args.base:
        versions[args.base] = redact_at(args.base)
    for queries in (True, False):
        best = dict.fromkeys(versions, float("inf"))
        outs: dict[str, list[str]] = {}
        for _ in range(args.repeat):
            for name, fn in versions.items():
                took, outs[name] = cpu(fn, lines, queries)
                best[name] = min(best[name], took)
        for name in versions:
            changed = sum(a != b for a, b in zip(lines, outs[name], strict=True))
            print(f"queries={queries} {name}: {changed} lines changed, best CPU {best[name] * 1000:.1f} ms")
        shown = [(a, b) for a, b in zip(lines, outs["this tree"], strict=True) if a != b]
        for before, after in shown[: args.show]:
            print(f"  - {before[:200]}\n  + {after[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
