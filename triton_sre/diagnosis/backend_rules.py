"""Pure data: the libraries BELOW Triton's backends, in their own words, and the runbook each means.

A backend hands its model to a library that reports failures in its own format, and Triton quotes
(or the process prints) that text unchanged:

- dmlc-core / Treelite (the FIL backend, Morpheus' and Merlin's XGBoost/LightGBM models): a
  ``CHECK`` that fails prints ``file:line: Check failed: <condition> (<a> vs. <b>) : <message>``
  (``dmlc/logging.h``; Treelite's ``TREELITE_CHECK`` the same); the frontends' messages for a file
  they cannot parse say ``Ill-formed <format> model file: ...`` (``src/frontend/xgboost.cc``,
  ``src/frontend/lightgbm.cc``, Treelite 0.9 to 4.x).
- ONNX Runtime (``core/framework/tensorprotoutils.cc``, 1.8 on): an initializer kept in an external
  data file that is shorter than the graph says, ``External initializer: <name> offset: <n> size to
  read: <n> given file_length: <n> are out of bounds or can not be read in full.`` The file was cut
  (a partial download, a Git LFS pointer, a copy that dropped the ``.data`` file).
- The CUDA runtime: ``invalid device function`` (``cudaErrorInvalidDeviceFunction``, 98, the text of
  ``cudaGetErrorString``): the binary has no kernel for this GPU's architecture (built with another
  ``-arch``/``SM`` list), as ``no kernel image is available for execution on the device``
  (``cudaErrorNoKernelImageForDevice``, 209) says since CUDA 9.
- ONNX Runtime's custom-op libraries (``core/session/custom_ops.cc`` / ``onnxruntime_c_api.cc``,
  ``RegisterCustomOpsLibrary``, 1.x): ``RegisterCustomOpsLibrary: Failed to load library`` (``dlopen``
  refused the library) and ``... Entry point RegisterCustomOps not found in library``: a custom-op
  library (mmdeploy's, TensorRT plugins wrapped for ORT) built against another ONNX Runtime or other
  libraries than the backend ships, library-version-mismatch's "custom op built against other libraries".
- ONNX Runtime's contract between its framework and an execution provider
  (``core/framework/execution_provider.cc``, ``IExecutionProvider::GenerateMetaDefId``, 1.8 on):
  ``ORT_ENFORCE`` fails with ``IExecutionProvider constructor must be called with true for
  use_metadef_id_creator`` when a provider compiled for another ONNX Runtime build (a self-built
  backend or provider library copied into another release) calls into this one: library-version-mismatch.
- TensorRT's runtime (``runtime.cpp::deserializeCudaEngine``, 8 to 10): ``Engine deserialization
  failed.`` after the archive reader's own assertion; callers and users word the same step ``Could not
  deserialize engine`` (polygraphy), ``Unable to deserialise TRT engine``, or misspell it: the
  ``deseriali[sz]`` stem next to engine/plan and a failure word decides, whatever the suffix.
- glibc's dynamic loader (``elf/dl-tls.c``, ``_dl_allocate_static_tls``): ``cannot allocate memory in
  static TLS block`` is a library that ``dlopen`` cannot place (too much initial-exec TLS, a
  preloaded allocator like jemalloc, libgomp in a packed Python environment). It is a loader
  failure, not memory exhaustion: `rules.py` and `classes.py` keep it out of
  ``host-resource-exhausted``; no page covers it, so it stays ``unknown-load-failure`` with its text.
"""

from __future__ import annotations

from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule, rx

__all__ = ["BELOW_BACKEND_RULES", "STATIC_TLS"]

_CANNOT = r"(?:unable to|failed to|fails? to|cannot|can't|could not|couldn't)"

STATIC_TLS: Final = r"\bin static TLS block"
"""glibc ``elf/dl-tls.c``: the loader's failure that reads like memory exhaustion."""

BELOW_BACKEND_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        rx(
            r"\bIll-formed (?:XGBoost|LightGBM|[\w-]+) model file\b",
            r"\bExternal initializer: [^\n]{0,300}?\bare out of bounds or can not be read in full",
        ),
        "Treelite src/frontend/xgboost.cc, lightgbm.cc (0.9 to 4.x); ONNX Runtime "
        "core/framework/tensorprotoutils.cc (1.8 on)",
    ),
    CauseRule(
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
        rx(
            r"\bEngine deseriali[sz]\w* fail",
            rf"\b{_CANNOT} deseriali[sz]\w*(?: the)?(?: cuda| trt| tensorrt)? (?:engine|plan)\b",
            r"\bdeseriali[sz]\w* (?:of )?(?:the )?(?:cuda |trt |tensorrt )?engine\b[^\n]{0,20}\bfail",
        ),
        "TensorRT runtime.cpp deserializeCudaEngine ('Engine deserialization failed.', 8-10), polygraphy "
        "'Could not deserialize engine'; the deseriali[sz] stem as users word it (British -ise, typos)",
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(r"\bRegisterCustomOpsLibrary: (?:Failed to load library|Entry point RegisterCustomOps not found)"),
        "ONNX Runtime RegisterCustomOpsLibrary (onnxruntime_c_api.cc / custom_ops.cc, 1.x)",
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(r"\bIExecutionProvider constructor must be called with true for use_metadef_id_creator"),
        "ONNX Runtime core/framework/execution_provider.cc GenerateMetaDefId ORT_ENFORCE (1.8 on)",
    ),
    CauseRule(
        c.RUNBOOK_PLATFORM_UNSUPPORTED,
        rx(r"\binvalid device function\b"),
        "CUDA runtime cudaGetErrorString(cudaErrorInvalidDeviceFunction)",
    ),
)
