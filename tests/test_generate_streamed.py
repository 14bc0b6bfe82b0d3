"""`generate` at thousands of SLOs: each document is written as it is built and dropped, the rule
files are built once, and nothing reaches --out unless every file rendered (bench/RESULTS.md,
"generate without holding every document")."""

from __future__ import annotations

import argparse
import dataclasses
import gc
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from triton_sre import conventions as c
from triton_sre.generate import dashboards, families, slo_models, slo_rules, tests_slo
from triton_sre.generate.command import run_generate
from triton_sre.slo import load_spec, parse_spec
from triton_sre.stack.render import K8S_PROMETHEUSRULE_FILE, deploy_files

_SLO = "{{name: a{i}, type: availability, models: [m{i}], objective: 99.9, period: 30d, min_request_rate: 1}}"


def _args(tmp_path: Path, slos: int, out: Path, check: bool = False) -> argparse.Namespace:
    spec = tmp_path / f"slos-{slos}.yaml"
    spec.write_text("slos:\n" + "".join(f"  - {_SLO.format(i=i)}\n" for i in range(slos)), encoding="utf-8")
    return argparse.Namespace(spec=spec, out=out, runbook_base_url=c.DEFAULT_RUNBOOK_BASE_URL, check=check)


def _test_groups_alive() -> int:
    """promtool test groups (the largest documents generate builds) alive now."""
    return sum(1 for o in gc.get_objects() if type(o) is dict and "input_series" in o)


