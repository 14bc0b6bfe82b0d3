"""`triton-sre lint` against the REAL Triton 2.51: every failure class visible in the repository is
flagged before Triton starts with the runbook id the diagnosis engine gives for Triton's real failure.

The seeded broken models are the diagnosis corpus' own (`corpus.BROKEN` and
`STUCK`). One fresh server loads every lint-visible model of BROKEN at once; the STUCK models (a
Python model whose file is missing keeps the server from ever becoming ready) are compared with
the committed real capture of the same repository, which `test_diagnosis_realtriton` regenerates.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from corpus import (
    BROKEN,
    FIXTURES,
    OK_PY,
    STUCK,
    build_repository,
    config_pbtxt,
    diagnose_file,
    ensemble_pbtxt,
)
from expectations import BROKEN_RUNBOOKS

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.demo import BROKEN_INIT, HEALTHY_MODELS, SAMPLE_REPOSITORY
from triton_sre.diagnosis.engine import Report, diagnose_events, diagnose_reason
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton

# Failures only the running model shows (its initialize() raises, auto_complete_config disagrees
# with config.pbtxt, an ensemble step that fails at run time): not visible to a static check.
RUNTIME_ONLY = {"py_init_exc", "ens_broken_step", "dims_mismatch", "dt_mismatch", "mbs_unsupported"}
# More failures Triton rejects at load, seeded here (the diagnosis corpus does not need them).
EXTRA: dict[str, tuple[dict[str, str], str | None]] = {
    "pref_too_big": (
        {
            "config.pbtxt": config_pbtxt(
                "pref_too_big", mbs=4, extra="dynamic_batching { preferred_batch_size: [ 8 ] }\n"
            ),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    "mbs_negative": (
        {"config.pbtxt": config_pbtxt("mbs_negative", mbs=-2), "1/model.py": OK_PY},
        c.RUNBOOK_BATCHING_CONFIG_INVALID,  # what the engine makes of Triton's words (its inventory)
    ),
    # A platform name written as backend:, a backend name as platform: (Triton 2.51: "unable to find
    # backend library for backend 'onnxruntime_onnx'", "unexpected platform type 'python'").
    "be_is_platform": (
        {
            "config.pbtxt": config_pbtxt("be_is_platform", backend='backend: "onnxruntime_onnx"'),
            "1/model.onnx": "",
        },
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    "plat_is_backend": (
        {"config.pbtxt": config_pbtxt("plat_is_backend", backend='platform: "python"'), "1/model.py": OK_PY},
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    # Ensemble steps asking for a version the step does not load: one the folder lacks, one its
    # version_policy (default: latest 1) leaves out ("... whose required version 1 is not loaded").
    "two_versions": (
        {"config.pbtxt": config_pbtxt("two_versions"), "1/model.py": OK_PY, "2/model.py": OK_PY},
        None,
    ),
    "ens_step_absent": (
        {
            "config.pbtxt": ensemble_pbtxt("ens_step_absent", "ok_model").replace(
                "model_version: -1", "model_version: 2"
            ),
            "1/.keep": "",
        },
        c.RUNBOOK_ENSEMBLE_STEP_VERSION,
    ),
    "ens_step_policy": (
        {
            "config.pbtxt": ensemble_pbtxt("ens_step_policy", "two_versions").replace(
                "model_version: -1", "model_version: 1"
            ),
            "1/.keep": "",
        },
        c.RUNBOOK_ENSEMBLE_STEP_VERSION,
    ),
    # A GPU id the host does not have ("specifies invalid or unsupported gpu id 3").
    "ig_gpu_id": (
        {
            "config.pbtxt": config_pbtxt(
                "ig_gpu_id", extra="instance_group [ { count: 1 kind: KIND_GPU gpus: [ 3 ] } ]\n"
            ),
            "1/model.py": OK_PY,
        },
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
    # count below 1: Triton 2.51 loads the model (one instance), so lint only warns.
    "ig_count_zero": (
        {
            "config.pbtxt": config_pbtxt(
                "ig_count_zero", extra="instance_group [ { count: 0 kind: KIND_CPU } ]\n"
            ),
            "1/model.py": OK_PY,
        },
        None,
    ),
}
# Loaded by the real server although lint warns about them.
LOADS_WITH_WARNING = {"ig_count_zero": c.RUNBOOK_INSTANCE_GROUP_INVALID}
# Triton names no model in this failure's line ("in ensemble e, ensemble tensor ... is mapping to
# non-existing input"): its own server, so the line cannot attach to another model's failure.
ENSEMBLE_TENSOR: dict[str, tuple[dict[str, str], str | None]] = {
    "ok_model": BROKEN["ok_model"],
    "ens_bad_tensor": (
        {
            "config.pbtxt": ensemble_pbtxt("ens_bad_tensor", "ok_model").replace(
                'key: "INPUT"', 'key: "NOPE"'
            ),
            "1/.keep": "",
        },
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
}
LINT_VISIBLE = {m: spec for m, spec in BROKEN.items() if m not in RUNTIME_ONLY} | EXTRA


def run_lint(*args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["lint", "--format", "json", *args])
    return code, json.loads(out.getvalue())


def first_critical(findings: list[dict[str, Any]]) -> dict[str, str]:
    got: dict[str, str] = {}
    for f in findings:
        if f["severity"] == c.IMPACT_CRITICAL and f["model"]:
            got.setdefault(f["model"], f["runbook"])
    return got


def engine_first(report: Report) -> dict[str, str]:
    got: dict[str, str] = {}
    for f in report.findings:
        if f.model is not None:
            got.setdefault(f.model, f.runbook)
    return got


def test_lint_agrees_with_real_triton(
    tmp_path: Path, fresh_triton_factory: Callable[..., LocalTriton]
) -> None:
    repo = build_repository(tmp_path / "repo", LINT_VISIBLE)
    backends = tmp_path / "backends"
    (backends / "python").mkdir(parents=True)  # what LocalTriton's backend directory holds
    # 1. lint, before Triton starts
    code, body = run_lint(
        str(repo), "--target", "cpu", "--python", sys.executable, "--backend-directory", str(backends)
    )
    assert code == 1
    linted = first_critical(body["findings"])
    want = {m: rb for m, (_files, rb) in LINT_VISIBLE.items() if rb is not None}
    assert linted == want
    for f in body["findings"]:
        assert (f["file"] + "/").startswith(f["model"] + "/") and f["line"] >= 1, f
        assert f["runbook_url"].endswith(f"{f['runbook']}.md")
    parse_error = next(f for f in body["findings"] if f["model"] == "cp_syntax")
    assert parse_error["file"] == "cp_syntax/config.pbtxt" and parse_error["line"] == 3
    # 2. the real Triton on the same repository; the engine diagnoses its log
    server = fresh_triton_factory(repo, exit_on_error=False)
    assert {p.name for p in (server.workdir / "backends").iterdir()} == {"python"}
    diagnosed = engine_first(diagnose_events(parse_text(server.read_log())))
    assert {m: diagnosed.get(m) for m in want} == linted
    assert "ok_model" not in diagnosed
    # The GPU id check on a GPU target: an id at or above --gpus is what Triton's "invalid or
    # unsupported gpu id" says; a GPU target with --gpus 0 is a host without GPUs.
    for gpus, needle in (("1", "names GPU id(s) 3"), ("0", "the target has no GPUs")):
        code, gpu_body = run_lint(str(repo), "--target", "gpu", "--gpus", gpus)
        ig = [f for f in gpu_body["findings"] if f["model"] == "ig_gpu_id"]
        assert [f["runbook"] for f in ig] == [c.RUNBOOK_INSTANCE_GROUP_INVALID], gpus
        assert needle in ig[0]["evidence"][0]["text"], gpus
        assert diagnosed["ig_gpu_id"] == ig[0]["runbook"]
    log = server.read_log()
    for name, runbook in LOADS_WITH_WARNING.items():
        assert f"successfully loaded '{name}'" in log and name not in diagnosed
        warned = [f for f in body["findings"] if f["model"] == name]
        assert [(f["runbook"], f["severity"]) for f in warned] == [(runbook, c.IMPACT_WARNING)]
    assert "successfully loaded 'two_versions'" in log


def test_lint_ensemble_tensor_agrees_with_real_triton(
    tmp_path: Path, fresh_triton_factory: Callable[..., LocalTriton]
) -> None:
    repo = build_repository(tmp_path / "repo", ENSEMBLE_TENSOR)
    code, body = run_lint(str(repo), "--target", "cpu")
    assert code == 1
    finding = body["findings"][0]
    assert (finding["model"], finding["runbook"]) == ("ens_bad_tensor", c.RUNBOOK_ENSEMBLE_DEPENDENCY)
    assert finding["file"] == "ens_bad_tensor/config.pbtxt" and finding["line"] == 6
    assert "NOPE" in finding["evidence"][0]["text"]
    server = fresh_triton_factory(repo, exit_on_error=False)
    lines = [ln for ln in server.read_log().splitlines() if "ens_bad_tensor" in ln and ln.startswith("E")]
    assert lines and all(diagnose_reason(ln) == c.RUNBOOK_ENSEMBLE_DEPENDENCY for ln in lines)


def test_lint_agrees_with_real_capture_of_stuck_python_models(tmp_path: Path) -> None:
    repo = build_repository(tmp_path / "repo", STUCK)
    code, body = run_lint(str(repo), "--target", "cpu")
    assert code == 1
    want = {m: rb for m, (_files, rb) in STUCK.items() if rb is not None}
    assert first_critical(body["findings"]) == want
    diagnosed = engine_first(diagnose_file(FIXTURES / "stuck-loading.log"))
    assert {m: diagnosed.get(m) for m in want} == want


def test_runtime_only_failures_are_not_guessed(tmp_path: Path) -> None:
    repo = build_repository(tmp_path / "repo", {m: BROKEN[m] for m in RUNTIME_ONLY | {"ok_model"}})
    code, body = run_lint(str(repo), "--target", "cpu", "--python", sys.executable)
    assert code == 0 and body["findings"] == []


def test_sample_repository() -> None:
    code, body = run_lint(str(SAMPLE_REPOSITORY), "--target", "cpu", "--python", sys.executable)
    assert code == 1
    got = first_critical(body["findings"])
    assert not set(got) & set(HEALTHY_MODELS)
    assert not [f for f in body["findings"] if f["model"] in HEALTHY_MODELS]
    assert got == {m: rb for m, rb in BROKEN_RUNBOOKS.items() if m != BROKEN_INIT}
    # The healthy models alone pass clean (exit 0).
    code, body = run_lint(str(SAMPLE_REPOSITORY), "--target", "cpu")
    healthy_only = [f for f in body["findings"] if f["model"] in HEALTHY_MODELS]
    assert healthy_only == []
