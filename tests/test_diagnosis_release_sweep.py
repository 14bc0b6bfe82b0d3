"""The diagnosis on real logs of the Triton releases the nvidia-pytriton wheels carry, 2.36-2.51 (releases32).

``releases_faults.CASES`` ran on each release of ``releases_faults.WHEELS``, one server per case; the logs
are committed under ``tests/data/logs/real/releases/<release>/<case>.log``, each headed by the wheel, the
release, the case, its origin and its label (``# expect:``), then the server's command line. The tests read
the captures only: CI needs no older binary.

Capture again (the wheels unzipped under ``<wheels>/<version>/``, e.g. ``pip download --no-deps
nvidia-pytriton==0.4.2`` then ``unzip``; 0.7.0 is the installed one)::

    python tests/test_diagnosis_release_sweep.py capture /tmp/wheels [wheel ...] [--again]  # else the missing
    python tests/test_diagnosis_release_sweep.py relabel        # the headers' labels from releases_faults
    python tests/test_diagnosis_release_sweep.py score          # per release: right / empty / healthy flagged
"""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from accuracy import _HEAD, HEALTHY
from corpus import FIXTURES, build_repository, diagnose_file, run_until_exit
from releases_faults import CASES, FAULTS, OK, WHEELS, label
from runtime_faults import FaultServer, capture_all, run_or_serve, same_both_ways

from triton_sre import conventions as c
from triton_sre.diagnosis.report import Report
from triton_sre.stack.local_triton import find_server, install_in

RELEASES = FIXTURES / "releases"
INSTALLED = "0.7.0"
"""The wheel of the venv (the server every other sweep ran)."""
PORT_TAKEN = "already in use"
SHM_PREFIX = "releases32_{pid}_{case}_"
"""Before 2.45 (r24.04, python_backend#351) the Python backend names its shared-memory regions
``triton_python_backend_shm_region_<n>`` counting from 1 in every server: two servers at once (two captures,
or another session's) collide on them ("File exists"). A prefix of its own keeps each log its own story (its
regions are removed after each capture: LocalTriton sweeps the default prefix's only)."""
STUCK_SECONDS = 15.0
"""How long a server whose model never finishes loading is left before it is stopped."""


def header(path: Path) -> dict[str, str]:
    meta: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        m = _HEAD.match(line)
        if not m:
            break
        meta[m.group(1)] = m.group(2).strip()
    return meta


def capture(wheel: str, case: str, wheels: Path, workdir: Path, attempts: int = 3) -> Path:
    """Run the real server of ``wheel`` on ``case`` and leave its log, headed, under RELEASES."""
    release = WHEELS[wheel]
    fault = CASES[case]
    if wheel == INSTALLED:
        assert importlib.metadata.version("nvidia-pytriton") == INSTALLED
        install = find_server()
    else:
        install = install_in(wheels / wheel / "pytriton")
    expect = label(release, case)
    path = RELEASES / release / f"{case}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(attempts):
        run = workdir / f"{case}-{attempt}"
        path.write_text(
            f"# source: Triton {release}, the tritonserver of the nvidia-pytriton {wheel} wheel (CPU, Python "
            f"{sys.version_info.major}.{sys.version_info.minor} stub), run by "
            f"tests/test_diagnosis_release_sweep.py on {datetime.datetime.now(datetime.UTC).date()}\n"
            f"# expect: {expect or HEALTHY}\n"
            f"# note: case {case} from {fault.origin}; the server's command line follows\n"
        )
        repo = build_repository(run / "repo", {**OK, **fault.models})
        kwargs = dict(fault.server)
        shm = SHM_PREFIX.format(pid=os.getpid(), case=case.replace("-", "_"))
        flag = f"--backend-config=python,shm-region-prefix-name={shm}"
        kwargs["extra_args"] = [*kwargs.get("extra_args", ()), flag]  # type: ignore[misc]
        server = FaultServer(
            repo,
            prepare=fault.prepare,
            workdir=run / "triton",
            log_path=path,
            startup_timeout=STUCK_SECONDS if fault.stuck else 40,
            install=install,
            **kwargs,  # type: ignore[arg-type]
        )
        if fault.runbook is None:
            run_or_serve(server, False, case)
        else:
            run_until_exit(server, 1 if fault.stuck else 40)
        for region in Path("/dev/shm").glob(f"{shm}*"):
            region.unlink(missing_ok=True)
        if PORT_TAKEN not in path.read_text(errors="replace"):
            break
    return path


