"""Issue 20: the LLM engines' start-up errors (the ``vllm`` and ``tensorrt_llm`` groups of library_errors.yaml), each
in every frame users paste it in (docs/llm-engine-errors.md).

A Python exception (``ValueError: ...``) reaches the log as the Python stub reports it (``Failed to initialize Python
stub: <text>`` on a pb_stub line, then core's ``failed to load 'm' version 1: Internal: <text>`` with the stub's
``At:`` frames, JSON-escaped since 24.06 and unescaped before), as a bare CPython traceback, and for vLLM through its
own logger: the 0.4-0.7 engine's ``ERROR mm-dd hh:mm:ss file.py:NN] <message>`` with the traceback under the same
prefix, and the V1 engine's ``EngineCore failed to start.`` traceback (``[file.py:NN]``, 0.8 on, with the
``(EngineCore_DP0 pid=N)`` process prefix from 0.10) followed by the API side's ``Engine core initialization failed``.
vLLM 0.10+ validates its config classes with pydantic (``1 validation error for ModelConfig`` / ``Value error,
<message>``). TensorRT-LLM's Python runtime logs ``[TRT-LLM] [E] <message>`` (``[MPI_Rank N]`` before the letter in a
multi-rank world), also relayed by a launcher's own logger. TensorRT-LLM's C++ texts (``[TensorRT-LLM][ERROR] ...``)
come bare, inside core's ``unexpected error when creating modelInstanceState: <what>`` (the C++ backend), and inside
the Python backend's stub as ``RuntimeError: <what>`` (all_models' ``tensorrt_llm`` model on ``backend: python``,
which builds ``trtllm.Executor`` in its model.py).

The first finding must be the table's page in every frame.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.library_errors import LibraryError, library_errors
from triton_sre.diagnosis.lineshape import relay_prefix
from triton_sre.diagnosis.logparse import parse_text

DOC = Path(__file__).resolve().parent.parent / "docs" / "llm-engine-errors.md"
GROUPS = ("vllm", "tensorrt_llm")
TABLE = tuple(e for e in library_errors() if e.group in GROUPS)

_EXCEPTION = re.compile(r"^(?P<type>(?:[a-z_]+\.)*[A-Z]\w*(?:Error|Exception)): (?P<message>.*)$", re.S)
_TRTLLM_CPP = "[TensorRT-LLM][ERROR] "
_MODEL_DIR = {"vllm": "/opt/tritonserver/backends/vllm", "tensorrt_llm": "/models/tensorrt_llm/1"}
_AT = {
    "vllm": ["/opt/tritonserver/backends/vllm/model.py(265): _init_engine", "/opt/tritonserver/backends/vllm/model.py(187): initialize"],
    "tensorrt_llm": ["/models/tensorrt_llm/1/model.py(1012): initialize"],
}


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _stub_and_core(group: str, text: str, *, escaped: bool) -> str:
    at = "\n\nAt:\n" + "".join(f"  {frame}\n" for frame in _AT[group])
    model = "vllm_model" if group == "vllm" else "tensorrt_llm"
    if escaped:
        return (
            f'I1207 10:01:02.624943 179 pb_stub.cc:388] "Failed to initialize Python stub: {_escaped(text + at)}"\n'
            f"E1207 10:01:03.100000 179 model_lifecycle.cc:654] \"failed to load '{model}' version 1: Internal: {_escaped(text + at)}\"\n"
        )
    return (
        f"E1207 10:01:02.624943 179 pb_stub.cc:325] Failed to initialize Python stub: {text}{at}"
        f"E1207 10:01:03.100000 179 model_lifecycle.cc:626] failed to load '{model}' version 1: Internal: {text}{at}"
    )


def _traceback(group: str, text: str) -> str:
    where = (
        '  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/arg_utils.py", line 1024, in create_engine_config\n'
        if group == "vllm"
        else '  File "/usr/local/lib/python3.10/dist-packages/tensorrt_llm/runtime/model_runner_cpp.py", line 283, in from_dir\n'
    )
    return f"Traceback (most recent call last):\n{where}    raise ValueError(\n{text}\n"


def _vllm_v0(text: str, message: str) -> str:
    head = "ERROR 12-07 10:01:02 engine.py:366] "
    return (
        f"{head}{message}\n"
        f"{head}Traceback (most recent call last):\n"
        f'{head}  File "/usr/local/lib/python3.10/dist-packages/vllm/engine/multiprocessing/engine.py", line 357, in run_mp_engine\n'
        f"{head}    engine = MQLLMEngine.from_engine_args(engine_args=engine_args,\n"
        f"{head}{text}\n"
    )


def _vllm_v1(text: str, *, pid_prefix: bool) -> str:
    core = "(EngineCore_DP0 pid=1394) " if pid_prefix else ""
    api = "(APIServer pid=1370) " if pid_prefix else ""
    head = f"{core}ERROR 12-07 10:01:02 [core.py:708] "
    return (
        f"{head}EngineCore failed to start.\n"
        f"{head}Traceback (most recent call last):\n"
        f'{head}  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/core.py", line 699, in run_engine_core\n'
        f"{head}    engine_core = EngineCoreProc(*args, **kwargs)\n"
        f"{head}{text}\n"
        f"{core}Process EngineCore_DP0:\n"
        f"{core}Traceback (most recent call last):\n"
        f'{core}  File "/usr/lib/python3.12/multiprocessing/process.py", line 314, in _bootstrap\n'
        f"{core}    self.run()\n"
        f"{core}{text}\n"
        f"{api}Traceback (most recent call last):\n"
        f'{api}  File "/usr/local/lib/python3.12/dist-packages/vllm/v1/engine/utils.py", line 782, in wait_for_engine_startup\n'
        f'{api}    raise RuntimeError("Engine core initialization failed. "\n'
        f"{api}RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {{}}\n"
    )


def _pydantic(message: str) -> str:
    return (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        f"  Value error, {message} [type=value_error, input_value=ArgsKwargs((), {{'model': '/models/llama/1/hf', 'task': 'auto'}}), input_type=ArgsKwargs]\n"
        "    For further information visit https://errors.pydantic.dev/2.11/v/value_error\n"
    )


def _trtllm_python(message: str) -> dict[str, str]:
    return {
        "trtllm-logger": f"[12/07/2026-10:01:02] [TRT-LLM] [E] {message}\n",
        "trtllm-logger-rank": f"[12/07/2026-10:01:02] [TRT-LLM] [MPI_Rank 1] [E] {message}\n",
        "trtllm-relayed": f"INFO 2026-12-07 10:01:02.123 launch.py:88] [TRT-LLM] [E] {message}\n",
    }


def frames(entry: LibraryError) -> dict[str, str]:
    text, group = entry.text, entry.group
    exc = _EXCEPTION.match(text)
    if exc is None:
        # TensorRT-LLM's C++ texts: with their logger's prefix or bare (a TLLM_THROW's what()).
        what = text if text.startswith(_TRTLLM_CPP) else f"{_TRTLLM_CPP}{text}"
        return {
            "bare": f"{what}\n",
            "cpp-backend": (
                "E1207 10:01:03.100000 179 model_lifecycle.cc:654] \"failed to load 'tensorrt_llm' version 1: Internal:"
                f' unexpected error when creating modelInstanceState: {_escaped(what)}"\n'
            ),
            "python-backend": _stub_and_core("tensorrt_llm", f"RuntimeError: {what}", escaped=True),
        }
    message = exc["message"]
    shown = {
        "stub+core": _stub_and_core(group, text, escaped=True),
        "stub+core-unescaped": _stub_and_core(group, text, escaped=False),
        "traceback": _traceback(group, text),
    }
    if group == "vllm":
        shown["vllm-v0"] = _vllm_v0(text, message)
        shown["vllm-v1"] = _vllm_v1(text, pid_prefix=False)
        shown["vllm-v1-pid"] = _vllm_v1(text, pid_prefix=True)
        if exc["type"] == "ValueError" and "vllm/config.py" in entry.source:
            shown["pydantic"] = _pydantic(message)
    else:
        shown.update(_trtllm_python(message))
    return shown


def first_runbook(log: str) -> str:
    report = diagnose_events(parse_text(log))
    return report.findings[0].runbook if report.findings else "(no finding)"


CONSEQUENCE = "Engine core initialization failed"
"""An entry that is a consequence (the page of what caused it): the V1 frame carries it after every other text."""

CASES = [
    pytest.param(entry, frame, log, id=f"{entry.group}-{i}-{frame}")
    for i, entry in enumerate(TABLE)
    for frame, log in frames(entry).items()
    if not (CONSEQUENCE in entry.text and frame.startswith("vllm-v1"))
]


@pytest.mark.parametrize(("entry", "frame", "log"), CASES)
def test_llm_engine_text_lands_on_its_page_in_every_frame(entry: LibraryError, frame: str, log: str) -> None:
    assert first_runbook(log) == entry.runbook, (frame, log)


def test_the_v1_wrapper_alone_is_no_page_and_names_its_line() -> None:
    """``Engine core initialization failed. See root cause above.`` with the cause cut off: the fallback, quoting the
    wrapper, not the configuration (the vLLM paths of its frames) nor the model's code (the stub's frames)."""
    log = _traceback("vllm", "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}")
    findings = diagnose_events(parse_text(log)).findings
    assert [f.runbook for f in findings] == [c.RUNBOOK_UNKNOWN_LOAD_FAILURE]
    assert any("See root cause above" in e.text for e in findings[0].evidence)


def test_a_trt_llm_python_line_relayed_at_info_keeps_its_own_level() -> None:
    """A launcher relaying TensorRT-LLM's Python logger (``[TRT-LLM] [E]``) under its own INFO prefix: the relay's
    prefix is recognised (`lineshape.relay_prefix`) and the inner letter decides, E a failure, I quiet."""
    failed = "INFO 2026-12-07 10:01:02.123 launch.py:88] [TRT-LLM] [MPI_Rank 1] [E] Executor worker returned an unexpected value"
    quiet = "ERROR 2026-12-07 10:01:02.123 launch.py:88] [TRT-LLM] [I] Set nccl_plugin to None."
    assert relay_prefix(failed) is not None and relay_prefix(quiet) is not None
    assert [f.severity for f in diagnose_events(parse_text(failed + "\n")).findings] == ["critical"]
    assert diagnose_events(parse_text(quiet + "\n")).findings == ()


READY = """I1207 10:01:03.000000 1 server.cc:674]
+-------------+---------+--------+
| Model       | Version | Status |
+-------------+---------+--------+
| vllm_model  | 1       | READY  |
+-------------+---------+--------+
I1207 10:01:03.100000 1 grpc_server.cc:2463] Started GRPCInferenceService at 0.0.0.0:8001
"""

HEALTHY_VLLM = """INFO 12-16 10:12:37 [__init__.py:216] Automatically detected platform cuda.
WARNING 12-16 10:12:38 [utils.py:2525] We must use the `spawn` multiprocessing start method. Overriding VLLM_WORKER_MULTIPROC_METHOD to 'spawn'. See https://docs.vllm.ai/en/latest/usage/troubleshooting.html#python-multiprocessing for more information. Reason: CUDA is initialized
INFO 12-16 10:12:39 [config.py:2003] Chunked prefill is enabled with max_num_batched_tokens=8192.
WARNING 12-16 10:12:39 [config.py:1338] Default sampling parameters have been overridden by the model's Hugging Face generation config recommended from the model creator. If this is not intended, please relaunch vLLM instance with `--generation-config vllm`.
(EngineCore_DP0 pid=1394) INFO 12-16 10:12:45 [core.py:65] Initializing a V1 LLM engine (v0.10.1) with config: model='/models/llama', speculative_config=None, tokenizer='/models/llama', skip_tokenizer_init=False, dtype=torch.bfloat16, max_seq_len=32768, download_dir=None, load_format=auto, tensor_parallel_size=1
(EngineCore_DP0 pid=1394) INFO 12-16 10:12:52 [gpu_model_runner.py:2007] Model loading took 14.99 GiB and 5.3 seconds
(EngineCore_DP0 pid=1394) INFO 12-16 10:13:01 [gpu_worker.py:276] Available KV cache memory: 10.05 GiB
(EngineCore_DP0 pid=1394) INFO 12-16 10:13:01 [kv_cache_utils.py:849] GPU KV cache size: 82,336 tokens
(EngineCore_DP0 pid=1394) INFO 12-16 10:13:01 [kv_cache_utils.py:853] Maximum concurrency for 32,768 tokens per request: 2.51x
Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:12<00:00,  5.21it/s]
(EngineCore_DP0 pid=1394) INFO 12-16 10:13:14 [gpu_model_runner.py:2708] Graph capturing finished in 12 secs, took 0.51 GiB
(EngineCore_DP0 pid=1394) INFO 12-16 10:13:14 [core.py:214] init engine (profile, create kv cache, warmup model) took 22.04 seconds
huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...
To disable this warning, you can either:
	- Avoid using `tokenizers` before the fork if possible
	- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)
