"""Start-up and run-time faults swept on the real Triton 2.51 (diag28), the classes the schema sweep
(``schema_faults``) left out: the server's command line and environment, a Python model's code at run time
(what ``execute`` returns, a stub that exits, ``finalize`` raising), and model control at run time (a reload
the server refuses, an ensemble's step unloaded, an unload under load).

Each fault's runbook was written down from the injected fault before triage ran; where 2.51 did something
else than expected the comment says what, and the label follows the log (a setting 2.51 accepts is a
healthy log, which must get no finding). Sources: core ``src/command_line_parser.cc``,
``src/model_repository_manager/model_repository_manager.cc``, python_backend ``src/pb_stub.cc``,
``src/python_be.cc`` (triton-inference-server, r24.10 = 2.51).
"""

# ruff: noqa: E501 - model code and configs are test data

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests
from corpus import OK_PY, config_pbtxt, run_until_exit
from test_diagnosis_schema_faults import ESCAPE_VARIABLE

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.stack.local_triton import LocalTriton, ServerInstall

Models = dict[str, tuple[dict[str, str], str | None]]

_HEAD = "import os\nimport time\n\nimport numpy as np\nimport triton_python_backend_utils as pb_utils\n\n\nclass TritonPythonModel:\n"
ECHO = "    def execute(self, requests):\n        return [pb_utils.InferenceResponse([pb_utils.Tensor('OUTPUT', pb_utils.get_input_tensor_by_name(r, 'INPUT').as_numpy())]) for r in requests]\n"


def _model(*methods: str) -> str:
    return _HEAD + "\n".join(methods)


def _py(name: str, code: str, extra: str = "") -> dict[str, str]:
    return {"config.pbtxt": config_pbtxt(name, extra=extra), "1/model.py": code}


OK: Models = {"ok_model": ({"config.pbtxt": config_pbtxt("ok_model"), "1/model.py": OK_PY}, None)}


# ------------------------------------------------------------------------------------------ start-up
# A stub that exits in initialize (os._exit) loads alone beside ok_model: among a dozen loading stubs 2.51
# aborted once in five servers (terminate called after throwing boost::interprocess::lock_exception).
INIT_EXIT = _py("init_exit", _model("    def initialize(self, args):\n        os._exit(7)\n", ECHO))


def _repository_is_a_file(repo: Path, _backends: Path) -> list[str]:
    shutil.rmtree(repo, ignore_errors=True)
    repo.write_text("not a directory\n")
    return []


def _second_repository(repo: Path, _backends: Path) -> list[str]:
    second = repo.with_name("repo2")
    (second / "ok_model" / "1").mkdir(parents=True, exist_ok=True)
    (second / "ok_model" / "config.pbtxt").write_text(config_pbtxt("ok_model"))
    (second / "ok_model" / "1" / "model.py").write_text(OK_PY)
    return [f"--model-repository={second}"]


def _python_backend_emptied(_repo: Path, backends: Path) -> list[str]:
    shutil.rmtree(backends / "python")
    (backends / "python").mkdir()
    return []


def _stub_exits_in_initialize(repo: Path, _backends: Path) -> list[str]:
    for rel, text in INIT_EXIT.items():
        (repo / "init_exit" / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / "init_exit" / rel).write_text(text)
    return []


Prepare = Callable[[Path, Path], list[str]]


