"""The diagnosis corpus: broken model repositories seeded for the REAL Triton 2.51 server.

Shared by the diagnosis tests (which capture the server's logs of these repositories) and the
lint tests (which must flag the same models with the same runbook ids before Triton starts).
Each entry: model name -> (files relative to the model directory, the runbook id its failure
maps to, or None for a healthy model).
"""

# ruff: noqa: E501 - model configs are test data

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse, parse_text
from triton_sre.diagnosis.scan import scan_lines
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

FIXTURES = Path(__file__).parent / "data" / "logs" / "real"

IO_PBTXT = """
input [ {{ name: "INPUT" data_type: {dt} dims: [ {dims} ] }} ]
output [ {{ name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] }} ]
"""
OK_PY = """import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse(output_tensors=[]) for _ in requests]
"""


def config_pbtxt(
    name: str,
    *,
    backend: str = 'backend: "python"',
    mbs: int | str = 0,
    dt: str = "TYPE_FP32",
    dims: str = "4",
    extra: str = "",
) -> str:
    return f'name: "{name}"\n{backend}\nmax_batch_size: {mbs}\n' + IO_PBTXT.format(dt=dt, dims=dims) + extra


REFUSED_BATCHING = "dynamic_batching { preferred_batch_size: [ 8, 32 ] }\n"
"""A preferred batch size above max_batch_size 16: Triton 2.51 refuses the config while it polls the
repository, and leaves the model in the index by its name alone (journey26's reranker)."""


def refused_config_repository(repo: Path, refused: str, fine: str) -> Path:
    """A Python-backend repository of `refused` (a config Triton refuses) and `fine` (one that loads)."""
    for name, extra in ((refused, REFUSED_BATCHING), (fine, "")):
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "config.pbtxt").write_text(config_pbtxt(name, mbs=16, extra=extra), encoding="utf-8")
        (repo / name / "1" / "model.py").write_text(OK_PY, encoding="utf-8")
    return repo


def auto_complete_model(body: str) -> str:
    return (
        OK_PY
        + "\n    @staticmethod\n    def auto_complete_config(auto_complete_model_config):\n"
        + body
        + "        return auto_complete_model_config\n"
    )


