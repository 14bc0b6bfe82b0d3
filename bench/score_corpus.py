"""The corpus total: the first finding of every labelled log under tests/data/logs against its label.

Every ``*.log`` below tests/data/logs whose header has an ``# expect: <runbook id>`` line counts once: a
failure log is right when its first finding's runbook is the label; a log labelled ``healthy`` is right
when it gets no finding at all (stricter than the tests, which allow warnings). Prints ``<right> <logs>``;
``--by-folder`` adds one line per folder. Misses are not listed: the blind sets (``heldout*``) are scored
as a total only, so that nobody tunes on them.

    python bench/score_corpus.py [--by-folder] [--baseline-src DIR]

``--baseline-src DIR`` (``git archive COMMIT triton_sre runbooks | tar -x -C DIR``) scores an older tree on
the same logs, in a child process, and prints its line beside this tree's.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ROOT / "tests" / "data" / "logs"
HEAD = re.compile(r"^# (source|expect|note): (.*)$")
HEALTHY = "healthy"


def label(text: str) -> str | None:
    """The ``# expect:`` of a log's header comments, or None."""
    for line in text.splitlines():
        m = HEAD.match(line)
        if not m:
            return None
        if m.group(1) == "expect":
            return m.group(2).strip()
    return None


def score(src: str) -> dict[str, list[int]]:
    """Per folder (relative to tests/data/logs): [right, logs], with ``src`` first on sys.path."""
    sys.path.insert(0, src)
    from triton_sre.diagnosis.engine import diagnose_events
    from triton_sre.diagnosis.logparse import parse_text

    folders: dict[str, list[int]] = {}
    for path in sorted(LOGS.rglob("*.log")):
        text = path.read_text(errors="replace")
        expect = label(text)
        if expect is None:
            continue
        findings = diagnose_events(parse_text(text)).findings
        right = not findings if expect == HEALTHY else bool(findings) and findings[0].runbook == expect
        tally = folders.setdefault(str(path.parent.relative_to(LOGS)), [0, 0])
        tally[0] += right
        tally[1] += 1
    return folders


def report(name: str, folders: dict[str, list[int]], by_folder: bool) -> None:
    right = sum(r for r, _ in folders.values())
    logs = sum(n for _, n in folders.values())
    print(f"{right} {logs}" + (f"  ({name})" if name else ""))
    if by_folder:
        for folder, (r, n) in sorted(folders.items()):
            print(f"  {folder}: {r}/{n}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--by-folder", action="store_true", help="a line per folder too")
    parser.add_argument("--baseline-src", help="an older source tree to score on the same logs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(score(args.child)))
        return 0
    if args.baseline_src:
        child = [sys.executable, __file__, "--child", args.baseline_src]
        out = subprocess.run(child, capture_output=True, text=True, check=True).stdout
        report("baseline", json.loads(out), args.by_folder)
    report("this tree" if args.baseline_src else "", score(str(ROOT)), args.by_folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