# name -> (LocalTriton arguments, a change to the repository or backends before the start (its extra flags),
#          the runbook, the model it is about (None: server-wide); runbook None = a healthy log: no finding)
STARTUP: dict[str, tuple[dict[str, object], Prepare | None, str | None, str | None]] = {
    "repository-is-a-file": (
        {"exit_on_error": True},
        _repository_is_a_file,
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        None,
    ),
    # Labelled repository-path-invalid: two --model-repository paths hold one model's folder; core drops it
    # ("not unique across all model repositories") and the server fails to start with exit-on-error.
    "two-repositories-one-model": (
        {"exit_on_error": True},
        _second_repository,
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
        "ok_model",
    ),
    "load-model-unknown": (
        {"model_control_mode": "explicit", "load_models": ["no_such_model"], "exit_on_error": True},
        None,
        c.RUNBOOK_MODEL_FILE_MISSING,
        "no_such_model",
    ),
    "load-model-without-explicit": (
        {"extra_args": ["--load-model=ok_model"]},
        None,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        None,
    ),
    # Labelled server-option-invalid: the Python backend reads its --backend-config numbers with std::stol, and
    # 2.51 fails every Python model's load with "Invalid argument: stol" (its invalid_argument's what()).
    "backend-config-not-a-number": (
        {"exit_on_error": True, "extra_args": ["--backend-config=python,shm-default-byte-size=lots"]},
        None,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        "ok_model",
    ),
    "backend-config-below-minimum": (
        {"exit_on_error": True, "extra_args": ["--backend-config=python,shm-default-byte-size=1024"]},
        None,
        c.RUNBOOK_SHM_TOO_SMALL,
        "ok_model",
    ),
    "log-verbose-word": ({"extra_args": ["--log-verbose=high"]}, None, c.RUNBOOK_SERVER_OPTION_INVALID, None),
    "log-format-unknown": (
        {"extra_args": ["--log-format=json"]},
        None,
        c.RUNBOOK_SERVER_OPTION_INVALID,
        None,
    ),
    "stub-exits-in-initialize": (
        {"exit_on_error": True},
        _stub_exits_in_initialize,
        c.RUNBOOK_PYTHON_MODEL_ERROR,
        "init_exit",
    ),
    "python-backend-missing": (
        {"exit_on_error": True},
        _python_backend_emptied,
        c.RUNBOOK_BACKEND_NOT_FOUND,
        "ok_model",
    ),
    # Labelled server-option-invalid before the run; 2.51 accepted each and served ok_model: healthy logs.
    # (--model-control-mode is read case-blind; a poll interval of 0 is taken; an unwritable --log-file is
    # left for stdout without a word; a --backend-config for a backend that is not there is kept unused.)
    "model-control-mode-upper-case": (
        {"extra_args": ["--model-control-mode=EXPLICIT", "--load-model=ok_model"]},
        None,
        None,
        None,
    ),
    "poll-every-zero-seconds": (
        {"model_control_mode": "poll", "extra_args": ["--repository-poll-secs=0"]},
        None,
        None,
        None,
    ),
    "log-file-unwritable": (
        {"extra_args": ["--log-file=/proc/triton-sre-absent/triton.log"]},
        None,
        None,
        None,
    ),
    "backend-config-unknown-backend": (
        {"extra_args": ["--backend-config=no_such_backend,key=1"]},
        None,
        None,
        None,
    ),
    "strict-readiness-off": ({"strict_readiness": False, "log_verbose": 1}, None, None, None),
}

# ------------------------------------------------------------------------------------------ run time
ENSEMBLE = (
    'name: "ens"\nplatform: "ensemble"\nmax_batch_size: 0\n'
    'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUT" data_type: TYPE_FP32 dims: [ 4 ] } ]\n'
    'ensemble_scheduling { step [ { model_name: "step" model_version: -1 input_map { key: "INPUT" value: "IN" }'
    ' output_map { key: "OUTPUT" value: "OUT" } } ] }\n'
)
# What the reload of ``reloaded`` finds after its config changed (a word where a number goes).
RELOADED_BROKEN = 'name: "reloaded"\nbackend: "python"\nmax_batch_size: "eight"\n'

