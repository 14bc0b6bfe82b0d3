"""The faults run on every Triton release the ``nvidia-pytriton`` wheels on PyPI carry (releases32, issue 20).

Every real-Triton sweep before this one ran Triton 2.51 only. The older wheels carry older real servers
that run here on the CPU with this interpreter's Python backend stub (0.3.0 on: stubs for 3.8-3.11);
``WHEELS`` maps each wheel picked to the release its ``tritonserver`` prints (server_version, run here).
The 0.1.x-0.2.x wheels (2.29/2.33) ship one stub linked to their own libpython 3.8 and cannot load a
Python model with this interpreter: left out.

The list was fixed and labelled before any older release's log was captured or triaged. Each fault is
taken from an existing sweep definition (``corpus.BROKEN``/``STUCK``, ``schema_faults``, ``runtime_faults``)
with the runbook that sweep wrote from the injected fault, and is one every release can express: no flag,
field or feature newer than 2.36 (r23.07). One server per fault and release, beside ``ok_model``, so the
fault is the log's first finding. ``HEALTHY`` start-ups must get no ``error``/``critical`` finding.

Where a release does something else than 2.51 with a fault (accepts it, or another failure comes first),
the label follows what that release's log shows and ``RELEASE_LABELS`` says why, as the 2.51 sweeps do.
"""

# ruff: noqa: E501 - model configs are test data

from __future__ import annotations

from dataclasses import dataclass, field

from corpus import BROKEN, OK_PY, STUCK, config_pbtxt
from diag29_faults import FLAGS
from diag29_faults import MODELS as DIAG29_MODELS
from diag31_faults import FAULTS as DIAG31_FAULTS
from runtime_faults import ECHO, ENSEMBLE, STARTUP, Prepare, _model
from schema_faults import SCHEMA_FAULTS

Files = dict[str, str]

WHEELS: dict[str, str] = {
    "0.3.0": "2.36.0",
    "0.4.2": "2.39.0",
    "0.5.2": "2.42.0",
    "0.5.5": "2.44.0",
    "0.5.8": "2.46.0",
    "0.5.10": "2.48.0",
    "0.5.12": "2.50.0",
    "0.7.0": "2.51.0",
}
"""nvidia-pytriton wheel -> the Triton release its binary prints (`server_version`), one wheel per release.
0.3.0-0.4.0 carry 2.36, 0.4.1-0.4.2 2.39, 0.5.0 2.41, 0.5.1-0.5.2 2.42, 0.5.3 2.43, 0.5.4-0.5.6 2.44,
0.5.7 2.45, 0.5.8 2.46, 0.5.9 2.47, 0.5.10 2.48, 0.5.11 2.49, 0.5.12 2.50, 0.5.13-0.7.0 2.51 (pytriton's
CHANGELOG; the binaries of the wheels run here confirmed it). 0.7.0 is the venv's, the sweeps' 2.51."""

OK = {"ok_model": BROKEN["ok_model"]}


@dataclass(frozen=True)
class Fault:
    runbook: str | None
    """The first finding's runbook as the defining sweep labelled it; None = a healthy log."""
    origin: str
    """The sweep definition it comes from (module and key)."""
    models: dict[str, tuple[Files, str | None]] = field(default_factory=dict)
    """Models put in the repository beside ``ok_model``."""
    server: dict[str, object] = field(default_factory=lambda: {"exit_on_error": True})
    """LocalTriton arguments."""
    prepare: Prepare | None = None
    """A change to the repository or backends before the start (runtime_faults.FaultServer)."""
    stuck: bool = False
    """The server neither fails nor serves (a stub that never connects): stopped after a while."""


def _model_fault(source: dict[str, tuple[Files, str | None]], name: str, origin: str, *deps: str) -> Fault:
    files, runbook = source[name]
    return Fault(runbook, f"{origin}[{name!r}]", {name: (files, runbook), **{d: source[d] for d in deps}})


def _startup_fault(name: str, table: dict = STARTUP, origin: str = "runtime_faults.STARTUP") -> Fault:
    kwargs, prepare, runbook, _about = table[name]
    return Fault(runbook, f"{origin}[{name!r}]", server=dict(kwargs), prepare=prepare)


def _flag_fault(name: str) -> Fault:
    flags, runbook = FLAGS[name]
    return Fault(runbook, f"diag29_faults.FLAGS[{name!r}]", server={"extra_args": list(flags)})


