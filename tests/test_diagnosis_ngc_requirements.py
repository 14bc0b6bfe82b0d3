"""Issue 20 item 4: what a release needs of the host (``ngc_requirements.yaml``, from the release notes'
Driver and GPU Requirements), appended to a driver or GPU finding when the log names its release."""

# ruff: noqa: E501 - quoted log lines are test data

from __future__ import annotations

import accuracy
import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis import ngc_requirements as ngc
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

# server#8279's banner (25.04 on a V100S: compute capability 7.0).
V100_ON_25_04 = """NVIDIA Release 25.04 (build 1)
ERROR: Detected Tesla V100S-PCIE-32GB GPU, which is not supported by this container
ERROR: No supported GPU(s) detected to run this container
"""
INSUFFICIENT = "E0101 00:00:00.000000 1 model_lifecycle.cc:630] failed to load 'm' version 1: Internal: unable to create stream: CUDA driver version is insufficient for CUDA runtime version\n"


def first(text: str):
    report = diagnose_events(parse_text(text))
    assert report.findings, text
    return report.findings[0]


def test_every_row_names_its_page_and_the_floor_moves_at_25_01() -> None:
    table = ngc.table()
    assert len(table) >= 60 and all(r.source.startswith("https://") for r in table.values())
    assert table["24.12"].compute_capability == "6.0" and table["25.01"].compute_capability == "7.5"
    assert (table["24.08"].cuda, table["24.08"].driver) == ("12.6", "560")
    # CUDA 13 images: the pages repeat 24.x's paragraph, so no minimum driver is taken from them
    assert table["25.10"].cuda.startswith("13.") and table["25.10"].driver is None


@pytest.mark.parametrize(
    "text",
    [
        "releases: []\n",
        'releases:\n  "24.08": {cuda: "12.6", driver: "560"}\n',  # no source
        'releases:\n  "24.8": {cuda: "12.6", source: "https://x"}\n',
        'releases:\n  "24.08": {cuda: 12.6, source: "https://x"}\n',  # a float, not the text printed
    ],
)
def test_a_malformed_table_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"ngc_requirements\.yaml"):
        ngc.parse_requirements(text)


def test_the_entrypoint_banner_gets_the_release_needs_and_the_newest_release_the_host_meets() -> None:
    # server#8536: 24.08 on a Jetson whose driver is 540.4.0.
    f = first((accuracy.LOGS / "dev4" / "server-8536.log").read_text())
    assert f.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH and f.release_advice
    assert "CUDA 12.6" in f.release_advice and "driver 560 or later" in f.release_advice
    assert "meets releases up to 23.10" in f.release_advice and "rel-24-08.html" in f.release_advice


def test_cuda_saying_the_driver_is_too_old_gets_the_release_needs() -> None:
    f = first("NVIDIA Release 23.03 (build 1)\n" + INSUFFICIENT)
    assert "CUDA 12.1.0" in f.release_advice and "driver 530 or later" in f.release_advice
    assert "meets releases" not in f.release_advice  # the log does not name the host's driver
    cuda13 = first("NVIDIA Release 25.10 (build 1)\n" + INSUFFICIENT).release_advice
    assert "CUDA 13.0" in cuda13 and "or later" not in cuda13
    assert first(INSUFFICIENT).release_advice is None  # no release, no advice
    assert first("NVIDIA Release 23.02 (build 1)\n" + INSUFFICIENT).release_advice is None  # no page found


def test_the_26_07_and_26_08_pages_are_in_the_table_and_26_11_is_not_guessed() -> None:
    table = ngc.table()
    assert (table["26.07"].cuda, table["26.08"].cuda) == ("13.3.1", "13.4.1")
    assert table["26.08"].source.endswith("rel-26-08.html") and table["26.08"].driver is None
    assert "26.11" not in table  # its page was not found: no row from a neighbour
    advice = first("NVIDIA Release 26.08 (build 1)\n" + INSUFFICIENT).release_advice
    assert "CUDA 13.4.1" in advice and "compute capability" not in advice
    assert first("NVIDIA Release 26.11 (build 1)\n" + INSUFFICIENT).release_advice is None


@pytest.mark.parametrize(
    "text",
    [V100_ON_25_04, "NVIDIA Release 25.04 (build 1)\nE0101 00:00:00.000000 1 model_lifecycle.cc:630] failed to load 'm' version 1: Internal: CUDA error: no kernel image is available for execution on the device\n"],
)
def test_a_gpu_the_image_refuses_gets_the_compute_capability_floor(text: str) -> None:
    f = first(text)
    assert f.runbook in (c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.RUNBOOK_PLATFORM_UNSUPPORTED)
    assert "compute capability 7.5" in f.release_advice and "24.12 or earlier" in f.release_advice
    older = first(text.replace("25.04", "24.10")).release_advice
    assert "compute capability 6.0" in older and "24.12 or earlier" not in older


def test_other_cuda_findings_get_no_driver_advice() -> None:
    no_device = "NVIDIA Release 24.08 (build 1)\nE0101 00:00:00.000000 1 model_lifecycle.cc:630] failed to load 'm' version 1: CUDA error: no CUDA-capable device is detected\n"
    assert first(no_device).release_advice is None
