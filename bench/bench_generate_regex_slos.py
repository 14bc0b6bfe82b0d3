"""Benchmark: `triton-sre generate` on a spec of N SLOs of a regex each (`team<i>_.*`, availability)
beside one list SLO naming 20 of their models: the SLO rule file's bytes, and generate's CPU and
peak RSS under `/usr/bin/time -v`. TritonSLOModelNotServed of a regex SLO once left out every earlier
regex (`model!~`): rule bytes grew with N². `--src DIR` measures another checkout's package (main).

    python bench/bench_generate_regex_slos.py [--counts 100,500,1000] [--src /work/main]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fleet_inputs import print_table, timed_command

from triton_sre.generate.slo_rules import SLO_FILE

ROOT = Path(__file__).resolve().parent.parent
NAMED = 20


def spec_text(n: int) -> str:
    names = ", ".join(f"team{i}_m" for i in range(min(n, NAMED)))
    lines = [
        "scrape: {triton_job: triton, exporter_job: triton-sre}",
        "slos:",
        f"  - {{name: named, type: availability, models: [{names}], objective: 99.9, period: 30d}}",
    ]
    lines += [
        f'  - {{name: team-{i}, type: availability, models: {{regex: "team{i}_.*"}}, objective: 99.9,'
        " period: 30d}"
        for i in range(n)
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="100,500,1000")
    parser.add_argument("--src", default=str(ROOT), help="the checkout whose triton_sre is measured")
    args = parser.parse_args(argv)
    run = f"import sys; sys.path.insert(0, {args.src!r}); from triton_sre.cli import main; sys.exit(main())"
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-regex-slos-") as tmp:
        for n in (int(s) for s in args.counts.split(",")):
            spec, out = Path(tmp) / f"spec-{n}.yaml", Path(tmp) / f"out-{n}"
            spec.write_text(spec_text(n))
            figures = timed_command(
                [sys.executable, "-c", run, "generate", "--spec", str(spec), "--out", str(out)], Path(tmp)
            )
            size = sum(p.stat().st_size for p in out.rglob(SLO_FILE))
            name = f"{n:,} regex SLOs + a list SLO of {NAMED} ({SLO_FILE} {size / 1e6:.2f} MB)"
            rows.append((name, figures))
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
