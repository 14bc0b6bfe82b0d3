"""Pure data: the model-format libraries' load errors the engine lacked (issue 20 item 1, diag41):
ONNX Runtime (and the onnx checker), libtorch's ``torch::jit::load``, TensorFlow's SavedModel loader and
the backend around it, TensorRT's deserializer before 8.0 and from 10.0, OpenVINO's IR reader.
`library_errors.py` holds the principle by which a text maps to a page and the table
(``library_errors.yaml``, groups ``onnxruntime``, ``pytorch``, ``tensorflow``, ``tensorrt``,
``openvino``); docs/framework-errors.md lays every text out in the frames users paste it in. These
patterns are appended to `library_errors.LIBRARY_RULES` (page order by `rules.PRIORITY`),
`FRAMEWORK_FIRST_RULES` go before every other rule but CUDA's frame rules, and `INFO_LEVEL_FAILURE`
makes `linereader` read a failure a library logs at INFO.

By page:

- a file the model needs beside the graph is not there (ONNX external data, a SavedModel's variables,
  the TorchScript archive itself): ``model-file-missing``;
- the file is there but not what the backend loads (a ``torch.save`` state dict or eager model in place of
  TorchScript, a SavedModel without the ``serve`` tag set, an IR naming an extension's opset that nothing
  loaded): ``model-file-invalid``;
- a file newer than the library (the onnx checker's IR version), or an op the loaded libraries have no kernel
  for on the device the model was traced on: ``library-version-mismatch``;
- a signature input or output of a type Triton does not exchange: ``model-io-unsupported``;
- a TensorRT plugin the process never loaded (TensorRT 7's and 10's wordings): ``unknown-load-failure``, as
  the 8.x wordings already were; TensorRT 7's and 10's wordings of a plan from another TensorRT, platform
  or serialization format: ``trt-engine-incompatible``.
"""

from __future__ import annotations

import re
from typing import Final

from triton_sre import conventions as c
from triton_sre.diagnosis.stack_rules import CauseRule, rx

__all__ = [
    "FRAMEWORK_FIRST_RULES",
    "FRAMEWORK_RULES",
    "INFO_LEVEL_FAILURE",
    "ORT_OWN_DOMAIN",
]

# The operator domains ONNX and ONNX Runtime define (onnxruntime/core/graph/constants.h); any other domain
# (TensorRT's `TRT`, onnxruntime-extensions' `ai.onnx.contrib`, a project's own) holds custom ops.
ORT_OWN_DOMAIN: Final = (
    r"(?:ai\.onnx(?:\.ml|\.preview(?:\.training)?|\.training)?|com\.microsoft(?:\.nchwc|\.experimental)?"
    r"|com\.ms\.internal\.nhwc)"
)

# TensorRT's plugin registry finding no creator for a plugin layer of the plan: TensorRT 7 ("INVALID_ARGUMENT:
# getPluginCreator could not find plugin <name> version <v>", safeDeserializationUtils.cpp "Serialization
# Error in load: 0 (Cannot deserialize plugin since corresponding IPluginCreator not found in Plugin
# Registry)"), 8.x ("getPluginCreator could not find plugin: <name> version: <v>", pluginV2Runner.cpp) and 10
# ("IPluginRegistry::getCreator: ... Cannot find plugin: <name>, version: <v>"). The plugin's library was
# never loaded into the process: not a plan from another TensorRT, not a Triton backend missing.
_TRT_PLUGIN_MISSING: Final = (
    r"\bgetPluginCreator could not find plugin\b",
    r"\bCannot deserialize plugin since corresponding IPluginCreator not found\b",
    r"\bCannot find plugin: [^\s,]+, version: ",
)

FRAMEWORK_FIRST_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_UNKNOWN_LOAD_FAILURE,
        rx(*_TRT_PLUGIN_MISSING),
        "TensorRT plugin registry, 7.x safeDeserializationUtils.cpp, 8.x pluginV2Runner.cpp, 10.x "
        "IPluginRegistry (library_errors.yaml, group tensorrt)",
    ),
)
"""A TensorRT plugin missing decides over the words around it (core's "unable to create TensorRT engine",
the word classes' "plugin ... not found"): placed after CUDA's frame rules by `rules._build`."""

