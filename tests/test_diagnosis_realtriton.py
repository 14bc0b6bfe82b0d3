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

# ruff: noqa: E501 - log lines are test data and keep their real length

from __future__ import annotations

import contextlib
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse, parse_text
from triton_sre.diagnosis.scan import scan_lines
from triton_sre.triton.local import LocalTriton, LocalTritonError

FIXTURES = Path(__file__).parent / "data" / "logs" / "real"

_IO = """
input [ {{ name: "INPUT" data_type: {dt} dims: [ {dims} ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] }} ]
"""
_OK_PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse(output_tensors=[]) for _ in requests]
"""


def _config(
    name: str,
    *,
    backend: str = 'backend: "python"',
    mbs: int | str = 0,
    dt: str = "TYPE_FP32",
    dims: str = "4",
    extra: str = "",
) -> str:
    return f'name: "{name}"\n{backend}\nmax_batch_size: {mbs}\n' + _IO.format(dt=dt, dims=dims) + extra


def _auto_complete(body: str) -> str:
    return (
        _OK_PY
        + "\n    @staticmethod\n    def auto_complete_config(auto_complete_model_config):\n"
        + body
        + "        return auto_complete_model_config\n"
    )


def _ensemble(name: str, step: str) -> str:
    return f"""name: "{name}"
platform: "ensemble"
max_batch_size: 0
input [ {{ name: "IN" data_type: TYPE_FP32 dims: [ 4 ] }} ]
output [ {{ name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] }} ]
ensemble_scheduling {{ step [ {{ model_name: "{step}" model_version: -1
  input_map {{ key: "INPUT" value: "IN" }} output_map {{ key: "OUTPUT" value: "OUT" }} }} ] }}