FAULTS: dict[str, Fault] = {
    # --- the configuration file
    "cp_syntax": _model_fault(BROKEN, "cp_syntax", "corpus.BROKEN"),
    "cp_unknown_field": _model_fault(BROKEN, "cp_unknown_field", "corpus.BROKEN"),
    "name_mismatch": _model_fault(BROKEN, "name_mismatch", "corpus.BROKEN"),
    "db_priority_default": _model_fault(SCHEMA_FAULTS, "db_priority_default", "schema_faults.SCHEMA_FAULTS"),
    "gpu_kind": _model_fault(BROKEN, "gpu_kind", "corpus.BROKEN"),
    # --- the repository layout and the model's files
    "vd_no_version": _model_fault(BROKEN, "vd_no_version", "corpus.BROKEN"),
    "mf_no_model_py": Fault(
        STUCK["mf_no_model_py"][1],
        "corpus.STUCK['mf_no_model_py']",
        {"mf_no_model_py": STUCK["mf_no_model_py"]},
        stuck=True,
    ),
    "warmup_input_name": _model_fault(SCHEMA_FAULTS, "warmup_input_name", "schema_faults.SCHEMA_FAULTS"),
    # --- backends and platforms
    "bk_typo": _model_fault(BROKEN, "bk_typo", "corpus.BROKEN"),
    "platform_short": _model_fault(SCHEMA_FAULTS, "platform_short", "schema_faults.SCHEMA_FAULTS"),
    # --- Python model code
    "py_module": _model_fault(BROKEN, "py_module", "corpus.BROKEN"),
    "py_init_exc": _model_fault(BROKEN, "py_init_exc", "corpus.BROKEN"),
    "py_syntax": _model_fault(BROKEN, "py_syntax", "corpus.BROKEN"),
    # --- inputs, outputs, batching against what the model declares
    "dims_mismatch": _model_fault(BROKEN, "dims_mismatch", "corpus.BROKEN"),
    "dt_mismatch": _model_fault(BROKEN, "dt_mismatch", "corpus.BROKEN"),
    "mbs_unsupported": _model_fault(BROKEN, "mbs_unsupported", "corpus.BROKEN"),
    # --- ensembles
    "ens_missing": _model_fault(BROKEN, "ens_missing", "corpus.BROKEN"),
    "ens_dtype": _model_fault(SCHEMA_FAULTS, "ens_dtype", "schema_faults.SCHEMA_FAULTS"),
    # --- the server: repositories, flags, backends
    "repository-is-a-file": _startup_fault("repository-is-a-file"),
    "two-repositories-one-model": _startup_fault("two-repositories-one-model"),
    "log-verbose-word": _startup_fault("log-verbose-word"),
    "load-model-without-explicit": _startup_fault("load-model-without-explicit"),
    "python-backend-missing": _startup_fault("python-backend-missing"),
    "backend-config-below-minimum": _startup_fault("backend-config-below-minimum"),
}

