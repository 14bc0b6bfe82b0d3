"""The corpus' remaining misses, fixed by class from the wording's source (diag37, issue 20).

- A Python traceback whose first frame is a console script (the launcher pip writes into a ``bin`` folder for
  a package's entry point: distlib's script template ends with ``sys.exit(<main>())`` on line 8, no ``.py``
  suffix) is a program run from a shell, not the model's ``model.py`` the Python backend's stub imports:
  python-model-error does not claim it; a cause stated beside it decides (transformers' warning that it
  cannot write its cache folder, ``utils/hub.py``), else the fallback quotes the traceback.
- FastDeploy's Python package wraps the import of its compiled extension (``python/fastdeploy/
  c_lib_wrap.py.in``: ``raise RuntimeError("FastDeploy initalized failed!")`` from a bare ``except``; later
  releases append ``Error: <the loader's error>``): the package is there, its native part does not load
  (python-shared-library-missing), unless the appended error names another cause.
- The NVIDIA driver's own user-space libraries (``libcuda.so.1``, ``libnvidia-ml.so.1``) come from the host's
  driver, mounted into a GPU container by the NVIDIA Container Toolkit (libnvidia-container ``src/nvc_info.c``:
  ``compute_libs``, ``utility_libs``); the loader not finding them (glibc: ``error while loading shared
  libraries: <lib>: cannot open shared object file``) means no driver is visible where the process runs:
  cuda-driver-mismatch, not a library of another release. The image's own CUDA libraries keep their pages.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

LOGS = Path(__file__).parent / "data" / "logs"

# transformers src/transformers/utils/hub.py (4.x): logged when os.makedirs / the cache version file fails.
_HF_CACHE = (
    "There was a problem when trying to write in your cache folder (/.cache/huggingface/hub). You should set "
    "the environment variable TRANSFORMERS_CACHE to a writable directory."
)
# diffusers src/diffusers/utils/hub_utils.py: the same check, its own wording.
_DIFFUSERS_CACHE = (
    "There was a problem when trying to write in your cache folder (/root/.cache/huggingface/diffusers). "
    "Please, ensure the directory exists and can be written to."
)


def _findings(text: str):  # type: ignore[no-untyped-def]
    return diagnose_events(parse_text(text)).findings


def _first(text: str) -> str | None:
    findings = _findings(text)
    return findings[0].runbook if findings else None


def _console_script_run(tool: str, exc: str) -> str:
    # A console script's traceback as CPython prints it: the launcher's line 8 first (distlib's template).
    return (
        "Traceback (most recent call last):\n"
        f'  File "/usr/local/bin/{tool}", line 8, in <module>\n'
        "    sys.exit(main())\n"
        f'  File "/usr/local/lib/python3.10/dist-packages/{tool.replace("-", "_")}/cli.py", line 75, in main\n'
        "    files = repo.download_all()\n"
        f"{exc}\n"
    )


@pytest.mark.parametrize("warning", [_HF_CACHE, _DIFFUSERS_CACHE])
def test_a_console_scripts_failure_after_an_unwritable_cache_is_the_permission(warning: str) -> None:
    log = f"{warning}\n" + _console_script_run("huggingface-cli", 'OSError: "Errors fetching files"')
    findings = _findings(log)
    assert findings[0].runbook == c.RUNBOOK_PERMISSION_DENIED
    assert "cache folder" in findings[0].evidence[0].text


def test_a_console_scripts_traceback_alone_is_the_fallback_not_the_model() -> None:
    findings = _findings(_console_script_run("download-to-cache", "ValueError: bad value"))
    assert [f.runbook for f in findings][:1] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]
    assert findings[0].evidence[0].text.startswith("Traceback")


@pytest.mark.parametrize(
    "frame",
    [
        # The model's own file (the stub imports it): the model's Python code.
        '  File "/models/preprocessing/1/model.py", line 3, in <module>',
        # A script run by path (python3 tool.py) is no console-script launcher either.
        '  File "/workspace/tools/convert.py", line 8, in <module>',
    ],
)
def test_a_model_or_script_traceback_stays_the_models_code(frame: str) -> None:
    log = f"Traceback (most recent call last):\n{frame}\n    TOKENIZER = load()\nKeyError: 'tokenizer'\n"
    assert _first(log) == c.RUNBOOK_PYTHON_MODEL_ERROR


# The Python backend's stub at auto-complete (python_backend src/pb_stub.cc: "Failed to initialize Python stub
# for auto-complete: <exception>") and core's load failure quoting it.
_FASTDEPLOY = "RuntimeError: FastDeploy initalized failed!"


@pytest.mark.parametrize(
    "line",
    [
        f"I0530 07:35:33.346340 178 pb_stub.cc:245]  Failed to initialize Python stub for auto-complete: {_FASTDEPLOY}",
        f"E0530 07:35:33.355016 152 model_lifecycle.cc:596] failed to load 'postprocess' version 1: Internal: {_FASTDEPLOY}",
        f"E0530 07:35:33.355016 152 model_lifecycle.cc:596] failed to load 'postprocess' version 1: Internal: {_FASTDEPLOY} Error: libpaddle_inference.so: cannot open shared object file: No such file or directory",
    ],
)
def test_fastdeploys_extension_that_does_not_load_is_a_shared_library(line: str) -> None:
    assert _first(line + "\n") == c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING


@pytest.mark.parametrize(
    ("detail", "runbook"),
    [
        ("/lib64/libstdc++.so.6: version `GLIBCXX_3.4.21' not found", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        (
            "/lib/x86_64-linux-gnu/libp11-kit.so.0: undefined symbol: ffi_type_pointer, version LIBFFI_BASE_7.0",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
    ],
)
def test_fastdeploys_appended_error_decides_when_it_names_another_cause(detail: str, runbook: str) -> None:
    line = f"E0530 07:35:33.355016 152 model_lifecycle.cc:596] failed to load 'm' version 1: Internal: {_FASTDEPLOY} Error: {detail}\n"
    assert _first(line) == runbook


@pytest.mark.parametrize(
    ("case", "runbook"),
    [
        ("heldout16/fastdeploy-2003.log", c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING),
        ("heldout17/nim-deploy-51.log", c.RUNBOOK_PERMISSION_DENIED),
    ],
)
def test_the_corpus_logs_of_these_classes(case: str, runbook: str) -> None:
    assert _first((LOGS / case).read_text(encoding="utf-8")) == runbook


@pytest.mark.parametrize(
    "line",
    [
        "./tritonserver: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object file: No such file or directory",
        "/opt/tritonserver/bin/tritonserver: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or directory",
        "E0101 00:00:00.000000 1 model_lifecycle.cc:642] failed to load 'm' version 1: Internal: ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
    ],
)
def test_the_drivers_own_libraries_missing_is_no_usable_driver(line: str) -> None:
    assert _first(line + "\n") == c.RUNBOOK_CUDA_DRIVER_MISMATCH


@pytest.mark.parametrize(
    ("line", "runbook"),
    [
        # The image's CUDA toolkit library, imported by a Python package: the package's native dependency.
        (
            "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
            c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        ),
        # TensorRT's library for the backend (tensorrt_backend loader.cc): another release's library.
        (
            "unable to create TensorRT runtime: libnvinfer.so.10: cannot open shared object file",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
    ],
)
def test_the_images_own_libraries_keep_their_pages(line: str, runbook: str) -> None:
    assert _first(line + "\n") == runbook