"""


# model directory -> (files, the runbook its failure must be diagnosed as; None = must load)
BROKEN: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": ({"config.pbtxt": _config("ok_model"), "1/model.py": _OK_PY}, None),
    "vd_non_integer": (
        {"config.pbtxt": _config("vd_non_integer"), "v1/model.py": _OK_PY},
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    "vd_no_version": ({"config.pbtxt": _config("vd_no_version")}, c.RUNBOOK_VERSION_DIR_INVALID),
    "vd_policy": (
        {
            "config.pbtxt": _config("vd_policy", extra="version_policy: { specific: { versions: [ 3 ] } }\n"),
            "1/model.py": _OK_PY,
        },
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    "name_mismatch": (
        {"config.pbtxt": _config("other_name"), "1/model.py": _OK_PY},
        c.RUNBOOK_CONFIG_NAME_MISMATCH,
    ),
    "cp_syntax": (
        {
            "config.pbtxt": 'name: "cp_syntax"\nbackend: "python"\ninput [ { name: "INPUT" data_type: TYPE_FP32\n',
            "1/model.py": _OK_PY,
        },
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_unknown_field": (
        {"config.pbtxt": _config("cp_unknown_field", extra="max_batch_sizes: 4\n"), "1/model.py": _OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_bad_enum": (
        {"config.pbtxt": _config("cp_bad_enum", dt="TYPE_FLOAT32"), "1/model.py": _OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_placeholder": (
        {"config.pbtxt": _config("cp_placeholder", mbs="${max_batch_size}"), "1/model.py": _OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "bk_onnx": (
        {"config.pbtxt": _config("bk_onnx", backend='backend: "onnxruntime"'), "1/model.onnx": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_trt": (
        {"config.pbtxt": _config("bk_trt", backend='platform: "tensorrt_plan"'), "1/model.plan": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_pytorch": (
        {"config.pbtxt": _config("bk_pytorch", backend='backend: "pytorch"'), "1/model.pt": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_typo": (
        {"config.pbtxt": _config("bk_typo", backend='backend: "pyhton"'), "1/model.py": _OK_PY},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "py_module": (
        {"config.pbtxt": _config("py_module"), "1/model.py": "import not_a_module_xyz\n" + _OK_PY},
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    ),
    "py_init_exc": (
        {
            "config.pbtxt": _config("py_init_exc"),
            "1/model.py": _OK_PY
            + "\n    def initialize(self, args):\n        raise RuntimeError('boom in init')\n",
        },
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "py_syntax": (
        {
            "config.pbtxt": _config("py_syntax"),
            "1/model.py": "class TritonPythonModel:\n    def execute(self, requests)\n        return []\n",
        },
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "ens_missing": (
        {"config.pbtxt": _ensemble("ens_missing", "does_not_exist"), "1/.keep": ""},
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "ens_broken_step": (
        {"config.pbtxt": _ensemble("ens_broken_step", "py_init_exc"), "1/.keep": ""},
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "dims_invalid": (
        {"config.pbtxt": _config("dims_invalid", dims="-3"), "1/model.py": _OK_PY},
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    "dims_mismatch": (
        {
            "config.pbtxt": _config("dims_mismatch"),
            "1/model.py": _auto_complete(
                "        auto_complete_model_config.add_input("
                "{'name': 'INPUT', 'data_type': 'TYPE_FP32', 'dims': [8]})\n"
            ),
        },
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    "dt_mismatch": (
        {
            "config.pbtxt": _config("dt_mismatch"),
            "1/model.py": _auto_complete(
                "        auto_complete_model_config.add_input("
                "{'name': 'INPUT', 'data_type': 'TYPE_INT32', 'dims': [4]})\n"
            ),
        },
        c.RUNBOOK_DATATYPE_MISMATCH,
    ),
    "mbs_unsupported": (
        {
            "config.pbtxt": _config("mbs_unsupported", mbs=8),
            "1/model.py": _auto_complete("        auto_complete_model_config.set_max_batch_size(0)\n"),
        },
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    ),
    "gpu_kind": (
        {
            "config.pbtxt": _config("gpu_kind", extra="instance_group [ { count: 1 kind: KIND_GPU } ]\n"),
            "1/model.py": _OK_PY,
        },
        c.RUNBOOK_CUDA_DRIVER_MISMATCH,
    ),
}
# Python stubs that fail before the model can fail: the model stays LOADING (own server).
STUCK: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": BROKEN["ok_model"],
    "mf_no_model_py": (
        {"config.pbtxt": _config("mf_no_model_py"), "1/.keep": ""},
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    "mf_beside": (
        {"config.pbtxt": _config("mf_beside"), "model.py": _OK_PY, "1/.keep": ""},
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    "mf_default_name": (
        {
            "config.pbtxt": _config("mf_default_name", extra='default_model_filename: "net.py"\n'),
            "1/model.py": _OK_PY,
        },
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
}
# A shared-memory region larger than /dev/shm can hold (server-wide setting: own server).
SHM_BYTES = 1 << 46
SHM: dict[str, tuple[dict[str, str], str | None]] = {
    "shm_model": ({"config.pbtxt": _config("shm_model"), "1/model.py": _OK_PY}, c.RUNBOOK_SHM_TOO_SMALL),
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
    "shm-too-small": (
        SHM,
        {
            "exit_on_error": False,
            "extra_args": [f"--backend-config=python,shm-default-byte-size={SHM_BYTES}"],
        },
    ),
}


def build_repository(root: Path, models: dict[str, tuple[dict[str, str], str | None]]) -> Path:
    for model, (files, _runbook) in models.items():
        for rel, text in files.items():
            path = root / model / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


def _stuck_done(log: str) -> bool:
    return log.count("Python model file not found") >= len(STUCK) - 1 and "successfully loaded" in log


def capture(name: str, workdir: Path, log_path: Path) -> Path:
    """Run one real server for ``name`` and leave its complete log at ``log_path``."""
    models, kwargs = CAPTURES[name]
    repo = build_repository(workdir / "repo", models)
    server = LocalTriton(repo, workdir=workdir / "triton", log_path=log_path, startup_timeout=60, **kwargs)  # type: ignore[arg-type]
    if name == "stuck-loading":
        # The server never becomes ready: watch the log, then stop it.
        starter = threading.Thread(target=lambda: _quiet(server.start), daemon=True)
        starter.start()
        deadline = time.monotonic() + 60
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
    return log_path


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


def diagnose_file(path: Path) -> Report:
    with path.open("rb") as f:
        return diagnose_events(parse(scan_lines(f)))


def check_capture(name: str, path: Path) -> None:
    report = diagnose_file(path)
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


def test_committed_captures_cover_every_cpu_class() -> None:
    covered = {rb for name in CAPTURES for rb in expected(name).values()}
    assert covered == c.CPU_REPRODUCIBLE_LOAD_FAILURES


# ---------------------------------------------------------------------------- live regeneration
@pytest.mark.triton
def test_live_captures_agree(tmp_path: Path) -> None:
    """Regenerate every capture from the real server and check the same diagnosis (~25 s)."""
    started = time.monotonic()
    logs = capture_all(tmp_path / "logs", tmp_path / "work")
    print(f"\n{len(logs)} real Triton captures in {time.monotonic() - started:.1f}s")
    for name, path in logs.items():
        check_capture(name, path)
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