"""

HEALTHY_TRTLLM = """[TensorRT-LLM][WARNING] max_tokens_in_paged_kv_cache is not specified, will use default value
[TensorRT-LLM][WARNING] enable_kv_cache_reuse is not specified, will be set to false
[TensorRT-LLM][WARNING] cross_kv_cache_fraction is not specified, error if it's encoder-decoder model, otherwise ok
[TensorRT-LLM][WARNING] kv_cache_free_gpu_mem_fraction is not specified, will use default value of 0.9 or max_tokens_in_paged_kv_cache
[TensorRT-LLM][INFO] Engine version 0.17.0 found in the config file, assuming engine(s) built by new builder API.
[TensorRT-LLM][WARNING] Device 0 peer access Device 1 is not available.
[TensorRT-LLM][INFO] Max KV cache pages per sequence: 32
[TensorRT-LLM][INFO] [MemUsageChange] Allocated 2.15 GiB for max tokens in paged KV cache (17536).
[12/16/2026-10:12:40] [TRT-LLM] [I] Set nccl_plugin to None.
[12/16/2026-10:12:40] [TRT-LLM] [MPI_Rank 0] [W] Found pynvml==11.5.0 and cuda driver version 535.129.03. Please use pynvml>=11.5.0 and cuda driver>=526 to get accurate memory usage.
"""


@pytest.mark.parametrize("chatter", [HEALTHY_VLLM, HEALTHY_TRTLLM], ids=["vllm", "tensorrt_llm"])
def test_a_healthy_llm_start_up_raises_no_error(chatter: str) -> None:
    """Every model READY: the engines' INFO and WARNING chatter (parameter defaults, CUDA graph capture, the KV cache
    figures, the tokenizers fork notice) is no error finding."""
    report = diagnose_events(parse_text(chatter + READY))
    assert [f.runbook for f in report.findings if f.severity in ("error", "critical")] == []


def test_the_docs_table_lists_every_entry() -> None:
    rows = [line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith("| `` ")]
    for entry in TABLE:
        quoted = "| `` " + entry.text.replace("|", "\\|") + " `` |"
        row = next((r for r in rows if r.startswith(quoted)), None)
        assert row is not None, entry.text
        assert f"[{entry.runbook}](" in row, row
    assert len(rows) == len(TABLE)
