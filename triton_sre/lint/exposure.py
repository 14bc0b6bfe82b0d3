"""The repository features known issues name (known_issues.yaml's ``exposure:``), one detector each.

A detector is a pure function of a model directory (its parsed config and listing) and `Files`, the one
reader of the few model files a detector looks into (model.py, a vLLM model.json, a TorchScript archive's
member names); it returns where the model shows the feature (`Site`), or None. `DETECTORS` is the closed
set of names an entry's ``exposure.features`` may use.
"""

from __future__ import annotations

import ast
import functools
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from triton_sre.inputs import MAX_SOURCE_BYTES, InputFileError, read_bounded
from triton_sre.lint.backend import PYTHON, backend_of, default_filename
from triton_sre.lint.placement import KIND_AUTO, KIND_GPU
from triton_sre.lint.repository import ModelDir
from triton_sre.lint.upgrade import ENV_PARAMETER, MODEL_DIR_VARIABLE

__all__ = ["DETECTORS", "Files", "Site"]

VLLM_MODEL_JSON = "model.json"
"""The vLLM backend's engine arguments, in each version folder."""
FIL_MODEL_TYPE = "model_type"
OPENVINO_DEVICE = "TARGET_DEVICE"
METRIC_FAMILY = "MetricFamily"


@dataclass(frozen=True, slots=True)
class Site:
    file: Path
    line: int
    what: str
    """What the model does there, for the finding's message."""
    version: str | None = None


class Files:
    """Reads the model files detectors look into, each at most once and bounded (None: unreadable)."""

    def __init__(self) -> None:
        self._read = functools.cache(self._bounded)
        self._members = functools.cache(self._zip_names)

    @staticmethod
    def _bounded(path: Path) -> str | None:
        try:
            return read_bounded(path, MAX_SOURCE_BYTES).decode("utf-8", errors="replace")
        except (InputFileError, OSError):
            return None

    @staticmethod
    def _zip_names(path: Path) -> tuple[str, ...] | None:
        try:
            with zipfile.ZipFile(path) as archive:  # the central directory only, nothing extracted
                return tuple(archive.namelist())
        except (zipfile.BadZipFile, OSError, ValueError):
            return None

    def text(self, path: Path) -> str | None:
        return self._read(path)

    def zip_names(self, path: Path) -> tuple[str, ...] | None:
        return self._members(path)


Detector = Callable[[ModelDir, Files], "Site | None"]


def _versioned(model: ModelDir, name: str | None) -> list[tuple[str, Path]]:
    if not name:
        return []
    return [(v, model.path / v / name) for v in model.version_dirs if name in model.version_files.get(v, ())]


def _parameter(model: ModelDir, key: str) -> str | None:
    params = model.config.parameters if model.config is not None else {}
    return str(params[key].string_value) if key in params else None


def _config_site(model: ModelDir, what: str, *paths: str) -> Site:
    return Site(model.config_path, model.line_of(*paths), what)


def execution_env_model_directory(model: ModelDir, files: Files) -> Site | None:
    """A Python model whose EXECUTION_ENV_PATH is written relative to $$TRITON_MODEL_DIRECTORY."""
    env = _parameter(model, ENV_PARAMETER)
    if backend_of(model.config) != PYTHON or env is None or MODEL_DIR_VARIABLE not in env:
        return None
    return _config_site(model, f"{ENV_PARAMETER} {env} uses {MODEL_DIR_VARIABLE}", "parameters")


def _metric_family_line(source: str) -> int | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None  # the compile check reports it
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name == METRIC_FAMILY:
                return node.lineno
    return None


def python_custom_metrics(model: ModelDir, files: Files) -> Site | None:
    """A Python model whose model.py creates a custom metric (``pb_utils.MetricFamily(...)``)."""
    if backend_of(model.config) != PYTHON:
        return None
    for version, path in _versioned(model, default_filename(model.config)):
        source = files.text(path)
        line = _metric_family_line(source) if source is not None else None
        if line is not None:
            return Site(path, line, f"{path.name} creates custom metrics ({METRIC_FAMILY})", version)
    return None


def _fil_model_type(kind: str) -> Detector:
    def detect(model: ModelDir, files: Files) -> Site | None:
        if backend_of(model.config) != "fil" or _parameter(model, FIL_MODEL_TYPE) != kind:
            return None
        return _config_site(model, f"a FIL model of {FIL_MODEL_TYPE} {kind}", "parameters")

    detect.__doc__ = f"A FIL model whose {FIL_MODEL_TYPE} is {kind}."
    return detect