# model -> (files, the runbook of its first finding; None = no finding). Loaded at the start (explicit
# control), then driven by `test_diagnosis_runtime_faults.drive`.
RUNTIME: Models = {
    **OK,
    "step": (_py("step", _model(ECHO)), None),
    "ens": ({"config.pbtxt": ENSEMBLE, "1/.keep": ""}, c.RUNBOOK_ENSEMBLE_DEPENDENCY),
    "exec_raises": (
        _py(
            "exec_raises",
            _model("    def execute(self, requests):\n        raise RuntimeError('cannot run this batch')\n"),
        ),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "exec_wrong_count": (
        _py("exec_wrong_count", _model("    def execute(self, requests):\n        return []\n")),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    "exec_wrong_type": (
        _py("exec_wrong_type", _model("    def execute(self, requests):\n        return 'not a list'\n")),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    # Labelled python-model-error; 2.51 logs nothing when a stub exits in execute: the client alone gets
    # "Stub process 'exec_exit_0' is not healthy." (read by the client-side check below).
    "exec_exit": (_py("exec_exit", _model("    def execute(self, requests):\n        os._exit(3)\n")), None),
    "finalize_raises": (
        _py(
            "finalize_raises",
            _model(
                ECHO, "    def finalize(self):\n        raise RuntimeError('cannot release the handle')\n"
            ),
        ),
        c.RUNBOOK_PYTHON_MODEL_ERROR,
    ),
    # A decoupled model that never sends the final flag: its stream never ends; nothing is logged.
    "decoupled_no_final": (
        _py(
            "decoupled_no_final",
            _model(
                "    def execute(self, requests):\n        for r in requests:\n            r.get_response_sender().send(pb_utils.InferenceResponse([pb_utils.Tensor('OUTPUT', np.zeros(4, np.float32))]))\n        return None\n"
            ),
            extra="model_transaction_policy { decoupled: true }\n",
        ),
        None,
    ),
    "slow": (
        _py(
            "slow",
            _model(
                "    def execute(self, requests):\n        time.sleep(1.0)\n        return [pb_utils.InferenceResponse([pb_utils.Tensor('OUTPUT', pb_utils.get_input_tensor_by_name(r, 'INPUT').as_numpy())]) for r in requests]\n"
            ),
        ),
        None,
    ),
    # The reload is refused and version 1 keeps serving: the finding is a warning on the config's page.
    "reloaded": (_py("reloaded", _model(ECHO)), c.RUNBOOK_CONFIG_PARSE_ERROR),
}
# Models whose error is a request's, not a load's: they stay READY and their finding is a warning.
SERVING = {"exec_raises", "exec_wrong_count", "exec_wrong_type", "finalize_raises", "reloaded", "ens"}

INPUT = {"inputs": [{"name": "INPUT", "shape": [4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}


class FaultServer(LocalTriton):
    """A LocalTriton with Triton's escape variable set and a change made to its repository or backends
    before the start (``prepare``; the flags it returns go on the command line)."""

    def __init__(self, *args: Any, escape: str = "1", prepare: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.escape = escape
        self.prepare = prepare

    def environment(self, install: ServerInstall) -> dict[str, str]:
        return {**super().environment(install), ESCAPE_VARIABLE: self.escape}

    def _build_backend_dir(self, install: ServerInstall) -> Path:
        backends = super()._build_backend_dir(install)
        if self.prepare is not None:  # (before the command is built: its flags go on it)
            self.extra_args = (*self.extra_args, *self.prepare(self.model_repository, backends))
            self.prepare = None
        return backends


def same_both_ways(path: Path, report: Any) -> None:
    assert not report.unmatched, report.unmatched
    assert diagnose_events(parse_text(path.read_text(errors="replace"))).findings == report.findings


def quotes_its_line(path: Path, evidence: Any) -> bool:
    """The evidence is the line it names, cut (``…``) or with the reason main prints under a refused flag,
    or one of the lines an escaped message holds as ``\\n`` on that line (the exception, a frame)."""
    line = path.read_text(errors="replace").splitlines()[evidence.line - 1].strip()
    quoted = evidence.text.strip()
    pieces = (piece.strip() for piece in line.replace('\\"', '"').split("\\n"))
    inline = any(piece and piece.startswith(quoted.rstrip("…")) for piece in pieces)
    return bool(line) and (quoted.startswith(line) or line.startswith(quoted.rstrip("…")) or inline)


def capture_all(names: Iterable[str], capture: Callable[[str], Any], workers: int) -> dict[str, Any]:
    """``capture`` of each name, ``workers`` real servers at a time; its result by name."""
    names = list(names)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(names, pool.map(capture, names), strict=True))


def run_or_serve(server: LocalTriton, fails: bool, name: str, wait: float = 40) -> int | None:
    """A server meant to fail: run it until it exits (``wait`` seconds at most). Else start it, check
    ok_model answers, stop it. Its exit code."""
    if fails:
        return run_until_exit(server, wait)
    try:
        server.start()
        answer = requests.post(f"{server.http_url}/v2/models/ok_model/infer", json=INPUT, timeout=30)
        assert answer.status_code == requests.codes.ok, (name, answer.text)
    finally:
        code = server.stop()
    return code


def load_status(server: LocalTriton, model: str) -> tuple[str, int]:
    """Ask an explicit-control server to load ``model``: (the model, the HTTP status)."""
    url = f"{server.http_url}/v2/repository/models/{model}/load"
    return model, requests.post(url, timeout=120).status_code