# The second round, fixed and labelled (from the same sweeps) after the first round was scored and before
# any of its own logs was captured: config text and enums, version folders, the model's files, another
# backend, Python model code, dims, sequence batching, instance groups, ensembles, the command line.
ROUND2: dict[str, Fault] = {
    "json_config": _model_fault(SCHEMA_FAULTS, "json_config", "schema_faults.SCHEMA_FAULTS"),
    "cp_bad_enum": _model_fault(BROKEN, "cp_bad_enum", "corpus.BROKEN"),
    "vd_non_integer": _model_fault(BROKEN, "vd_non_integer", "corpus.BROKEN"),
    "vd_policy": _model_fault(BROKEN, "vd_policy", "corpus.BROKEN"),
    "model_py_dir": _model_fault(SCHEMA_FAULTS, "model_py_dir", "schema_faults.SCHEMA_FAULTS"),
    "label_missing": _model_fault(SCHEMA_FAULTS, "label_missing", "schema_faults.SCHEMA_FAULTS"),
    "warmup_data_file": _model_fault(SCHEMA_FAULTS, "warmup_data_file", "schema_faults.SCHEMA_FAULTS"),
    "bk_onnx": _model_fault(BROKEN, "bk_onnx", "corpus.BROKEN"),
    "py_no_class": _model_fault(SCHEMA_FAULTS, "py_no_class", "schema_faults.SCHEMA_FAULTS"),
    "py_auto_complete_raises": _model_fault(
        SCHEMA_FAULTS, "py_auto_complete_raises", "schema_faults.SCHEMA_FAULTS"
    ),
    "env_missing": _model_fault(SCHEMA_FAULTS, "env_missing", "schema_faults.SCHEMA_FAULTS"),
    "dims_invalid": _model_fault(BROKEN, "dims_invalid", "corpus.BROKEN"),
    "reshape_size": _model_fault(SCHEMA_FAULTS, "reshape_size", "schema_faults.SCHEMA_FAULTS"),
    "seq_control_no_values": _model_fault(
        SCHEMA_FAULTS, "seq_control_no_values", "schema_faults.SCHEMA_FAULTS"
    ),
    "ig_gpu_id": _model_fault(SCHEMA_FAULTS, "ig_gpu_id", "schema_faults.SCHEMA_FAULTS"),
    "ens_no_scheduling": _model_fault(SCHEMA_FAULTS, "ens_no_scheduling", "schema_faults.SCHEMA_FAULTS"),
    "ens_step_version": _model_fault(DIAG29_MODELS, "ens_step_version", "diag29_faults.MODELS", "step"),
    "backend-config-not-a-number": _startup_fault("backend-config-not-a-number"),
    "log-format-unknown": _startup_fault("log-format-unknown"),
    "grpc-port-word": _startup_fault("grpc-port-word", DIAG31_FAULTS, "diag31_faults.FAULTS"),
    "backend-directory-missing": _startup_fault(
        "backend-directory-missing", DIAG31_FAULTS, "diag31_faults.FAULTS"
    ),
    "no-auto-complete-none": _startup_fault("no-auto-complete-none", DIAG31_FAULTS, "diag31_faults.FAULTS"),
    "metrics-config-no-value": _flag_fault("metrics-config-no-value"),
    "cache-config-unknown-cache": _flag_fault("cache-config-unknown-cache"),
}
FAULTS.update(ROUND2)

STEP: Files = {"config.pbtxt": config_pbtxt("step"), "1/model.py": _model(ECHO)}
BATCHING: Files = {
    "config.pbtxt": config_pbtxt(
        "batching", mbs=8, extra="dynamic_batching { max_queue_delay_microseconds: 2000 }\n"
    ),
    "1/model.py": OK_PY,
}
HEALTHY: dict[str, Fault] = {
    "healthy-models": Fault(
        None,
        "releases32: ok_model, an echo model and a dynamic-batching model",
        {"step": (STEP, None), "batching": (BATCHING, None)},
    ),
    "healthy-ensemble": Fault(
        None,
        "runtime_faults.ENSEMBLE over its echo step",
        {"step": (STEP, None), "ens": ({"config.pbtxt": ENSEMBLE, "1/.keep": ""}, None)},
    ),
}
CASES: dict[str, Fault] = {**FAULTS, **HEALTHY}

# Set after the captures were read, before any was triaged: what the release's log shows instead.
# --load-model without --model-control-mode=explicit: server's "Use of '--load-model' requires setting
# '--model-control-mode=explicit' as well." came with r24.07 (2.48, server#7259); 2.36-2.46 take the flag,
# ignore it and serve the whole repository: healthy logs.
LOAD_MODEL_ACCEPTED = ("2.36.0", "2.39.0", "2.42.0", "2.44.0", "2.46.0")
RELEASE_LABELS: dict[tuple[str, str], str | None] = {
    **{(release, "load-model-without-explicit"): None for release in LOAD_MODEL_ACCEPTED},
}
"""(release, case) -> the label that release's log calls for, where it differs from the sweep's (why, each).

Kept as labelled: log-verbose-word on 2.36, whose parser (server r23.07 ``ParseOption<int>``: a bare
``std::stoi``) dies on ``terminate called after throwing an instance of 'std::invalid_argument'`` / ``what():
stoi`` before its first log line, the flag's bad number all the same (r23.10 on: ``Bad option``); warmup_input_name,
which every release words as the sample's missing input (``expected 1 inputs but got 0 inputs``)."""


def label(release: str, case: str) -> str | None:
    return RELEASE_LABELS.get((release, case), CASES[case].runbook)
