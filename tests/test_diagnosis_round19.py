"""Round 19 of issue 20: the classes behind heldout21's and heldout22's scored misses.

heldout21 and heldout22 were scored once (tests/data/logs/SPLIT.md); their misses are development cases
now. Each test quotes the wording from a source other than the held-out paste where one was found (named
in a comment), and the held-out case is checked beside it.
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text


def _first(text: str) -> tuple[str, str, str]:
    """(runbook, severity, first evidence line) of the first finding."""
    finding = diagnose_events(parse_text(text)).findings[0]
    return finding.runbook, finding.severity, finding.evidence[0].text


def _case(name: str) -> str:
    return accuracy.case_text(name, "heldout21", "heldout22")


# ------------------------------------- class 1: a core message quoted from the model's name on
# Core's instance-group check (src/model_config_utils.cc: "instance group <g> of model <m> has kind
# KIND_GPU but no GPUs are available") is often quoted without its leading words: the title of
# triton-inference-server/server#3912 reads "Model has kind KIND_GPU but no GPUs are available".
@pytest.mark.parametrize(
    "line",
    [
        "Model has kind KIND_GPU but no GPUs are available",
        "densenet_onnx has kind KIND_GPU but no GPUs are available",
    ],
)
def test_a_core_message_quoted_from_the_model_name_on_decides(line: str) -> None:
    runbook, severity, evidence = _first(line + "\n")
    assert runbook == c.RUNBOOK_INSTANCE_GROUP_INVALID
    assert severity in ("error", "critical")
    assert evidence == line


def test_a_short_tail_does_not_decide_alone() -> None:
    # "... is not mapped to any ensemble tensors" keeps its class; a line sharing only common words
    # with a template's tail ("x has kind of a problem") decides nothing.
    report = diagnose_events(parse_text("the model has kind of a problem but runs\n"))
    assert not report.has_failure


def test_heldout22_kind_gpu_quote_flips() -> None:
    assert _first(_case("gitcode-ff7abe8c"))[0] == c.RUNBOOK_INSTANCE_GROUP_INVALID


# ------------------------------ class 2: the backend library's exception type named on its own
# triton-inference-server/backend include/triton/backend/backend_model_instance.h declares
# BackendModelInstanceException, thrown from a backend's instance constructor (the OpenVINO, ONNX
# Runtime and PyTorch backends' ModelInstanceState::Create catch it): the instance was not created.
@pytest.mark.parametrize(
    "line",
    [
        "terminate called after throwing an instance of 'triton::backend::BackendModelInstanceException'",
        "triton::backend::BackendModelInstanceException",
        "caught BackendModelException while creating the model state",
    ],
)
def test_the_backend_exception_type_is_a_failure(line: str) -> None:
    runbook, severity, evidence = _first(line + "\n")
    assert severity in ("error", "critical")
    assert "BackendModel" in evidence
    assert runbook  # unknown-load-failure at least: never an empty answer


def test_heldout22_bare_backend_exception_is_not_empty() -> None:
    runbook, _severity, _evidence = _first(_case("gitcode-46df31bd"))
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE


# -------------------------------- class 3: a traceback whose every line carries a prefix
# CPython's traceback module prints `  File "<path>", line N, in <func>` frames and then
# `<ExceptionType>: <message>`; an application logger that prefixes each line (Clara AIAA's
# "[ts] [pid N:tid N]", a supervisor's "[worker-1] ") hides the header from a line-start pattern.
PREFIXED = (
    '[worker-1]   File "/srv/app/client.py", line 49, in fetch_model_info\n'
    "[worker-1]     raise TimeoutError(f\"Unable to get status for '{name}'\")\n"
    "[worker-1] TimeoutError: Unable to get status for 'segmentation'\n"
)


def test_a_prefixed_traceback_is_a_failure_quoting_its_exception_line() -> None:
    runbook, severity, evidence = _first(PREFIXED)
    assert severity in ("error", "critical")
    assert evidence.endswith("TimeoutError: Unable to get status for 'segmentation'")
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE


def test_frames_without_an_exception_line_are_not_a_failure() -> None:
    text = '[worker-1]   File "/srv/app/client.py", line 49, in fetch_model_info\n[worker-1] all good\n'
    assert not diagnose_events(parse_text(text)).has_failure


def test_heldout21_aiaa_status_timeout_is_not_empty() -> None:
    runbook, _severity, evidence = _first(_case("ai-assisted-annotation-client-62"))
    assert "TimeoutError: Unable to get status for" in evidence
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE  # the label's page is disputed (SPLIT.md round 19)


# ------------------------------------------- class 4: a client relaying the server's error
# tritonclient (tritonclient/utils/__init__.py InferenceServerException, raised by raise_error_grpc)
# carries the server's message: it decides; the client's frames and the traceback header do not make
# it the model's Python code (python-model-error).
def _client_traceback(exception_line: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "client.py", line 30, in <module>\n'
        "    results = triton_client.infer(model_name, inputs)\n"
        '  File "/usr/lib/python3/dist-packages/tritonclient/grpc/_client.py", line 1380, in infer\n'
        "    raise_error_grpc(rpc_error)\n"
        f"{exception_line}\n"
    )


def test_a_relayed_message_naming_no_class_is_not_the_models_python_code() -> None:
    runbook, severity, _evidence = _first(
        _client_traceback(
            "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] request for unknown model"
        )
    )
    assert runbook == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
    assert severity in ("error", "critical")


def test_a_relayed_python_model_error_stays_the_models() -> None:
    # The server's own message says its model's execute() raised (python_be.cc's wording).
    line = (
        "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] Failed to process the "
        "request(s) for model instance 'm_0_0', message: TypeError: unsupported operand type(s)"
    )
    assert _first(_client_traceback(line))[0] == c.RUNBOOK_PYTHON_MODEL_ERROR


# ------------------------- class 5: gRPC UNIMPLEMENTED with no message = another protocol release
# gRPC's status codes (doc/statuscodes.md): UNIMPLEMENTED, the server does not implement the method.
# triton-inference-server/server#1593: "tritongrpcclient.utils.InferenceServerException:
# [StatusCode.UNIMPLEMENTED] " (a 20.03 V1 server, a V2 client); server#3400: grpcio's own
# "status = StatusCode.UNIMPLEMENTED" / 'details = ""' (the server started without --api-version=2).
@pytest.mark.parametrize(
    "line",
    [
        "tritongrpcclient.utils.InferenceServerException: [StatusCode.UNIMPLEMENTED] ",
        'grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.UNIMPLEMENTED\n\tdetails = ""',
    ],
)
def test_grpc_unimplemented_without_details_is_a_protocol_release_mismatch(line: str) -> None:
    assert _first(_client_traceback(line))[0] == c.RUNBOOK_LIBRARY_VERSION_MISMATCH


def test_grpc_unimplemented_with_the_servers_reason_is_not_a_release_mismatch() -> None:
    # Core maps TRITONSERVER_ERROR_UNSUPPORTED to UNIMPLEMENTED: a reason follows, it is no protocol gap.
    line = "tritonclient.utils.InferenceServerException: [StatusCode.UNIMPLEMENTED] sequence batching is not supported"
    assert _first(_client_traceback(line))[0] != c.RUNBOOK_LIBRARY_VERSION_MISMATCH


# --------------------------- class 6: DALI's operator schema missing = pipeline from a newer DALI
# NVIDIA/DALI dali/pipeline/operator/op_schema.cc SchemaRegistry::GetSchema: "Schema for operator '<op>'
# not registered" (DALI_ENFORCE): the serialized pipeline names an operator this libdali lacks. No other
# public paste was found quickly; the wording is the source's.
def test_dali_operator_schema_missing_is_a_library_version_mismatch() -> None:
    line = (
        "E0511 10:00:00.000000 1 dali_model_instance.cc:94] runtime error: Critical error when building "
        "pipeline: Error when adding operator: Resize encountered: Schema for operator 'Resize' not registered"
    )
    assert _first(line + "\n")[0] == c.RUNBOOK_LIBRARY_VERSION_MISMATCH


@pytest.mark.parametrize("name", ["dali-2933", "dali-2944", "yolov4-triton-tensorrt-48"])
def test_heldout21_relayed_server_errors_flip(name: str) -> None:
    assert _first(_case(name))[0] == c.RUNBOOK_LIBRARY_VERSION_MISMATCH


# ------------------------------------------ class 7: wrong pages, decided by the pages' Meaning
# image-pull-failed's Meaning names "an image too large for the node's disk": a pull failing on ENOSPC is
# the pull's page. tableau/tableau-server-in-kubernetes#14: 'Failed to pull image "...": rpc error: code =
# Unknown desc = failed to register layer: Error processing tar file(exit status 1): write /x.rpm: no space
# left on device'.
def test_an_image_pull_failing_on_a_full_disk_is_the_pulls_page() -> None:
    events = (
        "Events:\n"
        "  Type     Reason  Age  From     Message\n"
        "  ----     ------  ---  ----     -------\n"
        '  Warning  Failed  27s  kubelet  Failed to pull image "registry/tableau:1": rpc error: code = Unknown '
        "desc = failed to register layer: Error processing tar file(exit status 1): write /tableau.rpm: no space "
        "left on device\n"
    )
    assert _first(events)[0] == c.RUNBOOK_IMAGE_PULL_FAILED
    assert _first(_case("eks-imagepullerror"))[0] == c.RUNBOOK_IMAGE_PULL_FAILED


def test_enospc_while_a_model_loads_stays_host_resource_exhausted() -> None:
    line = "E0101 00:00:00.000000 1 pb_stub.cc:330] OSError: [Errno 28] No space left on device: '/tmp/x'"
    assert _first(line + "\n")[0] == c.RUNBOOK_HOST_RESOURCE_EXHAUSTED


# The Python backend's EnvironmentManager::ExtractIfNotExtracted (python_backend src/pb_env.cc) throws
# "Failed to get the canonical path for <env_path>." when EXECUTION_ENV_PATH's archive is not there:
# python-module-missing's Meaning ("its packed execution environment is missing or unreadable").
def test_a_missing_execution_environment_archive_is_python_module_missing() -> None:
    line = (
        "E0101 00:00:00.000000 1 model_lifecycle.cc:642] failed to load 'add' version 1: Internal: Failed to "
        "get the canonical path for /models/add/conda-pack.tar.gz."
    )
    assert _first(line + "\n")[0] == c.RUNBOOK_PYTHON_MODULE_MISSING
