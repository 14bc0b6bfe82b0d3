"""PyTorch's "Cannot re-initialize CUDA in forked subprocess" in a Python model (diag44).

torch/cuda/__init__.py `_lazy_init` raises it in a process forked after CUDA was initialised (its
`_is_in_bad_fork` check): "Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing,
you must use the 'spawn' start method". In a Triton log it is a Python-backend model's error: model.py forked
a worker (multiprocessing's default start method on Linux, a DataLoader with workers) once the stub's process
had used CUDA. By the runbooks' Meaning that is the model's own code (python-model-error), not the driver's
page (cuda-driver-mismatch: no usable GPU). Each case is the message in a frame users paste it in.
"""

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import Report, diagnose_events
from triton_sre.diagnosis.logparse import parse_text

FORK = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, "
    "you must use the 'spawn' start method"
)
TORCH_CUDA = "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py"

# core's load verdict quoting the stub's error (pybind11's what(): the exception, then "At:" and the frames,
# innermost first), unescaped as releases before 24.06 print it
LOAD_FAILED = (
    "E1207 10:09:40.123456 1 model_lifecycle.cc:638] failed to load 'preprocess' version 1: Internal: "
    f"{FORK}\n\nAt:\n"
    f"  {TORCH_CUDA}(284): _lazy_init\n"
    "  /usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py(783): current_device\n"
    "  /models/preprocess/1/model.py(41): _decode\n"
    "  /usr/lib/python3.10/multiprocessing/pool.py(125): worker\n"
    "  /models/preprocess/1/model.py(30): initialize\n"
)
# the same verdict as 24.06+ writes it: one JSON-escaped string
LOAD_FAILED_ESCAPED = (
    "E1207 10:09:40.123456 1 model_lifecycle.cc:642] \"failed to load 'preprocess' version 1: Internal: "
    f"{FORK}\\n\\nAt:\\n  {TORCH_CUDA}(284): _lazy_init\\n"
    '  /models/preprocess/1/model.py(41): _decode\\n  /models/preprocess/1/model.py(30): initialize\\n"\n'
)
# CPython's traceback of model.py's initialize: a DataLoader's worker re-raised in the parent
# (torch/_utils.py ExceptionWrapper.reraise: "Caught <type> in DataLoader worker process N.\nOriginal ...")
DATALOADER_TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/models/preprocess/1/model.py", line 52, in initialize\n'
    "    batch = next(iter(loader))\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/_utils.py", line 694, in reraise\n'
    "    raise exception\n"
    "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\n"
    "Original Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/data/_utils/worker.py", line 308, in '
    "_worker_loop\n"
    "    data = fetcher.fetch(index)\n"
    f'  File "{TORCH_CUDA}", line 284, in _lazy_init\n'
    "    raise RuntimeError(\n"
    f"{FORK}\n"
)
# ... and a multiprocessing Pool's: the child's traceback, then the parent's ending in the same exception
POOL_TRACEBACK = (
    'multiprocessing.pool.RemoteTraceback: \n"""\nTraceback (most recent call last):\n'
    '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 125, in worker\n'
    "    result = (True, func(*args, **kwds))\n"
    f'  File "{TORCH_CUDA}", line 284, in _lazy_init\n'
    "    raise RuntimeError(\n"
    f'{FORK}\n"""\n\nThe above exception was the direct cause of the following exception:\n\n'
    "Traceback (most recent call last):\n"
    '  File "/models/preprocess/1/model.py", line 30, in initialize\n'
    "    outs = pool.map(self._warm, range(4))\n"
    '  File "/usr/lib/python3.10/multiprocessing/pool.py", line 774, in get\n'
    "    raise self._value\n"
    f"{FORK}\n"
)


def _report(text: str) -> Report:
    return diagnose_events(parse_text(text))


@pytest.mark.parametrize(
    "text",
    [LOAD_FAILED, LOAD_FAILED_ESCAPED, DATALOADER_TRACEBACK, POOL_TRACEBACK],
    ids=["load-failed", "load-failed-24.06-escaped", "dataloader-traceback", "pool-traceback"],
)
def test_the_model_forking_after_cuda_is_the_models_code(text: str) -> None:
    report = _report(text)
    assert report.has_failure
    finding = report.findings[0]
    assert finding.runbook == c.RUNBOOK_PYTHON_MODEL_ERROR
    assert finding.model == "preprocess"
    assert "Cannot re-initialize CUDA" in " ".join(e.text for e in finding.evidence) + (finding.message or "")


@pytest.mark.parametrize(
    "text",
    [
        # the stub's own E line with the exception and no frames (python_backend pb_stub.cc)
        f"E1207 10:09:40.100000 1 pb_stub.cc:330] {FORK}\n",
        # the exception line alone, as a user pastes the end of a traceback
        f"{FORK}\n",
    ],
    ids=["stub-line", "exception-line"],
)
def test_the_message_alone_names_the_page(text: str) -> None:
    """No model.py frame and no load verdict: the message itself says the model's code forked (without the
    rule these read as an unexplained failure)."""
    assert _report(text).findings[0].runbook == c.RUNBOOK_PYTHON_MODEL_ERROR


def test_a_program_run_from_a_shell_is_no_model() -> None:
    """A console script's traceback (a client or a batch job beside Triton) forking after CUDA: no Triton
    model's code, so not python-model-error."""
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/bin/embed-batch", line 8, in <module>\n'
        "    sys.exit(main())\n"
        '  File "/usr/local/lib/python3.10/dist-packages/embedder/cli.py", line 41, in main\n'
        "    pool.map(encode, shards)\n"
        f"{FORK}\n"
    )
    assert all(f.runbook != c.RUNBOOK_PYTHON_MODEL_ERROR for f in _report(text).findings)


@pytest.mark.parametrize(
    "text",
    [
        # vLLM choosing spawn itself because CUDA is initialised (vllm/utils.py): a warning, nothing failed
        "WARNING 12-16 10:12:38 [utils.py:2525] We must use the `spawn` multiprocessing start method. "
        "Overriding VLLM_WORKER_MULTIPROC_METHOD to 'spawn'. See "
        "https://docs.vllm.ai/en/latest/usage/troubleshooting.html#python-multiprocessing for more "
        "information. Reason: CUDA is initialized\n",
        # a model's own INFO line that mentions the error it avoids
        f"I1207 10:09:39.500000 1 model.py:22] start method 'spawn': a forked worker would raise {FORK}\n",
    ],
    ids=["vllm-spawn-warning", "info-mention"],
)
def test_a_mention_is_no_failure(text: str) -> None:
    assert not _report(text).has_failure


def test_cudas_own_initialization_error_stays_the_drivers() -> None:
    """A model whose CUDA call fails to initialise (cudaErrorInitializationError) names no fork: the driver's
    page, as before."""
    text = (
        "E1207 10:09:40.123456 1 model_lifecycle.cc:638] failed to load 'preprocess' version 1: Internal: "
        "RuntimeError: CUDA error: initialization error\n"
    )
    assert _report(text).findings[0].runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH
