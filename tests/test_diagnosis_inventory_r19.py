"""The TensorRT Inference Server era (server r19.01-r20.08) in the diagnosis: the wordings those releases end a
model load or the server's start with, and what a healthy start of theirs logs.

Read from the server repository's release branches (r19.01, r19.04, r19.07, r19.10, r20.01, r20.03, r20.06,
r20.08; core, servables/backends and servers all lived there). The wordings with an entry of their own are
tested with every inventory entry (tests/test_diagnosis_inventory.py); here are those a later entry or rule
already reads, each with the branch and file it was read in, and the healthy start-up lines.
"""

# ruff: noqa: E501 - messages are test data and keep their real length

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import classify_reason, diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# (branch first read, file, the message as a log shows it, runbook): wordings a later entry or rule already claims.
ALREADY_MATCHED = [
    (
        "r19.01",
        "core/utils.cc",
        "unexpected platform type tensorflow_graph for inception",
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    ("r19.01", "core/utils.cc", "model configuration must specify 'name'", c.RUNBOOK_CONFIG_PARSE_ERROR),
    ("r19.01", "core/utils.cc", "must specify 'version policy' for resnet", c.RUNBOOK_VERSION_DIR_INVALID),
    (
        "r19.01",
        "core/utils.cc",
        "must specify one or more 'instance group's for resnet",
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
    (
        "r19.01",
        "core/utils.cc",
        "instance group resnet_0 of model resnet has kind KIND_GPU but specifies no GPUs",
        c.RUNBOOK_INSTANCE_GROUP_INVALID,
    ),
    (
        "r19.01",
        "core/utils.cc",
        "dynamic batching preferred size must be <= max batch size for resnet",
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    ("r19.01", "core/utils.cc", "model input must specify 'dims'", c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH),
    (
        "r19.01",
        "core/model_repository_manager.cc",
        "unexpected directory name 'resnet' for model 'resnet50', directory name must equal model name",
        c.RUNBOOK_CONFIG_NAME_MISMATCH,
    ),
    (
        "r19.01",
        "servables/tensorrt/plan_bundle.cc",
        "unexpected configuration maximum batch size 16 for 'resnet_plan', model maximum is 8",
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    ),
    (
        "r19.01",
        "servables/tensorrt/loader.cc",
        "Internal: unable to create TensorRT engine",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    ),
    (
        "r19.01",
        "servables/tensorrt/plan_bundle.cc",
        "Internal: unable to create TensorRT context",
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
    ),
    (
        "r19.01",
        "servables/tensorrt/autofill.cc",
        "unable to autofill for 'resnet_plan', unable to create TensorRT runtime and engine",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    (
        "r19.01",
        "servables/tensorflow/graphdef_bundle.cc",
        "unable to load model 'inception', configuration expects 3 inputs, model provides at most 1",
        c.RUNBOOK_TENSOR_NAME_MISMATCH,
    ),
    (
        "r19.01",
        "servables/tensorflow/graphdef_bundle.cc",
        "Data loss: Can't parse /models/inception_graphdef/1/model.graphdef as binary proto",
        c.RUNBOOK_MODEL_FILE_INVALID,
    ),
    (
        "r19.01",
        "core/server.cc",
        "The server cannot listen to HTTP requests and gRPC requests at the same port",
        c.RUNBOOK_SERVER_OPTION_INVALID,
    ),
    (
        "r19.04",
        "core/ensemble_utils.cc",
        "in ensemble pipeline, ensemble tensor IMAGE is mapping to non-existing input INPUT__0 in model preprocess",
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    (
        "r19.04",
        "core/ensemble_utils.cc",
        "circular dependency between ensembles: a -> ... -> b -> a",
        c.RUNBOOK_ENSEMBLE_DEPENDENCY,
    ),
    (
        "r19.04",
        "core/ensemble_utils.cc",
        "ensemble pipeline allows maximum batch size 8, but it contains model classifier which only allows  maximum batch size to be 4",
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    (
        "r19.04",
        "core/model_config_utils.cc",
        "model input dimension must be integer >= 1, or -1 to indicate a variable-size dimension",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r19.04",
        "core/model_config_utils.cc",
        "model output has different size for dims and reshape",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r19.04",
        "servables/caffe2/netdef_bundle.cc",
        "unsupported datatype TYPE_STRING for input 'data' for model 'resnet50_netdef'",
        c.RUNBOOK_MODEL_IO_UNSUPPORTED,
    ),
    (
        "r19.04",
        "servables/tensorflow/autofill.cc",
        "unable to autofill for 'inception', configuration specified max-batch 8 but model signature does not support batching",
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    ),
    (
        "r19.04",
        "servables/tensorflow/savedmodel_bundle.cc",
        "configuration specified sequence control 'START', but model does not provide that input",
        c.RUNBOOK_TENSOR_NAME_MISMATCH,
    ),
    (
        "r19.04",
        "servables/tensorflow/tf_utils.cc",
        "unable to load model 'inception', tensor 'input' shape expected by framework [-1,299,299,3] doesn't match model configuration shape [3,299,299]",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r19.07",
        "core/model_repository_manager.cc",
        "version 2 is specified for model 'resnet', but the version directory is not present",
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    (
        "r19.07",
        "backends/tensorrt/plan_backend.cc",
        "unable to find PLAN model 'model.plan' for resnet_plan_0_gpu0",
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    (
        "r19.07",
        "backends/pytorch/libtorch_backend.cc",
        "unable to find LibTorch model 'model.pt' for resnet_0_0_gpu0",
        c.RUNBOOK_MODEL_FILE_MISSING,
    ),
    (
        "r19.07",
        "backends/onnx/onnx_backend.cc",
        "unable to load model 'ranker, unexpected datatype TYPE_INT32 for output 'score', expecting TYPE_FP32",
        c.RUNBOOK_DATATYPE_MISMATCH,
    ),
    (
        "r19.07",
        "backends/caffe2/autofill.cc",
        "Internal: unable to autofill for 'resnet50_netdef' due to no version directories",
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    (
        "r19.10",
        "backends/custom/loader.cc",
        "unable to load custom library: invalid custom version 2 is provided",
        c.RUNBOOK_LIBRARY_VERSION_MISMATCH,
    ),
    (
        "r19.10",
        "backends/tensorrt/autofill.cc",
        "unable to autofill for 'yolo', either all model tensor configuration should specify their dims or none.",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r20.01",
        "backends/tensorrt/plan_utils.cc",
        "unable to load model 'resnet_plan', binding 'data': the model expects 4 dimensions but the model configuration specified 3 dimensions",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r20.01",
        "backends/tensorrt/autofill.cc",
        "unable to autofill for 'yolo', unable to find a compatible plan file.",
        c.RUNBOOK_TRT_ENGINE_INCOMPATIBLE,
    ),
    (
        "r20.01",
        "core/model_config_utils.cc",
        "'max_batch_size' must be non-negative value for resnet",
        c.RUNBOOK_BATCHING_CONFIG_INVALID,
    ),
    (
        "r20.03",
        "backends/onnx/onnx_utils.cc",
        "model 'densenet_onnx', tensor 'data_0': the model expects 4 dimensions (shape [1,3,224,224]) but the model configuration specifies 3 dimensions (shape [3,224,224])",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r20.03",
        "backends/onnx/onnx_utils.cc",
        "model 'densenet_onnx', tensor 'data_0': for the model to support batching the shape should have at least 1 dimension and the first dimension must be -1; but shape expected by the model is [1,3,224,224]",
        c.RUNBOOK_MAX_BATCH_SIZE_UNSUPPORTED,
    ),
    (
        "r20.03",
        "backends/tensorrt/autofill.cc",
        "binding for 'images' not found in the model.",
        c.RUNBOOK_TENSOR_NAME_MISMATCH,
    ),
    (
        "r20.03",
        "core/model_config_utils.cc",
        "shape tensors are only supported for TensorRT platform",
        c.RUNBOOK_SHAPE_OR_DIMS_MISMATCH,
    ),
    (
        "r20.03",
        "core/model_config_utils.cc",
        "ensemble scheduling cannot be set for model 'resnet' whose platform is not ensemble",
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    (
        "r20.06",
        "backends/onnx/onnx_utils.cc",
        "Unsupported ONNX Type 'ONNX_TYPE_SEQUENCE' for I/O 'scores', expected 'ONNX_TYPE_TENSOR'.",
        c.RUNBOOK_MODEL_IO_UNSUPPORTED,
    ),
    (
        "r20.06",
        "core/filesystem.cc",
        "s3:// file-system not supported. To enable, build with -DTRITON_ENABLE_S3=ON.",
        c.RUNBOOK_CLOUD_REPOSITORY_ACCESS,
    ),
    (
        "r20.06",
        "core/model_repository_manager.cc",
        "at least one version must be available under the version policy of model 'bert'",
        c.RUNBOOK_VERSION_DIR_INVALID,
    ),
    (
        "r20.08",
        "backends/backend/triton_model.cc",
        "unable to find 'libtriton_onnxruntime.so' for model 'ranker', searched: /models/ranker/1, /models/ranker, /opt/tritonserver/backends/onnxruntime",
        c.RUNBOOK_BACKEND_NOT_FOUND,
    ),
    (
        "r20.08",
        "backends/backend/triton_model.cc",
        "must specify 'backend' for 'ranker'",
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    (
        "r20.08",
        "core/model_config_utils.cc",
        "must specify 'platform' or 'backend' for 'ranker'",
        c.RUNBOOK_BACKEND_PLATFORM_MISMATCH,
    ),
    (
        "r20.08",
        "core/model_config_utils.cc",
        "model configuration version 2 not supported, supported versions are: 1",
        c.RUNBOOK_CONFIG_PARSE_ERROR,
    ),
    (
        "r20.08",
        "core/filesystem.cc",
        "directory does not exist at /models",
        c.RUNBOOK_REPOSITORY_PATH_INVALID,
    ),
]


@pytest.mark.parametrize(
    ("branch", "source", "message", "runbook"),
    ALREADY_MATCHED,
    ids=[f"{b}:{s}:{m[:40]}" for b, s, m, _ in ALREADY_MATCHED],
)
def test_an_r19_r20_wording_a_later_entry_reads(branch: str, source: str, message: str, runbook: str) -> None:
    assert classify_reason(message) == runbook
    line = f"E0521 14:03:44.281919 1 model_repository_manager.cc:810] failed to load 'model_x' version 1: Invalid argument: {message}"
    findings = diagnose_events(parse_text(line)).findings
    assert findings and findings[0].runbook == runbook


@pytest.mark.parametrize(
    ("what", "runbook"),
    [
        ("Unknown builtin op: torchvision::nms.", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        ("CUDA out of memory. Tried to allocate 20.00 MiB", c.RUNBOOK_GPU_OUT_OF_MEMORY),
        (
            "PytorchStreamReader failed reading zip archive: failed finding central directory",
            c.RUNBOOK_MODEL_FILE_INVALID,
        ),
    ],
)
def test_a_wrappers_tail_decides(what: str, runbook: str) -> None:
    """libtorch_backend.cc (r19.07-r20.08) wraps torch::jit::load's error as ``load failed for libtorch model -> '<path>':
    <what>``: the wrapper is no entry, what() names the cause."""
    message = f"Internal: load failed for libtorch model -> '/models/resnet/1/model.pt': {what}"
    assert classify_reason(message) == runbook


# What a healthy start logged, from the sources' LOG_INFO wordings (src/core/server.cc, src/core/metrics.cc,
# src/core/model_repository_manager.cc, src/servers/main.cc, grpc_server.cc, http_server.cc and the backends'
# instance creation) in the log format of src/core/logging.cc. No model status table: it arrived at r20.10.
HEALTHY_STARTS = {
    "r19.01": [
        "server.cc:660] Initializing TensorRT Inference Server",
        "metrics.cc:160] found 1 GPUs supporting NVML metrics",
        "metrics.cc:169]   GPU 0: Tesla V100-SXM2-16GB",
        "server.cc:1070] Reporting prometheus metrics on port 8002",
        "plan_bundle.cc:215] Creating instance resnet50_plan_0_gpu0 on GPU 0 (7.0) using model.plan",
        "plan_bundle.cc:391] Created instance resnet50_plan_0_gpu0 on GPU 0 (7.0) with stream priority 0",
        "grpc_server.cc:262] Building nvrpc server",
        "grpc_server.cc:269] Register TensorRT GRPCService",
        "grpc_server.cc:272] Register Infer RPC",
        "grpc_server.cc:276] Register Status RPC",
        "grpc_server.cc:280] Register Profile RPC",
        "grpc_server.cc:284] Register Health RPC",
        "grpc_server.cc:288] Register Executor",
        "server.cc:1157] Starting server 'inference:0' listening on",
        "server.cc:1161]  localhost:8001 for gRPC requests",
        "server.cc:1169]  localhost:8000 for HTTP requests",
    ],
    "r19.07": [
        "server.cc:135] Initializing TensorRT Inference Server",
        "metrics.cc:160] found 1 GPUs supporting NVML metrics",
        "metrics.cc:169]   GPU 0: Tesla T4",
        "model_repository_manager.cc:694] loading: resnet50_plan:1",
        "plan_backend.cc:184] Creating instance resnet50_plan_0_gpu0 on GPU 0 (7.5) using model.plan",
        "plan_backend.cc:451] Created instance resnet50_plan_0_gpu0 on GPU 0 (7.5) with stream priority 0",
        "model_repository_manager.cc:831] successfully loaded 'resnet50_plan' version 1",
        "main.cc:351] Starting endpoints, 'inference:0' listening on",
        "grpc_server.cc:272] Starting a GRPCService at 0.0.0.0:8001",
        "grpc_server.cc:277] Register TensorRT GRPCService",
        "grpc_server.cc:280] Register Infer RPC",
        "grpc_server.cc:284] Register StreamInfer RPC",
        "grpc_server.cc:289] Register Status RPC",
        "grpc_server.cc:293] Register Profile RPC",
        "grpc_server.cc:297] Register Health RPC",
        "grpc_server.cc:301] Register Executor",
        "http_server.cc:632] Starting HTTPService at 0.0.0.0:8000",
        "http_server.cc:646] Starting Metrics Service at 0.0.0.0:8002",
    ],
    "r19.10": [
        "server.cc:128] Initializing TensorRT Inference Server",
        "model_repository_manager.cc:723] loading: densenet_onnx:1",
        "onnx_backend.cc:203] Creating instance densenet_onnx_0_gpu0 on GPU 0 (7.5) using model.onnx",
        "model_repository_manager.cc:888] successfully loaded 'densenet_onnx' version 1",
        "main.cc:417] Starting endpoints, 'inference:0' listening on",
        "grpc_server.cc:1800] Started GRPCService at 0.0.0.0:8001",
        "http_server.cc:1205] Starting HTTPService at 0.0.0.0:8000",
        "http_server.cc:1220] Starting Metrics Service at 0.0.0.0:8002",
    ],
    "r20.03": [
        "server.cc:120] Initializing Triton Inference Server",
        "model_repository_manager.cc:805] loading: inception_graphdef:1",
        "base_backend.cc:176] Creating instance inception_graphdef_0_gpu0 on GPU 0 (7.0) using model.graphdef",
        "model_repository_manager.cc:958] successfully loaded 'inception_graphdef' version 1",
        "main.cc:417] Starting endpoints, 'inference:0' listening on",
        "grpc_server.cc:1939] Started GRPCService at 0.0.0.0:8001",
        "http_server.cc:1411] Starting HTTPService at 0.0.0.0:8000",
        "http_server.cc:1426] Starting Metrics Service at 0.0.0.0:8002",
    ],
    "r20.08": [
        "server.cc:120] Initializing Triton Inference Server",
        "model_repository_manager.cc:810] loading: simple:1",
        "model_repository_manager.cc:979] successfully loaded 'simple' version 1",
        "grpc_server.cc:3897] Started GRPCInferenceService at 0.0.0.0:8001",
        "http_server.cc:2679] Started HTTPService at 0.0.0.0:8000",
        "http_server.cc:2698] Started Metrics Service at 0.0.0.0:8002",
    ],
}


@pytest.mark.parametrize("branch", sorted(HEALTHY_STARTS))
def test_a_healthy_r19_r20_start_has_no_finding(branch: str) -> None:
    text = "\n".join(f"I0521 14:03:{i:02d}.281919 1 {line}" for i, line in enumerate(HEALTHY_STARTS[branch]))
    assert diagnose_events(parse_text(text)).findings == ()


def test_the_same_start_with_a_refusal_is_diagnosed() -> None:
    """The healthy lines do not hide a refusal among them: r19.07's bare endpoint failure is found."""
    lines = [f"I0521 14:03:{i:02d}.281919 1 {line}" for i, line in enumerate(HEALTHY_STARTS["r19.07"][:8])]
    lines.append("E0521 14:03:30.000000 1 main.cc:370] Failed to start HTTP service")
    findings = diagnose_events(parse_text("\n".join(lines))).findings
    assert findings and findings[0].runbook == c.RUNBOOK_SERVER_PORT_IN_USE