def ensemble_pbtxt(name: str, step: str) -> str:
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
    "ok_model": ({"config.pbtxt": config_pbtxt("ok_model"), "1/model.py": OK_PY}, None),
    "vd_non_integer": (
        {"config.pbtxt": config_pbtxt("vd_non_integer"), "v1/model.py": OK_PY},
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    "vd_no_version": ({"config.pbtxt": config_pbtxt("vd_no_version")}, c.RUNBOOK_VERSION_DIR_INVALID),
    "vd_policy": (
        {
            "config.pbtxt": config_pbtxt("vd_policy", extra="version_policy: { specific: { versions: [ 3 ] } }\n"),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    "name_mismatch": (
        {"config.pbtxt": config_pbtxt("other_name"), "1/model.py": OK_PY},
        c.RUNBOOK_CONFIG_NAME_MISMATCH,
    ),
    "cp_syntax": (
        {
            "config.pbtxt": 'name: "cp_syntax"\nbackend: "python"\ninput [ { name: "INPUT" data_type: TYPE_FP32\n',
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_unknown_field": (
        {"config.pbtxt": config_pbtxt("cp_unknown_field", extra="max_batch_sizes: 4\n"), "1/model.py": OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_bad_enum": (
        {"config.pbtxt": config_pbtxt("cp_bad_enum", dt="TYPE_FLOAT32"), "1/model.py": OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "cp_placeholder": (
        {"config.pbtxt": config_pbtxt("cp_placeholder", mbs="${max_batch_size}"), "1/model.py": OK_PY},
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    "bk_onnx": (
        {"config.pbtxt": config_pbtxt("bk_onnx", backend='backend: "onnxruntime"'), "1/model.onnx": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_trt": (
        {"config.pbtxt": config_pbtxt("bk_trt", backend='platform: "tensorrt_plan"'), "1/model.plan": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_pytorch": (
        {"config.pbtxt": config_pbtxt("bk_pytorch", backend='backend: "pytorch"'), "1/model.pt": ""},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "bk_typo": (
        {"config.pbtxt": config_pbtxt("bk_typo", backend='backend: "pyhton"'), "1/model.py": OK_PY},
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    "py_module": (
        {"config.pbtxt": config_pbtxt("py_module"), "1/model.py": "import not_a_module_xyz\n" + OK_PY},
        c.RUNBOOK_PYTHON_MODULE_MISSING,
    ),
    "py_init_exc": (
        {
            "config.pbtxt": config_pbtxt("py_init_exc"),
            "1/model.py": OK_PY
            + "\n    def initialize(self, args):\n        raise RuntimeError('boom in init')\n",
        },
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "py_syntax": (
        {
            "config.pbtxt": config_pbtxt("py_syntax"),
            "1/model.py": "class TritonPythonModel:\n    def execute(self, requests)\n        return []\n",
        },
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "ens_missing": (
        {"config.pbtxt": ensemble_pbtxt("ens_missing", "does_not_exist"), "1/.keep": ""},
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "ens_broken_step": (
        {"config.pbtxt": ensemble_pbtxt("ens_broken_step", "py_init_exc"), "1/.keep": ""},
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    "dims_invalid": (
        {"config.pbtxt": config_pbtxt("dims_invalid", dims="-3"), "1/model.py": OK_PY},
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    "dims_mismatch": (
        {
            "config.pbtxt": config_pbtxt("dims_mismatch"),
            "1/model.py": auto_complete_model(
                "        auto_complete_model_config.add_input("
                "{'name': 'INPUT', 'data_type': 'TYPE_FP32', 'dims': [8]})\n"
            ),
        },
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    "dt_mismatch": (
        {
            "config.pbtxt": config_pbtxt("dt_mismatch"),
            "1/model.py": auto_complete_model(
                "        auto_complete_model_config.add_input("
                "{'name': 'INPUT', 'data_type': 'TYPE_INT32', 'dims': [4]})\n"
            ),
        },
        c.RUNBOOK_DATATYPE_MISMATCH,
    ),
    "mbs_unsupported": (
        {
            "config.pbtxt": config_pbtxt("mbs_unsupported", mbs=8),
            "1/model.py": auto_complete_model("        auto_complete_model_config.set_max_batch_size(0)\n"),
        },
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    ),
    "gpu_kind": (
        {
            "config.pbtxt": config_pbtxt("gpu_kind", extra="instance_group [ { count: 1 kind: KIND_GPU } ]\n"),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
}
# Python stubs that fail before the model can fail: the model stays LOADING (own server).
STUCK: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": BROKEN["ok_model"],
    "mf_no_model_py": (
        {"config.pbtxt": config_pbtxt("mf_no_model_py"), "1/.keep": ""},
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    "mf_beside": (
        {"config.pbtxt": config_pbtxt("mf_beside"), "model.py": OK_PY, "1/.keep": ""},
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    "mf_default_name": (
        {
            "config.pbtxt": config_pbtxt("mf_default_name", extra='default_model_filename: "net.py"\n'),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
}
def build_repository(root: Path, models: dict[str, tuple[dict[str, str], str | None]]) -> Path:
    for model, (files, _runbook) in models.items():
        for rel, text in files.items():
            path = root / model / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return root


def diagnose_file(path: Path) -> Report:
    with path.open("rb") as f:
        return diagnose_events(parse(scan_lines(f)))


def run_until_exit(server: LocalTriton, timeout: float = 60) -> int | None:
    """Start a server that is meant to fail on its own, wait for its exit, stop it; its exit code.
    ``start()`` may give up first (nothing answers) or see another server answer: the exit is what counts."""
    try:
        with contextlib.suppress(LocalTritonError):
            server.start()
        deadline = time.monotonic() + timeout
        while server.returncode is None and time.monotonic() < deadline:
            time.sleep(0.1)
        return server.returncode
    finally:
        server.stop()


def diagnose_server_capture(path: Path, healthy: str = "ok_model") -> Report:
    """A capture of a server that failed as a whole: the healthy model gets no finding, no line is left
    unmatched, and the file reader and the text reader agree."""
    report = diagnose_file(path)
    assert all(f.model != healthy for f in report.findings), "the healthy model got a finding"
    assert not report.unmatched, report.unmatched
    assert diagnose_events(parse_text(path.read_text(errors="replace"))).findings == report.findings
    return report


def first_runbook_by_model(text: str) -> dict[str, str]:
    """Each model's first finding's runbook, in the report's order."""
    first: dict[str, str] = {}
    for finding in diagnose_events(parse_text(text)).findings:
        if finding.model is not None:
            first.setdefault(finding.model, finding.runbook)
    return first
