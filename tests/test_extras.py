"""The slim install (issue 15): `export` loads no heavy library; a missing extra is a hint and exit 2."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import tomllib

from triton_sre import conventions as c
from triton_sre.extras import COMMAND_EXTRAS, command_key, install_hint
from triton_sre.stack.processes import free_port

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("pandas", "matplotlib", "grafanalib", "slack_sdk", "jinja2", "tritonclient", "pytriton")
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", re.MULTILINE)


def test_export_imports_no_heavy_library(tmp_path: Path) -> None:
    """The real `triton-sre export`, run until its /metrics answers after a (failed) poll."""
    port, dead = free_port(), free_port()
    err = tmp_path / "stderr"
    with err.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "triton_sre.cli", "export",
             f"--triton-url=http://127.0.0.1:{dead}", f"--listen=127.0.0.1:{port}", "--interval=1"],
            stdout=subprocess.DEVNULL, stderr=sink, cwd=tmp_path,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            body = ""
            while True:  # until a scrape shows a poll happened (it fails: nothing listens)
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as resp:
                        body = resp.read().decode()
                    if c.M_POLL_ERRORS in body:
                        break
                except OSError:
                    pass
                assert proc.poll() is None, err.read_text()
                assert time.monotonic() < deadline, "exporter never answered /metrics"
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    modules = {name.split(".")[0] for name in IMPORTED.findall(err.read_text())}
    assert "triton_sre" in modules and "prometheus_client" in modules  # the import log is complete
    assert sorted(modules & set(HEAVY)) == []


BLOCKED_RUNS = [
    (["bot"], "slack_sdk"),
    (["generate", "--check"], "grafanalib"),
    (["report", "--prometheus-url=http://127.0.0.1:1"], "pandas"),
    (["report", "--prometheus-url=http://127.0.0.1:1"], "matplotlib"),
    (["lint", "."], "tritonclient"),
    (["stack", "up"], "pytriton"),
    (["demo"], "grafanalib"),
]


@pytest.mark.parametrize(("argv", "blocked"), BLOCKED_RUNS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_missing_extra_exits_2_with_the_install_line(argv: list[str], blocked: str, tmp_path: Path) -> None:
    """A module set to None in sys.modules cannot be imported: as if its extra were not installed."""
    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "from triton_sre.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    extras, _ = COMMAND_EXTRAS[command_key(*argv[:2])]
    assert run.returncode == c.EXIT_USAGE, run.stderr
    assert "Traceback" not in run.stderr
    assert blocked in run.stderr
    assert install_hint(extras) in run.stderr
    assert re.search(r"pip install 'triton-sre\[[a-z,]+\]'$", run.stderr.strip())


def test_declared_extras_exist_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    base = " ".join(project["dependencies"])
    for needed, _ in COMMAND_EXTRAS.values():
        assert set(needed) <= set(extras)
    every = [name for name in extras if name not in ("all", "dev")]
    assert extras["all"] == [f"triton-sre[{','.join(every)}]"]
    assert "triton-sre[all]" in extras["dev"]
    for heavy in ("pandas", "matplotlib", "grafanalib", "slack-sdk", "jinja2", "tritonclient", "pytriton"):
        assert heavy not in base


def test_stack_status_and_down_need_no_extra(tmp_path: Path) -> None:
    """They only read the state file: with every extra's modules blocked they still run."""
    block = "".join(f"sys.modules[{m!r}] = None; " for m in HEAVY)
    code = f"import sys; {block}\nfrom triton_sre.cli import main\nsys.exit(main(sys.argv[1:]))"
    for action in ("status", "down"):
        run = subprocess.run(
            [sys.executable, "-c", code, "stack", action, "--workdir", str(tmp_path / "none")],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert "pip install" not in run.stderr and "Traceback" not in run.stderr, run.stderr
