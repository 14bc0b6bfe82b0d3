"""CUDA's insufficient-driver warning after a line that the host has a GPU driver: the NGC entrypoint's
banners (``50-gpu-driver-check.sh``: ``NVIDIA Tegra driver detected.``, ``CUDA Forward Compatibility mode
ENABLED``, ``CUDA Minor Version Compatibility mode ENABLED``) or core's metrics lines that NVML found a GPU
(metrics.cc). Not a CPU host's noise but a driver CUDA cannot use: a warning-level cuda-driver-mismatch even
where the start-up went on (heldout64's server-7421 and heldout67's server-1477 classes), the same whether
the log is read whole or streamed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from triton_sre.conventions import IMPACT_WARNING, RUNBOOK_CUDA_DRIVER_MISMATCH
from triton_sre.diagnosis.api import diagnose_stream
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# A real healthy 2.51 start on this CPU host: its pinned-memory warning carries CUDA's insufficient-driver
# text.
HEALTHY = Path(__file__).parent / "data" / "logs" / "real" / "releases" / "2.51.0" / "healthy-models.log"

# The entrypoint's own lines (the banners above), as the image prints them before tritonserver starts.
BANNERS = [
    "\nNVIDIA Tegra driver detected.\n",
    "\nNOTE: CUDA Forward Compatibility mode ENABLED.\n  Using CUDA 12.5 driver version 555.42.06 with kernel"
    " driver version 535.183.01.\n  See https://docs.nvidia.com/deploy/cuda-compatibility/ for details.\n",
    "\nWARNING: CUDA Minor Version Compatibility mode ENABLED.\n  Using driver version 525.147.05 which has"
    " support for CUDA 12.0.  This container\n  was built with CUDA 12.5 and will be run in Minor Version"
    " Compatibility mode.\n",
    # core's metrics lines (metrics.cc): 2.x, and the TRTIS era's two lines
    'I1206 19:52:58.969000 25361 metrics.cc:877] "Collecting metrics for GPU 0: Tesla T4"\n',
    "I0513 13:26:15.884910 1 metrics.cc:164] found 1 GPUs supporting NVML metrics\n"
    "I0513 13:26:15.890620 1 metrics.cc:173]   GPU 0: Tesla T4\n",
]


def _log() -> str:
    text = HEALTHY.read_text()
    assert "CUDA driver version is insufficient for CUDA runtime version" in text
    return text


def test_the_cpu_hosts_healthy_start_stays_clean() -> None:
    assert not diagnose_events(parse_text(_log())).findings


@pytest.mark.parametrize("banner", BANNERS)
def test_after_a_driver_banner_the_warning_is_the_drivers(banner: str) -> None:
    findings = diagnose_events(parse_text(banner + _log())).findings
    assert [f.runbook for f in findings] == [RUNBOOK_CUDA_DRIVER_MISMATCH]
    streamed = diagnose_stream(io.BytesIO((banner + _log()).encode()), {}).findings
    assert [(f.runbook, f.severity) for f in streamed] == [(f.runbook, f.severity) for f in findings]
    assert findings[0].severity == IMPACT_WARNING
    assert "insufficient for CUDA runtime" in findings[0].evidence[0].text
    assert "If it has none" not in findings[0].remediation  # the host has a driver: no CPU-host reading


def test_the_banner_alone_is_no_finding() -> None:
    line = 'I1206 19:52:58.970534 1 model_lifecycle.cc:472] "loading: ok_model:1"\n'
    assert not diagnose_events(parse_text(BANNERS[0] + line)).findings


def test_nvml_finding_no_gpu_says_nothing() -> None:
    line = "I0513 13:26:15.884910 1 metrics.cc:164] found 0 GPUs supporting NVML metrics\n"
    assert not diagnose_events(parse_text(line + _log())).findings