def test_the_slo_tests_are_held_one_slo_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """All the SLO family's test groups were built before the first was written: at 10,000 SLOs
    they were the largest holder. Now each SLO's are written as they are built, then dropped."""
    built: list[int] = []
    alive: list[int] = []
    scenarios = tests_slo.slo_scenarios

    def counted(*args: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        alive.append(_test_groups_alive())
        fast, slow = scenarios(*args)
        built.append(len(fast) + len(slow))
        return fast, slow

    monkeypatch.setattr(tests_slo, "slo_scenarios", counted)
    gc.collect()
    before = _test_groups_alive()  # held by earlier tests of this process (a failed test's traceback)
    assert run_generate(_args(tmp_path, 30, tmp_path / "out")) == c.EXIT_OK
    assert len(built) == 30 and sum(built) >= 30 * 10
    # before an SLO's groups are built, only the previous SLO's may still be alive
    assert max(alive) - before <= max(built), (before, alive, built)


def test_the_rule_files_are_built_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """deploy/'s PrometheusRule is written from the rule groups alerts/ is written from (it built
    them all a second time, on top of everything held): each family's rules are built once, as a
    whole document or (the SLO family) as a stream of groups."""
    calls: dict[str, int] = {}

    def counting(family: families.Family) -> families.Family:
        def count(build: Any) -> Any:
            def built(spec: Any, base_url: str) -> Any:
                calls[family.file] = calls.get(family.file, 0) + 1
                return build(spec, base_url)

            return built

        groups = None if family.groups is None else count(family.groups)
        return dataclasses.replace(family, rules=count(family.rules), groups=groups)

    monkeypatch.setattr(families, "FAMILIES", tuple(counting(f) for f in families.FAMILIES))
    assert run_generate(_args(tmp_path, 3, tmp_path / "out")) == c.EXIT_OK
    assert calls == {f.file: 1 for f in families.FAMILIES}


def _slo_rule_groups_alive() -> int:
    """The SLO family's rule groups (one per SLO) alive now."""
    prefix = c.slo_group("")
    return sum(
        1
        for o in gc.get_objects()
        if type(o) is dict and "rules" in o and str(o.get("name", "")).startswith(prefix)
    )


def test_the_slo_rule_groups_are_held_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The SLO rule file (a group per SLO) was built whole and held while alerts/ and deploy/'s
    PrometheusRule were written from it: the largest document left at 10,000 SLOs (~17 kB a group).
    Now each group is written to both files as it is built, then dropped; the promtool tests keep
    only what their evaluation order needs (rulefile.ReadGraph)."""
    alive: list[int] = []
    stream = slo_rules.group_stream

    def counted(spec: Any, base_url: str) -> Any:
        for group in stream(spec, base_url):
            alive.append(_slo_rule_groups_alive())
            yield group

    now = tuple(
        dataclasses.replace(f, groups=counted) if f.groups is stream else f for f in families.FAMILIES
    )
    monkeypatch.setattr(families, "FAMILIES", now)
    out = tmp_path / "out"
    before = _slo_rule_groups_alive()  # another test's (a module's shipped rule files), if any
    assert run_generate(_args(tmp_path, 30, out)) == c.EXIT_OK
    assert len(alive) == 30
    assert max(alive) - before <= 2, (before, alive)  # the one just built, and the one before it at most
    slo_file = (out / "alerts" / slo_rules.SLO_FILE).read_text(encoding="utf-8")
    assert all(f"name: {c.slo_group(f'a{i}')}\n" in slo_file for i in range(30))
    # the PrometheusRule written a group at a time is the one deploy_files renders whole
    spec = load_spec(tmp_path / "slos-30.yaml")
    whole = deploy_files(spec, c.DEFAULT_RUNBOOK_BASE_URL)[f"{c.DEPLOY_DIR}/{K8S_PROMETHEUSRULE_FILE}"]
    assert (out / c.DEPLOY_DIR / K8S_PROMETHEUSRULE_FILE).read_text(encoding="utf-8") == whole


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("existing", [True, False], ids=["over-a-previous-run", "into-a-new-directory"])
def test_a_failure_while_rendering_leaves_out_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    """Files are written as they are rendered, to temp files: when a later one fails (here the
    dashboards, rendered last), none is renamed into place, and no temp file or new folder is left."""
    out = tmp_path / "out"
    if existing:
        assert run_generate(_args(tmp_path, 2, out)) == c.EXIT_OK
    before = _tree(out) if existing else None
    names_before = sorted(p.name for p in out.rglob("*")) if existing else None

    def broken(*args: Any) -> Any:
        raise RuntimeError("dashboard failed")

    monkeypatch.setattr(dashboards, "dashboards", broken)
    with pytest.raises(RuntimeError, match="dashboard failed"):
        run_generate(_args(tmp_path, 5, out))  # 5 SLOs: every rule and test file differs
    if existing:
        assert _tree(out) == before and sorted(p.name for p in out.rglob("*")) == names_before
    else:
        assert not out.exists()


def test_check_compares_each_file_as_it_is_rendered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--check names a file that differs anywhere (its first bytes, its last, or a byte too many)
    and one that is missing, and writes nothing."""
    out = tmp_path / "out"
    assert run_generate(_args(tmp_path, 3, out)) == c.EXIT_OK
    files = sorted(p for p in out.rglob("*") if p.is_file())
    first, last, longer, missing = files[0], files[1], files[-1], files[2]
    first.write_text("x" + first.read_text(encoding="utf-8")[1:], encoding="utf-8")
    last.write_text(last.read_text(encoding="utf-8")[:-1] + "x", encoding="utf-8")
    longer.write_text(longer.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    missing.unlink()
    before = _tree(out)
    capsys.readouterr()
    assert run_generate(_args(tmp_path, 3, out, check=True)) == c.EXIT_FAILURE
    named = {line.strip() for line in capsys.readouterr().err.splitlines()[1:]}
    assert named == {str(p) for p in (first, last, longer, missing)}
    assert _tree(out) == before


def _fresh(tmp_path: Path, slos: int) -> dict[str, bytes]:
    out = tmp_path / "fresh"
    assert run_generate(_args(tmp_path, slos, out)) == c.EXIT_OK
    return _tree(out)


def test_unchanged_files_are_not_written_so_a_read_only_out_that_is_up_to_date_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before files were streamed, generate wrote only the files that differ: rerun over an
    up-to-date --out on a read-only mount (or a full disk) it said "0 changed". Staging every file
    in a temp file made that an error (measured with a read-only and a full tmpfs)."""
    out = tmp_path / "out"
    assert run_generate(_args(tmp_path, 3, out)) == c.EXIT_OK
    before = _tree(out)

    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    capsys.readouterr()
    assert run_generate(_args(tmp_path, 3, out)) == c.EXIT_OK
    assert "(0 changed)" in capsys.readouterr().out
    assert _tree(out) == before


@pytest.mark.parametrize("change", ["first-byte", "last-byte", "longer", "shorter", "missing", "middle"])
def test_a_file_that_differs_anywhere_is_rewritten_whole(tmp_path: Path, change: str) -> None:
    """A file is staged from its first difference on, with the equal text before it read back from
    the file on disk: the rewritten file is exactly what a fresh run writes, and only it changes."""
    fresh = _fresh(tmp_path, 3)
    out = tmp_path / "out"
    assert run_generate(_args(tmp_path, 3, out)) == c.EXIT_OK
    target = max((p for p in out.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    text = target.read_text(encoding="utf-8")
    half = len(text) // 2
    edited = {
        "first-byte": "x" + text[1:],
        "last-byte": text[:-1] + "x",
        "longer": text + "more\n",
        "shorter": text[:half],
        "middle": text[:half] + "x" + text[half + 1 :],
    }
    if change == "missing":
        target.unlink()
    else:
        target.write_text(edited[change], encoding="utf-8")
    others = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p != target}
    assert run_generate(_args(tmp_path, 3, out)) == c.EXIT_OK
    assert _tree(out) == fresh
    assert {p: p.stat().st_mtime_ns for p in others} == others


_KILLED_WHILE_RENDERING = """
import os, signal, sys
from triton_sre.cli import main
from triton_sre.generate import dashboards
def killed(*args):
    os.kill(os.getpid(), signal.{sig})  # the dashboards come last: every other file is staged by now
    raise AssertionError("the signal did not end the process")
dashboards.dashboards = killed
sys.exit(main(["generate", "--spec", sys.argv[1], "--out", sys.argv[2]]))
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("existing", [True, False], ids=["over-a-previous-run", "into-a-new-directory"])
def test_a_stop_signal_while_rendering_leaves_no_temp_file(tmp_path: Path, sig: str, existing: bool) -> None:
    """`timeout` or a cancelled CI job (SIGTERM), a closed terminal (SIGHUP): files are staged as they
    are rendered, and the signal's default action left them all in --out. The process still ends by
    the signal (a shell's 143 / 129), with --out as it was."""
    out = tmp_path / "out"
    if existing:
        assert run_generate(_args(tmp_path, 2, out)) == c.EXIT_OK
    before = _tree(out) if existing else None
    names_before = sorted(p.name for p in out.rglob("*")) if existing else None
    spec = _args(tmp_path, 5, out).spec
    code = _KILLED_WHILE_RENDERING.format(sig=sig)
    done = subprocess.run(
        [sys.executable, "-c", code, str(spec), str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert done.returncode == -getattr(signal, sig), done.stderr
    if existing:
        assert _tree(out) == before and sorted(p.name for p in out.rglob("*")) == names_before
    else:
        assert not out.exists()


def test_each_regex_slo_is_compiled_once_for_every_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """notserved28: `covering` called re.fullmatch(regex, model); re's cache holds 512 patterns, so with
    more regex SLOs every regex was compiled again for every model (1,000 regex SLOs: 2 M compiles, 600 of
    generate's 700 s under a profiler). 600 regex SLOs, each asked for 600 models: 600 compiles."""
    slos = "\n".join(
        f'  - {{name: r{i}, type: {c.SLO_AVAILABILITY}, models: {{regex: "team{i}_.*"}}, objective: 99}}'
        for i in range(600)
    )
    spec = parse_spec(f"slos:\n{slos}\n")
    real, compiled = slo_models.re.compile, []

    def counting(pattern: str, *flags: Any) -> Any:
        compiled.append(pattern)
        return real(pattern, *flags)

    monkeypatch.setattr(slo_models.re, "compile", counting)
    index = slo_models.SLOIndex(spec)
    assert [len(index.covering(f"team{i}_m")) for i in range(600)] == [1] * 600
    assert sorted(compiled) == sorted(s.models.regex for s in spec.slos)