def captures() -> list[tuple[str, str, Path]]:
    """(release, case, path) of every committed capture."""
    return [
        (release, case, RELEASES / release / f"{case}.log")
        for release in sorted(WHEELS.values(), key=lambda r: tuple(map(int, r.split("."))))
        for case in CASES
    ]


def verdict(report: Report, expect: str | None) -> str:
    """How the first finding answers the label: right, wrong, empty (a failure with no finding), flagged
    (a healthy log with a critical finding: the diagnosis has no error level) or clean."""
    serious = [f for f in report.findings if f.severity == c.IMPACT_CRITICAL]
    if expect is None:
        return "flagged" if serious else "clean"
    if not report.findings:
        return "empty"
    return "right" if report.findings[0].runbook == expect else "wrong"


def score() -> dict[str, Counter[str]]:
    table: dict[str, Counter[str]] = {}
    for release, case, path in captures():
        report = diagnose_file(path)
        answer = verdict(report, label(release, case))
        table.setdefault(release, Counter())[answer] += 1
        if answer not in ("right", "clean"):
            got = [(f.model, f.runbook, f.severity) for f in report.findings[:2]]
            print(f"{release} {case}: {answer}; expected {label(release, case)}, got {got}")
    return table


@pytest.mark.parametrize(
    ("release", "case", "path"), captures(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_release_capture(release: str, case: str, path: Path) -> None:
    assert path.exists(), f"missing capture {path}: run python {Path(__file__).name} capture <wheels>"
    meta = header(path)
    expect = label(release, case)
    assert meta["expect"] == (expect or HEALTHY), f"{path}: header and releases_faults.label disagree"
    assert f"Triton {release}," in meta["source"]
    report = diagnose_file(path)
    answer = verdict(report, expect)
    assert answer in ("right", "clean"), (answer, [(f.model, f.runbook, f.severity) for f in report.findings])
    if expect is not None:
        assert report.findings[0].severity == c.IMPACT_CRITICAL
    same_both_ways(path, report)


QUOTED_FROM = (2, 46)
"""core r24.05 (2.46) quotes and escapes every message (TRITON_SERVER_ESCAPE_LOG_MESSAGES, on by default)."""
_GLOG = re.compile(r'^[IWE]\d{4} [\d:.]+ +\d+ \w+\.cc:\d+\] (?=\S)(")?', re.M)
"""A glog line with a message on it (not a table's empty head line; the Python stub puts two blanks)."""


def test_both_message_shapes_are_among_the_captures() -> None:
    """Before 2.46 every glog message is bare; from 2.46 on, every one is quoted."""
    for release in WHEELS.values():
        text = "".join(path.read_text(errors="replace") for r, _c, path in captures() if r == release)
        quoted = [m.group(1) is not None for m in _GLOG.finditer(text)]
        share = sum(quoted) / len(quoted)
        assert share == (tuple(map(int, release.split(".")[:2])) >= QUOTED_FROM), (release, share)
    assert len(FAULTS) >= 15


def relabel() -> None:
    """Rewrite each capture's ``# expect:`` line from ``releases_faults.label`` (RELEASE_LABELS changed)."""
    for release, case, path in captures():
        lines = path.read_text(errors="replace").splitlines(keepends=True)
        assert lines[1].startswith("# expect: "), path
        lines[1] = f"# expect: {label(release, case) or HEALTHY}\n"
        path.write_text("".join(lines))


def main(argv: list[str]) -> int:
    if argv[:1] == ["relabel"]:
        relabel()
        return 0
    if argv[:1] == ["score"]:
        for release, counts in score().items():
            print(release, dict(counts))
        return 0
    if argv[:1] != ["capture"] or len(argv) < 2:
        print(__doc__)
        return 2
    wheels = Path(argv[1])
    again = "--again" in argv
    with tempfile.TemporaryDirectory() as tmp:
        for wheel in [a for a in argv[2:] if a != "--again"] or list(WHEELS):
            missing = [c for c in CASES if again or not (RELEASES / WHEELS[wheel] / f"{c}.log").exists()]
            capture_all(missing, lambda case, w=wheel: capture(w, case, wheels, Path(tmp) / w), 2)
            print(wheel, WHEELS[wheel], len(missing), "captured")
    shutil.rmtree(FIXTURES / "__pycache__", ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
