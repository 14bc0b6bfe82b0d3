"""Round 25 of issue 20: the class behind heldout34's scored miss.

A missing SUBMODULE of a package that imported (`No module named 'pkg.sub'`) is another release of
that package, not a package to install. Python's import system names the first part of a dotted
import it cannot find (importlib._bootstrap._find_and_load_unlocked), so the dotted name says the
parent imported. Checked on wordings from other sources (named in comments), wrapped the ways
Triton's logs carry a Python exception, and on the held-out case.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> str:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else ""


def _wrapped(exception: str) -> list[str]:
    """The exception alone, in core's failed-load line (24.x, quoted), and in the stub's traceback."""
    return [
        exception,
        f"E0812 22:00:07.156851 164 model_lifecycle.cc:641] \"failed to load 'model_py' version 1: Internal: {exception}\\n\\nAt:\\n  /models/model_py/1/model.py(12): initialize\\n\"",
        "Traceback (most recent call last):\n"
        '  File "/models/model_py/1/model.py", line 3, in <module>\n'
        "    import helper\n"
        f"{exception}\n"
        "E0812 22:00:07.157000 164 model_lifecycle.cc:641] \"failed to load 'model_py' version 1: Internal: Failed to initialize stub\"",
    ]


@pytest.mark.parametrize(
    "exception",
    [
        # PyTorch 2.0 removed torch._six; DeepSpeed < 0.8.3 and pytorch-nlp still import it (the
        # troubleshooting notes of many repositories: "removed in PyTorch 2.0+").
        "ModuleNotFoundError: No module named 'torch._six'",
        # numpy 2 pickles name numpy._core, which numpy 1 lacks: a model saved under numpy 2 and loaded
        # under numpy 1 ("Model was saved with numpy 2.x but loading with numpy 1.x").
        "ModuleNotFoundError: No module named 'numpy._core'",
        # NVTabular moved ColumnGroup out (NVIDIA-Merlin/HugeCTR#364: "an old API from v0.6.1").
        "ModuleNotFoundError: No module named 'nvtabular.column_group'",
        # transformers before a model's release has no module for its architecture.
        "ModuleNotFoundError: No module named 'transformers.models.qwen2_vl'",
    ],
)
def test_a_missing_submodule_of_an_imported_package_is_another_release(exception: str) -> None:
    for text in _wrapped(exception):
        assert _first(text) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH, text


@pytest.mark.parametrize(
    "exception",
    [
        "ModuleNotFoundError: No module named 'vllm'",  # the package itself: install it
        "ModuleNotFoundError: No module named 'transformers'",
        # PEP 420 namespace packages: the parent says nothing (protobuf is simply not installed).
        "ModuleNotFoundError: No module named 'google.protobuf'",
        "ModuleNotFoundError: No module named 'nvidia.dali'",
        # a module shadows the package (a local tokenizers.py): not a release of anything
        "ModuleNotFoundError: No module named 'tokenizers.models'; 'tokenizers' is not a package",
    ],
)
def test_a_missing_package_stays_a_missing_module(exception: str) -> None:
    for text in _wrapped(exception):
        assert _first(text) == c.RUNBOOK_PYTHON_MODULE_MISSING, text


def test_an_llm_backend_error_naming_a_missing_submodule_is_another_release() -> None:
    """vLLM's backend error carrying the import (the LLM page yields to the import's own class)."""
    text = "E1122 10:02:11.000000 1 model.py:300] [vllm] Error generating stream: No module named 'vllm.inputs.data'"
    assert _first(text) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    text = "E1122 10:02:11.000000 1 model.py:300] [vllm] Error generating stream: No module named 'vllm'"
    assert _first(text) == c.RUNBOOK_PYTHON_MODULE_MISSING


def test_heldout34_case() -> None:
    case = next(
        x for x in accuracy.load("heldout34") if x.name == "gemma-forge-journey-vllm-backend-module-missing"
    )
    assert accuracy.top1(case) == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
