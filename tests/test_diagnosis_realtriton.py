"""The diagnosis corpus from the REAL Triton 2.51 server (nvidia-pytriton wheel, CPU).

One repository holds every broken model reproducible on a CPU host with the Python backend; one
server start per log format and --exit-on-error setting loads them all at once. Two small extra
starts cover what cannot share that repository: Python stubs that never finish loading (the
model stays LOADING, so the startup table would never print) and a shared-memory request the host
cannot satisfy (a server-wide setting).

The captures are also committed under ``tests/data/logs/real/`` (regenerate them with
``python tests/test_diagnosis_realtriton.py``) so the offline tests below run without a server;
the live test regenerates them and checks the diagnosis agrees, so they cannot go stale.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from corpus import (
    BROKEN,
    FIXTURES,
    OK_PY,
    STUCK,
    build_repository,
    config_pbtxt,
    diagnose_file,
    ensemble_pbtxt,
    first_runbook_by_model,
)
from expectations import CPU_REPRODUCIBLE_LOAD_FAILURES

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

# A shared-memory region larger than /dev/shm can hold (server-wide setting: own server).
SHM_BYTES = 1 << 46
SHM: dict[str, tuple[dict[str, str], str | None]] = {
    "shm_model": ({"config.pbtxt": config_pbtxt("shm_model"), "1/model.py": OK_PY}, c.RUNBOOK_SHM_TOO_SMALL),
}

# Classes the message inventory added (issue 14), each reproduced on the real server. Kept out of
# corpus.BROKEN, whose models lint must also flag.
INVENTORY_CLASSES: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": ({"config.pbtxt": config_pbtxt("ok_model"), "1/model.py": OK_PY}, None),
    "mbs_negative": (
        {"config.pbtxt": config_pbtxt("mbs_negative", mbs=-1), "1/model.py": OK_PY},
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "preferred_gt_max": (
        {
            "config.pbtxt": config_pbtxt(
                "preferred_gt_max",
                mbs=4,
                dims="4",
                extra="dynamic_batching { preferred_batch_size: [ 8 ] }\n",
            ),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "platform_as_backend": (
        {
            "config.pbtxt": config_pbtxt("platform_as_backend", backend='backend: "onnxruntime_onnx"'),
            "1/model.onnx": "",
        },
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    "ens_step_version": (
        {
            "config.pbtxt": ensemble_pbtxt("ens_step_version", "ok_model").replace(
                "model_version: -1", "model_version: 2"
            ),
            "1/.keep": "",
        },
        c.RUNBOOK_ENSEMBLE_STEP_VERSION,
    ),
    # A Python module whose import needs a native library the host lacks (as OpenCV needs libGL).
    "py_shared_lib": (
        {
            "config.pbtxt": config_pbtxt("py_shared_lib"),
            "1/model.py": "import ctypes\n\nctypes.CDLL('libtriton_sre_absent.so.1')\n" + OK_PY,
        },
        c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
    ),
    # An OS error raised while Python imports the model (the traceback is all import frames):
    # writing to /dev/full fails with ENOSPC, as a write to a full disk does.
    "host_enospc": (
        {
            "config.pbtxt": config_pbtxt("host_enospc"),
            "1/model.py": "with open('/dev/full', 'w') as full:\n    full.write('x')\n    full.flush()\n"
            + OK_PY,
        },
        c.RUNBOOK_HOST_RESOURCE_EXHAUSTED,
    ),
    "ig_cpu_gpus": (
        {
            "config.pbtxt": config_pbtxt(
                "ig_cpu_gpus", extra="instance_group [ { count: 1 kind: KIND_CPU gpus: [ 0 ] } ]\n"
            ),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
}

# capture name -> (repository, LocalTriton arguments)
CAPTURES: dict[str, tuple[dict[str, tuple[dict[str, str], str | None]], dict[str, object]]] = {
    "default-exit-false": (BROKEN, {"exit_on_error": False}),
    "default-exit-true": (BROKEN, {"exit_on_error": True}),
    "iso8601-exit-false": (BROKEN, {"exit_on_error": False, "log_format": "ISO8601"}),
    "iso8601-exit-true": (BROKEN, {"exit_on_error": True, "log_format": "ISO8601"}),
    "verbose-exit-false": (BROKEN, {"exit_on_error": False, "log_verbose": 1}),
    "verbose-exit-true": (BROKEN, {"exit_on_error": True, "log_verbose": 1}),
    "stuck-loading": (STUCK, {"exit_on_error": False}),
    "inventory-classes": (INVENTORY_CLASSES, {"exit_on_error": False}),
    # No model at all: the repository folder is never created (a volume that was not mounted).
    "no-repository": ({}, {"exit_on_error": True}),
    c.RUNBOOK_SHM_TOO_SMALL: (
        SHM,
        {
            "exit_on_error": False,
            "extra_args": [f"--backend-config=python,shm-default-byte-size={SHM_BYTES}"],
        },
    ),
}


def _stuck_done(log: str) -> bool:
    return log.count("Python model file not found") >= len(STUCK) - 1 and "successfully loaded" in log


# Ports are picked free just before the server binds them; a client socket elsewhere on the host
# can take one in between. The capture then holds a bind failure instead of the repository's story.
PORT_TAKEN = "already in use"


def capture(name: str, workdir: Path, log_path: Path, attempts: int = 3) -> Path:
    """Run one real server for ``name`` and leave its complete log at ``log_path``."""
    for attempt in range(attempts):
        if attempt:
            log_path.unlink()
            shutil.rmtree(workdir, ignore_errors=True)
        _capture_once(name, workdir, log_path)
        if PORT_TAKEN not in log_path.read_text(errors="replace"):
            break
    return log_path


def _capture_once(name: str, workdir: Path, log_path: Path) -> None:
    models, kwargs = CAPTURES[name]
    repo = build_repository(workdir / "repo", models)
    server = LocalTriton(repo, workdir=workdir / "triton", log_path=log_path, startup_timeout=60, **kwargs)  # type: ignore[arg-type]
    if name == "stuck-loading":
        # The server never becomes ready: watch the log, then stop it.
        starter = threading.Thread(target=lambda: _quiet(server.start), daemon=True)
        starter.start()
        deadline = time.monotonic() + 150  # 60 s ran out once at load ~8 before mf_beside failed in the log
        while time.monotonic() < deadline and not _stuck_done(server.read_log()):
            time.sleep(0.1)
        server.stop()
        starter.join(15)
    else:
        try:
            _quiet(server.start)
        finally:
            server.stop()
    assert log_path.exists()


def _quiet(start: Callable[[], object]) -> None:
    with contextlib.suppress(LocalTritonError):  # exit-on-error servers exit by design
        start()


def capture_all(out_dir: Path, workdir: Path) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            name: pool.submit(capture, name, workdir / name, out_dir / f"{name}.log") for name in CAPTURES
        }
        return {name: f.result() for name, f in futures.items()}


def expected(name: str) -> dict[str, str]:
    models, _ = CAPTURES[name]
    return {m: rb for m, (_files, rb) in models.items() if rb is not None}


# Captures of a server that never loads a model: the server-wide runbook the first finding must name.
SERVER_WIDE = {"no-repository": c.RUNBOOK_REPOSITORY_PATH_INVALID}


def check_capture(name: str, path: Path) -> None:
    report = diagnose_file(path)
    if name in SERVER_WIDE:
        first = report.findings[0]
        assert (first.model, first.runbook, first.severity) == (None, SERVER_WIDE[name], c.IMPACT_CRITICAL)
        assert diagnose_events(parse_text(path.read_text(errors="replace"))).findings == report.findings
        return
    want = expected(name)
    first: dict[str, str] = {}
    for finding in report.findings:
        if finding.model is not None:
            first.setdefault(finding.model, finding.runbook)
    got = {m: first.get(m) for m in want}
    assert got == want, f"{name}: diagnosis differs from the broken repository"
    healthy = {m for m, (_f, rb) in CAPTURES[name][0].items() if rb is None}
    for finding in report.findings:
        assert finding.model not in healthy, f"{name}: healthy model {finding.model} got a finding"
        if finding.model in want:
            assert finding.severity == c.IMPACT_CRITICAL
            assert finding.evidence
    # Consequences come after root causes: the ensemble whose step failed is last of the two.
    order = [f.model for f in report.findings]
    if "ens_broken_step" in order:
        assert order.index("py_init_exc") < order.index("ens_broken_step")
        assert report.findings[order.index("ens_broken_step")].consequence_of == "py_init_exc"
    assert not report.unmatched, f"{name}: unexplained error lines {report.unmatched}"
    # The fast chunk scanner and the plain line-by-line parse agree.
    assert diagnose_events(parse_text(path.read_text(errors="replace"))).findings == report.findings


# ---------------------------------------------------------------------------- committed captures
@pytest.mark.parametrize("name", sorted(CAPTURES))
def test_committed_capture_diagnosis(name: str) -> None:
    path = FIXTURES / f"{name}.log"
    assert path.exists(), f"missing fixture {path}: run python {Path(__file__).name}"
    check_capture(name, path)


# The Python stubs of models loading in parallel write to one stream. In CI two stubs failed within a
# millisecond and one's header line landed inside the other's traceback (dims_mismatch took
# mbs_unsupported's finding). Every model keeps its own finding whichever stub output another's
# header line lands in, after whichever of its lines.
_LOG_HEAD = re.compile(r"^(?:[IWEF]\d{4} |\d{4}-\d\d-\d\dT)")  # glog or ISO8601 (stubs write glog)


@pytest.mark.parametrize("name", ["verbose-exit-true", "verbose-exit-false", "iso8601-exit-false"])
def test_interleaved_stub_outputs_keep_their_models(name: str) -> None:
    lines = (FIXTURES / f"{name}.log").read_text().split("\n")
    lines = lines[max(i for i, line in enumerate(lines) if "pinned_memory_manager" in line) :]  # last run
    blocks = []
    for start, line in enumerate(lines):
        if "pb_stub.cc" in line:
            end = start + 1
            while end < len(lines) and not _LOG_HEAD.match(lines[end]):
                end += 1
            blocks.append((start, end))
    assert len(blocks) >= 5
    want = expected(name)
    wrong = []
    for (a1, b1), (a2, b2) in itertools.permutations(blocks, 2):
        host, guest = lines[a1:b1], lines[a2:b2]
        rest = [line for k, line in enumerate(lines) if not (a1 <= k < b1 or a2 <= k < b2)]
        at = a1 - (b2 - a2 if a2 < a1 else 0)
        for after in range(1, len(host)):
            mixed = [*host[:after], guest[0], *host[after:], *guest[1:]]
            got = first_runbook_by_model("\n".join([*rest[:at], *mixed, *rest[at:]]))
            if {m: got.get(m) for m in want} != want:
                wrong.append((host[0][:90], guest[0][:90], after))
    assert not wrong


# Triton's logger writes a message and then its line end, two writes; the server and each stub are processes
# of their own on one stream, so one's whole message can land between the other's message and its line end
# (CI again, after the test above: the server's E line for dims_mismatch went on with mbs_unsupported's
# stub message). Every model keeps its own finding whichever neighbour's message is glued onto whose line.
_MESSAGE_HEAD = re.compile(r"^(?:[IWEF]\d{4} [\d:.]+ +(\d+) |\d{4}-\d\d-\d\dT\S+ [IWEF] (\d+) )")


def _messages(lines: list[str]) -> list[tuple[str, str]]:
    """(writer pid, message as written without its line end) of each log message."""
    out: list[tuple[str, str]] = []
    for line in lines:
        head = _MESSAGE_HEAD.match(line)
        if head or not out:
            out.append(((head.group(1) or head.group(2)) if head else "", line))
        else:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n{line}")
    return out


@pytest.mark.parametrize("name", ["verbose-exit-true", "verbose-exit-false", "iso8601-exit-false"])
def test_message_glued_before_another_processes_line_end(name: str) -> None:
    lines = (FIXTURES / f"{name}.log").read_text().split("\n")
    lines = lines[max(i for i, line in enumerate(lines) if "pinned_memory_manager" in line) :]  # last run
    messages = _messages(lines)
    stubs = [i for i, (_pid, text) in enumerate(messages) if "pb_stub.cc" in text.split("\n", 1)[0]]
    assert len(stubs) >= 5
    want = expected(name)
    wrong = []
    for stub in stubs:
        for other in range(max(0, stub - 6), min(len(messages), stub + 7)):
            if messages[other][0] == messages[stub][0]:
                continue
            # The stub's message goes between the other's message and its line end, at the other's place.
            order = [m for k, m in enumerate(messages) if k != stub]
            at = other - (other > stub)
            host, guest = order[at][1], messages[stub][1]
            order[at] = (order[at][0], f"{host}{guest}")
            got = first_runbook_by_model("\n".join(text for _pid, text in order) + "\n")
            if {m: got.get(m) for m in want} != want:
                wrong.append((host[:80], guest[:80]))
    assert not wrong


# Captured by tests/test_diagnosis_port_in_use.py (a second server on a port of a first one),
# tests/test_diagnosis_option_invalid.py (the server given a setting it refuses) and
# tests/test_diagnosis_model_control.py (a client's load request the server refuses).
PORT_CAPTURES = {
    c.RUNBOOK_SERVER_PORT_IN_USE: ("port-in-use-grpc", "port-in-use-http", "port-in-use-metrics"),
    c.RUNBOOK_SERVER_OPTION_INVALID: (
        "bad-option-backend-config",
        "option-cache-not-found",
        "option-unknown-flag",
    ),
    c.RUNBOOK_MODEL_CONTROL_REFUSED: ("model-control-none-grpc", "model-control-restricted-http"),
}


def test_committed_captures_cover_every_cpu_class() -> None:
    covered = {rb for name in CAPTURES for rb in expected(name).values()} | set(SERVER_WIDE.values())
    for runbook, names in PORT_CAPTURES.items():
        assert all((FIXTURES / f"{name}.log").exists() for name in names), names
        covered.add(runbook)
    assert covered == CPU_REPRODUCIBLE_LOAD_FAILURES


# ---------------------------------------------------------------------------- live regeneration
@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """Regenerate every capture from the real server and check the same diagnosis (~25 s)."""
    started = time.monotonic()
    logs = capture_all(tmp_path / "logs", tmp_path / "work")
    print(f"\n{len(logs)} real Triton captures in {time.monotonic() - started:.1f}s")
    for name, path in logs.items():
        try:
            check_capture(name, path)
        except AssertionError:
            # pytest keeps few tmp folders: the capture goes to the failure's output, to read where it ran
            print(f"--- {name}.log as captured ---\n{path.read_text(errors='replace')}")
            raise
    healthy_log = (tmp_path / "logs" / "default-exit-false.log").read_text()
    assert "successfully loaded 'ok_model'" in healthy_log


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        written = capture_all(FIXTURES, Path(tmp))
    for name, path in written.items():
        check_capture(name, path)
        print(name, path.stat().st_size, "bytes")
    shutil.rmtree(FIXTURES / "__pycache__", ignore_errors=True)
    sys.exit(0)
