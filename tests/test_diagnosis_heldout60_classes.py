"""heldout60's two misses by class (issue 20), each from the wording's source, not from the log.

- A launcher built on Python's subprocess reports a child killed by a signal as a negative exit code:
  ROS 2 launch (``launch/actions/execute_local.py``) writes ``[ERROR] [<name>-N]: process has died [pid P,
  exit code -11, cmd '...']``. A fatal signal (SIGILL 4, SIGABRT 6, SIGBUS 7, SIGFPE 8, SIGSEGV 11) is a
  crash; SIGINT and SIGTERM (-2, -15) are a stop, and SIGKILL (-9) is what the launcher itself sends last
  when a stop times out, so neither is read as a crash.
- ONNX Runtime's graph resolution (``core/graph/graph.cc``) names a node it has no schema for as
  ``<domain>:<op>(<since version>) is not a registered function/op``. In ONNX's and ONNX Runtime's own
  domains the runtime release or build lacks the op (library-version-mismatch); any other domain is a
  custom op: a library the config does not load, or a file exported for another runtime, as TensorRT's
  plugin ops (model-file-invalid).
"""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

LOADED = (
    "I1201 10:00:00.000000 1 model_lifecycle.cc:818] successfully loaded 'detectnet'\n"
    "I1201 10:00:00.100000 1 grpc_server.cc:2495] Started GRPCInferenceService at 0.0.0.0:8001\n"
)


def _first(text: str) -> str | None:
    findings = diagnose_events(parse_text(text)).findings
    return findings[0].runbook if findings else None


def _launcher_death(code: int) -> str:
    return LOADED + (
        f"[ERROR] [component_container_mt-2]: process has died [pid 1497463, exit code {code}, "
        "cmd '/opt/ros/humble/install/lib/rclcpp_components/component_container_mt --ros-args -r __node:=c']\n"
    )


@pytest.mark.parametrize("code", [-4, -6, -7, -8, -11, 139])
def test_a_launcher_reporting_a_fatal_signal_as_a_negative_exit_code_is_a_crash(code: int) -> None:
    assert _first(_launcher_death(code)) == c.RUNBOOK_SERVER_CRASHED


@pytest.mark.parametrize("code", [-2, -9, -15, 0])
def test_a_stop_or_the_launchers_own_kill_is_no_crash(code: int) -> None:
    assert _first(_launcher_death(code)) != c.RUNBOOK_SERVER_CRASHED


def _ort(op: str) -> str:
    return (
        "E1130 10:30:37.998479 1 model_lifecycle.cc:597] failed to load 'm' version 1: Internal: onnx "
        "runtime error 1: Load model from /models/m/1/model.onnx failed:Fatal error: "
        f"{op} is not a registered function/op\n"
    )


@pytest.mark.parametrize(
    ("op", "runbook"),
    [
        # custom domains: TensorRT's plugin ops, onnxruntime-extensions, a project's own, mmdeploy's
        ("TRT:EfficientNMS_TRT(-1)", c.RUNBOOK_MODEL_FILE_INVALID),
        ("ai.onnx.contrib:BertTokenizer(-1)", c.RUNBOOK_MODEL_FILE_INVALID),
        ("my_domain:MyAdd(-1)", c.RUNBOOK_MODEL_FILE_INVALID),
        ("mmdeploy:grid_sampler(-1)", c.RUNBOOK_MODEL_FILE_INVALID),
        # the runtime's own domains: a contrib op this build lacks, a preview op, an ML op of a newer opset
        ("com.microsoft:SimplifiedLayerNormalization(-1)", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        ("ai.onnx.preview:FlexAttention(-1)", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        ("ai.onnx.preview.training:Adam(-1)", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
        ("ai.onnx.ml:Binarizer(5)", c.RUNBOOK_LIBRARY_VERSION_MISMATCH),
    ],
)
def test_an_unregistered_onnx_op_is_read_by_its_domain(op: str, runbook: str) -> None:
    assert _first(_ort(op)) == runbook


def test_an_op_named_without_its_domain_is_no_guess() -> None:
    """Older releases name the op alone (``Pad is not a registered function/op``): either side; the load
    failure stays a finding of its own."""
    assert _first(_ort("Pad")) == c.RUNBOOK_UNKNOWN_LOAD_FAILURE