def _backend(name: str) -> Detector:
    def detect(model: ModelDir, files: Files) -> Site | None:
        if backend_of(model.config) != name:
            return None
        return _config_site(model, f"a model of the {name} backend", "backend", "platform")

    detect.__doc__ = f"A model the {name} backend serves (backend or platform)."
    return detect


def onnx_tensorrt_accelerator(model: ModelDir, files: Files) -> Site | None:
    """An ONNX model run by ONNX Runtime's TensorRT execution provider (gpu_execution_accelerator)."""
    if backend_of(model.config) != "onnxruntime":
        return None
    accelerators = model.config.optimization.execution_accelerators.gpu_execution_accelerator
    if not any(a.name == "tensorrt" for a in accelerators):
        return None
    where = "optimization.execution_accelerators.gpu_execution_accelerator"
    return _config_site(model, "ONNX Runtime's TensorRT execution provider", f"{where}.name", where)


def _instances_per_gpu(groups: Any) -> int:
    """The most instances one GPU gets: a group's count on each GPU it lists (every GPU when none)."""
    on_every: int = 0
    on_one: dict[int, int] = {}
    for group in groups:
        if group.kind not in (KIND_GPU, KIND_AUTO):
            continue
        count = max(int(group.count), 1)
        if not group.gpus:
            on_every += count
        for gpu in set(group.gpus):
            on_one[gpu] = on_one.get(gpu, 0) + count
    return on_every + max(on_one.values(), default=0)


def several_instances_per_gpu(model: ModelDir, files: Files) -> Site | None:
    """instance_group places two or more instances of the model on one GPU."""
    if model.config is None:
        return None
    most = _instances_per_gpu(model.config.instance_group)
    if most < 2:
        return None
    return _config_site(model, f"{most} instances on one GPU", "instance_group.count", "instance_group")


def torchscript_legacy_format(model: ModelDir, files: Files) -> Site | None:
    """A PyTorch model file in TorchScript's legacy format (a ``model.json`` archive, before PyTorch 1.4)."""
    if backend_of(model.config) != "pytorch":
        return None
    for version, path in _versioned(model, default_filename(model.config)):
        # the archive's own top-level records (``<archive>/model.json``), not a file saved with it
        # (torch.jit.save's _extra_files go under ``<archive>/extra/``)
        tops = {name.split("/", 1)[-1] for name in files.zip_names(path) or ()}
        if "model.json" in tops:
            return Site(path, 1, f"{path.name} is a legacy-format TorchScript archive (model.json)", version)
    return None


def vllm_tensor_parallel(model: ModelDir, files: Files) -> Site | None:
    """A vLLM model with tensor_parallel_size > 1 on the default (multiprocessing) executor, not Ray."""
    if backend_of(model.config) != "vllm":
        return None
    for version, path in _versioned(model, VLLM_MODEL_JSON):
        text = files.text(path)
        try:
            args = json.loads(text) if text is not None else None
        except ValueError:
            continue
        if not isinstance(args, dict):
            continue
        size = args.get("tensor_parallel_size")
        if isinstance(size, int) and size > 1 and args.get("distributed_executor_backend") != "ray":
            line = next((n for n, t in enumerate(text.splitlines(), 1) if "tensor_parallel_size" in t), 1)
            return Site(path, line, f"tensor_parallel_size {size} without Ray", version)
    return None


def openvino_gpu_device(model: ModelDir, files: Files) -> Site | None:
    """An OpenVINO model whose TARGET_DEVICE parameter names the GPU plugin."""
    device = _parameter(model, OPENVINO_DEVICE)
    if backend_of(model.config) != "openvino" or device is None or "GPU" not in device.upper():
        return None
    return _config_site(model, f"{OPENVINO_DEVICE} {device}", "parameters")


DETECTORS: dict[str, Detector] = {
    "execution-env-model-directory": execution_env_model_directory,
    "python-custom-metrics": python_custom_metrics,
    "fil-xgboost-json": _fil_model_type("xgboost_json"),
    "fil-treelite-checkpoint": _fil_model_type("treelite_checkpoint"),
    "onnx-tensorrt-accelerator": onnx_tensorrt_accelerator,
    "several-instances-per-gpu": several_instances_per_gpu,
    "torchscript-legacy-format": torchscript_legacy_format,
    "vllm-tensor-parallel": vllm_tensor_parallel,
    "openvino-gpu-device": openvino_gpu_device,
    "onnxruntime-backend": _backend("onnxruntime"),
    "tensorrt-backend": _backend("tensorrt"),
    "tensorrtllm-backend": _backend("tensorrtllm"),
    "fastertransformer-backend": _backend("fastertransformer"),
}
"""Every feature name an entry's ``exposure.features`` may use -> its detector."""
