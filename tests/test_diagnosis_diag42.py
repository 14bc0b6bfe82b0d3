"""Page boundaries where blind labels and the engine disagreed, decided from the wordings' sources (diag42,
issue 20; docs/diagnosis-boundaries.md). Each case quotes the wording as its source prints it; the corpus logs
are not read here (their labels stay as collected).

Changed by this round:

- ``No module named 'model'`` is the Python backend's stub importing ``model`` from the backend's own folder
  (python_backend ``src/python_be.cc`` sets ``runtime_modeldir`` whenever the backend's location is not
  ``<backend-directory>/python`` spelt exactly; ``src/pb_stub.cc`` ``ModelContext::Init`` then takes the
  model for a Python-based backend's): model.py is not where the stub looks, model-file-missing.
- A shared library the loader cannot find (glibc's ``error while loading shared libraries: <lib>: cannot open
  shared object file``) inside TensorRT-LLM's error is library-version-mismatch, as it is everywhere else; the
  driver's own libraries stay cuda-driver-mismatch.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else None


def _load_failed(model: str, reason: str) -> str:
    # core model_lifecycle.cc's line for a failed load, as 2.51 prints it (quoted message).
    return (
        f"E1207 10:00:00.000000 1 model_lifecycle.cc:642] \"failed to load '{model}' version 1: {reason}\"\n"
    )


# -- `No module named 'model'`: the stub looking for model.py in the backend's folder --------------------


@pytest.mark.parametrize(
    "text",
    [
        # server#7410's status cell, core's model table.
        "| add_sub        | 1       | UNAVAILABLE: Internal: ModuleNotFoundError: No module named 'model' |\n",
        _load_failed("add_sub", "Internal: ModuleNotFoundError: No module named 'model'"),
        # python_backend's fix commit quoting the error alone (a trailing slash in --backend-directory).
        "ModuleNotFoundError: No module named 'model'\n",
    ],
)
def test_no_module_named_model_is_the_model_file_not_where_the_stub_looks(text: str) -> None:
    assert _first(text) == c.RUNBOOK_MODEL_FILE_MISSING


@pytest.mark.parametrize(
    ("module", "page"),
    [
        # A package the stub's interpreter lacks: the import's page.
        ("models", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("transformers", c.RUNBOOK_PYTHON_MODULE_MISSING),
        ("model_utils", c.RUNBOOK_PYTHON_MODULE_MISSING),
        # A package that imported without its submodule: another release of it (MISSING_SUBMODULE).
        ("model.layers", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        # The stub's own import of the version folder's file as `<version>.model`: the path is no Python file.
        ("1.model", c.RUNBOOK_MODEL_FILE_INVALID),
    ],
)
def test_other_module_names_keep_their_pages(module: str, page: str) -> None:
    assert _first(_load_failed("m", f"Internal: ModuleNotFoundError: No module named '{module}'")) == page


# -- a library the loader cannot find: library-version-mismatch whatever prints it ---------------------


@pytest.mark.parametrize(
    ("text", "page"),
    [
        # glibc's ld.so before main, inside TensorRT-LLM's error (changed: was llm-backend-config).
        (
            "[TensorRT-LLM][ERROR] executorWorker: error while loading shared libraries: libnvinfer.so.10: cannot "
            "open shared object file: No such file or directory\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        (
            "/usr/bin/python3: error while loading shared libraries: libtritonserver.so: cannot open shared object "
            "file: No such file or directory\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # glibc elf/rtld.c: "ERROR: ld.so: object '%s' from %s cannot be preloaded (%s): ignored."
        (
            "ERROR: ld.so: object '/plugins/libmmdeploy_tensorrt_ops.so' from LD_PRELOAD cannot be preloaded "
            "(cannot open shared object file): ignored.\n",
            c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        ),
        # The driver's own library keeps the driver's page, inside the LLM backend's error too.
        (
            "[TensorRT-LLM][ERROR] executorWorker: error while loading shared libraries: libcuda.so.1: cannot open "
            "shared object file: No such file or directory\n",
            c.RUNBOOK_CUDA_DRIVER_MISMATCH,
        ),
        # A Python extension's libpython: its own page.
        (
            "ImportError: libpython3.10.so.1.0: cannot open shared object file: No such file or directory\n",
            c.RUNBOOK_PYTHON_SHARED_LIBRARY_MISSING,
        ),
    ],
)
def test_a_library_the_loader_cannot_find(text: str, page: str) -> None:
    assert _first(text) == page