FRAMEWORK_RULES: Final[tuple[CauseRule, ...]] = (
    CauseRule(
        c.RUNBOOK_MODEL_FILE_MISSING,
        rx(
            # ONNX Runtime reading an initializer's external data (core/framework/tensorprotoutils.cc:
            # "GetFileLength for <path> failed:<reason>", inside "Deserialize tensor <name> failed."): the
            # .data file the graph names is not beside model.onnx.
            r"\bDeserialize tensor \S+ failed\.\s*GetFileLength for \S+ failed:",
            # TensorFlow's checkpoint reader (core/util/tensor_slice_reader.cc): a SavedModel without its
            # variables/ folder (or an empty one).
            r"\bUnsuccessful TensorSliceReader constructor: Failed to (?:find any matching files for"
            r"|get matching files on) ",
            # libtorch's file adapter (caffe2/serialize/file_adapter.cc, 1.x-2.x): the archive is not there.
            r"\bopen file failed because of errno 2 on fopen\b",
        ),
        "ONNX Runtime core/framework/tensorprotoutils.cc; TensorFlow core/util/tensor_slice_reader.cc; "
        "PyTorch caffe2/serialize/file_adapter.cc",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_FILE_INVALID,
        rx(
            # libtorch 1.4-1.7's CAFFE_ENFORCE wording of an archive without TorchScript's constants (a
            # torch.save state dict or eager model): "[enforce fail at inline_container.cc:222] . file not
            # found: archive/constants.pkl" (1.8+: "PytorchStreamReader failed locating file constants.pkl").
            r"\bfile not found: \S*/constants\.pkl\b",
            # TensorFlow's loader (cc/saved_model/reader.cc FindMetaGraphDef): no meta graph carries the tags
            # asked for (an export without the serve tag set).
            r"\bCould not find meta graph def matching supplied tags\b",
            # OpenVINO's IR deserializer meeting a layer of the `extension` opset (openvino-tokenizers, a
            # custom op) no extension registered: the op library is not loaded, as ONNX's custom domains.
            r"\bfrom unsupported opset: extension\b",
            # ONNX Runtime's graph check naming the node (core/graph/graph.cc: "In Node, (<name>, <op>,
            # <domain>, <index>) ... Error No Op registered for <op> with domain_version of <n>") in a custom
            # domain: its op library is not loaded (the split library_errors.LIBRARY_RULES makes of
            # "<domain>:<op>(<v>) is not a registered function/op"); "" is ai.onnx.
            rf'\bIn Node, \("[^"\n]*", \w+, "(?!{ORT_OWN_DOMAIN}")[^"\n]+", -?\d+\)'
            r"[^\n]*\bNo Op registered for ",
        ),
        "PyTorch caffe2/serialize/inline_container.cc (1.4-1.7); TensorFlow cc/saved_model/reader.cc; "
        "OpenVINO src/frontends/ir/src/ir_deserializer.cpp",
    ),
    CauseRule(
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
        rx(
            # onnx's checker (onnx/checker.cc): the file's IR version is newer than this onnx reads.
            r"\bYour model ir_version \d+ is higher than the checker's \(\d+\)",
            # c10's dispatcher: the op has no kernel for CUDA in the libraries loaded (a CPU-only build of
            # libtorch or torchvision, or a custom op library built without CUDA) while the model was traced
            # on a GPU.
            r"\bCould not run '[\w:.]+' with arguments from the 'CUDA' backend\b",
        ),
        "onnx onnx/checker.cc check_model; PyTorch aten/src/ATen/core/dispatch/OperatorEntry.cpp",
    ),
    CauseRule(
        c.RUNBOOK_MODEL_IO_UNSUPPORTED,
        # tensorflow_backend's SavedModel loader (mirror/tensorflow_backend_tf.cc): a signature tensor of a
        # dtype the backend does not exchange (DT_VARIANT, DT_RESOURCE).
        rx(r"\bunable to process (?:input|output) '[^'\n]+' for '[^'\n]+', unsupported datatype '"),
        "triton-inference-server/tensorflow_backend mirror/tensorflow_backend_tf.cc",
    ),
)
"""Patterns for the framework texts no other rule read (`library_errors.LIBRARY_RULES` appends them)."""

INFO_LEVEL_FAILURE: Final = re.compile(
    # TensorFlow's loader reports the outcome at INFO (cc/saved_model/loader.cc: "SavedModel load for tags
    # { serve }; Status: fail: <status>. Took N microseconds."): a failed load all the same.
    r"\bSavedModel load for tags \{[^}\n]*\}; Status: fail\b"
)
"""A framework's failure stated on its INFO line: `linereader` reads the line as an error."""
