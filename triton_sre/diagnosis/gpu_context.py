"""Pure: what a log says about CUDA's view of the GPU, and when that is the root cause.

Core's pinned-memory and metrics warnings carry CUDA's own error text on every host where CUDA has no
usable GPU, so on a CPU-only server they are noise. They become the cause only in context:

- CUDA finds no device (``no CUDA-capable device is detected``, cudaErrorNoDevice) where the log shows
  work that needs a GPU and then fails with nothing else to say why: the container did not get the GPU
  (gpu-container-runtime).
- CUDA finds the driver insufficient (``CUDA driver version is insufficient for CUDA runtime version``,
  cudaErrorInsufficientDriver). The runtime returns it when the host driver is older than the runtime,
  and also when there is no driver at all, hence its presence on every CPU host. It is the driver's fault
  (cuda-driver-mismatch) where the log needs a GPU, or where the log stops at it: nothing but the memory
  managers' warnings follows (a container that ends at its driver check, not a CPU server that went on to
  load its models). The options table is start-up past that check (tritonserver.cc prints it once the
  server object exists): a log that stops after it does not stop at the driver. A log that stops at the
  warning with no GPU needed is only a warning: nothing failed, and the real 2.51 prints exactly this while
  its start-up waits on a cloud repository it cannot reach (gs:// without network: nothing for minutes;
  s3:// 51 s before its error), so the fix says both readings (`unfinished_start`).

Core's metrics lines say NVML found a GPU (``found 1 GPUs supporting NVML metrics``, ``Collecting metrics
for GPU 0: Tesla T4``), and the NGC image's entrypoint says when the host has a GPU driver
(``50-gpu-driver-check.sh``: ``NVIDIA Tegra driver detected.`` where ``/dev/nvgpu`` exists; ``CUDA
Forward Compatibility mode ENABLED`` and ``CUDA Minor Version Compatibility mode ENABLED`` once it has read
the kernel driver's version). After such a line the insufficient-driver warning cannot be a CPU host's:
the driver is there and CUDA cannot use it, so it is a warning-level cuda-driver-mismatch even where the
start-up went on.

"Needs a GPU": a GPU-only backend (FasterTransformer/turbomind, TensorRT, TensorRT-LLM), named in a
message or by the source file of the backend's own line (``libfastertransformer.cc``), or a model
instance placed on a GPU (core's ``(GPU device N)``, config's ``KIND_GPU``, core's instance-group check
``specifies invalid or unsupported gpu id N``: a failure nothing explains that follows the driver warning is
then the driver's consequence).
"""

from __future__ import annotations

import dataclasses
import re

from triton_sre import conventions as c
from triton_sre.diagnosis.assemble import ModelState, Obs
from triton_sre.diagnosis.blocks import deciding_line
from triton_sre.diagnosis.events import GPU_SEEN_MARKS, PROGRESS_MARKS, SOURCE_OPTION, LogEvent
from triton_sre.diagnosis.lineshape import LEVEL_ERROR, LEVEL_INFO, LEVEL_WARNING, join_hand_wraps
from triton_sre.diagnosis.report import Finding
from triton_sre.diagnosis.signals import folded_after_harmless, is_harmless

__all__ = ["GpuContext", "unfinished_start"]

NO_DEVICE = re.compile(r"no CUDA-capable device is detected|Cannot get CUDA device count", re.I)
OLD_DRIVER = re.compile(r"driver version is insufficient for CUDA runtime", re.I)
GPU_EXPECTED = re.compile(
    r"(?i:fastertransformer|tensorrt_?llm|tensorrt_plan)|\bKIND_GPU\b|\(GPU device \d+\)"
    # core's instance-group check (model_config_utils.cc): the instance group names a GPU CUDA cannot use
    r"|specifies invalid or unsupported gpu id (?:of )?\d+"
)
# The same check when CUDA offers no GPU at all: the list after "are:" is empty (r21+), or the TRTIS-era
# wording that lists none ("gpu id of 0. The minimum required CUDA compute compatibility is 6.0").
NO_GPU_LISTED = re.compile(
    r"unsupported gpu id (?:\d+\. GPUs with at least the minimum required CUDA compute compatibility"
    r" of [\d.]+ are:\s*$|of \d+\. The minimum required CUDA compute compatibility is [\d.]+\s*$)",
    re.I,
)
DRIVER_PRESENT = re.compile(
    r"NVIDIA Tegra driver detected\.|CUDA (?:Forward|Minor Version) Compatibility mode ENABLED"
    r"|found [1-9]\d* GPUs? supporting NVML metrics|Collecting metrics for GPU \d+: \S"
)
"""The entrypoint's banners that a GPU driver is on the host, and core's metrics lines that NVML found a
GPU (`events.GPU_SEEN_MARKS`): see above."""
GPU_KEYS = ("GPU", "ransformer", "ensorrt", "ensorRT", "gpu id")
"""Substrings every `GPU_EXPECTED` match holds (a cheap test before the pattern)."""


class GpuContext:
    """Fed every event (in order) by the engine; holds only what CUDA said and whether a GPU is needed."""

    def __init__(self) -> None:
        self.no_device: Obs | None = None  # CUDA saw no device
        self.old_driver: Obs | None = None  # CUDA found the driver insufficient
        self.after_driver = False  # start-up progress, or a line that is not a harmless warning, followed it
        self.gpu_expected = False
        self.driver_present = False  # the image's entrypoint found a GPU driver on the host

    def note(self, event: LogEvent, index: int) -> None:
        """Remember that CUDA saw no device or an insufficient driver, and whether the log needs a GPU."""
        message = event.message
        if event.level == LEVEL_INFO and not (
            event.source == SOURCE_OPTION or any(mark in message for mark in PROGRESS_MARKS)
        ):  # (the marks are looked for on I lines only: this runs on every event)
            if not self.driver_present and "metrics" in message and any(m in message for m in GPU_SEEN_MARKS):
                self.driver_present = DRIVER_PRESENT.search(message) is not None
            return  # other ``I`` lines never count: the chunked scanner drops them (not the options table)
        if (
            self.old_driver is not None
            and not self.after_driver
            # (the raw lines after a harmless E line are the log going on past the driver warning)
            and (event.level == LEVEL_INFO or not is_harmless(message) or folded_after_harmless(message))
        ):
            self.after_driver = True
        if not self.driver_present and ("detected." in message or "Compatibility mode" in message):
            self.driver_present = DRIVER_PRESENT.search(message) is not None
        if "CUDA" not in message and not self.no_device and not self.old_driver:
            return  # (plain substring tests first: this runs on every event)
        message = join_hand_wraps(message)  # CUDA's words wrapped by hand read as one line
        if self.no_device is None and event.level != LEVEL_ERROR and NO_DEVICE.search(message):
            line, text = deciding_line(event, lambda piece: NO_DEVICE.search(piece) is not None)
            text = text.split("\n", 1)[0]
            self.no_device = Obs(index, line, text, LEVEL_ERROR, c.RUNBOOK_GPU_CONTAINER_RUNTIME, text)
        if (
            self.old_driver is None
            and "nsufficient" in message
            and OLD_DRIVER.search(message)
            and is_harmless(message)  # (on an error line it is a cause rule of its own)
        ):
            line, text = deciding_line(event, lambda piece: OLD_DRIVER.search(piece) is not None)
            self.old_driver = Obs(index, line, text, LEVEL_ERROR, c.RUNBOOK_CUDA_DRIVER_MISMATCH, text)
        if (self.no_device is not None or self.old_driver is not None) and not self.gpu_expected:
            # The message, or the source file of a backend's own line (libfastertransformer.cc).
            self.gpu_expected = any(
                any(key in text for key in GPU_KEYS) and GPU_EXPECTED.search(text) is not None
                for text in (message, event.source)
            )

    def take_gpu_cause(self) -> Obs | None:
        """CUDA's cause, once, where the log needs a GPU (a failure nothing explains followed): no device
        (the container did not get the GPU), else an insufficient driver."""
        if not self.gpu_expected:
            return None
        found = self.no_device or self.old_driver
        self.no_device = self.old_driver = None
        return found

    def driver_cause(self) -> Obs | None:
        """The insufficient-driver cause where the log needs a GPU or stops at it, else None."""
        if self.old_driver is None or not (self.gpu_expected or self.driver_present or not self.after_driver):
            return None
        if not self.gpu_expected:  # the log stops at it, or went on with a driver CUDA cannot use
            return dataclasses.replace(self.old_driver, level=LEVEL_WARNING)
        return self.old_driver

    def outranks_driver(self, state: ModelState) -> bool:
        """A model's own finding comes before the driver's: it names a cause, or it failed in a log that
        needs no GPU (a CPU server whose models fail for their own reasons). Where the log needs a GPU, a
        failure nothing explains, or core refusing a GPU id while CUDA offers none, is the driver's
        consequence."""
        if self.gpu_expected:
            return any(o.runbook and not NO_GPU_LISTED.search(o.reason) for o in state.obs)
        return state.failed or bool(state.obs)


UNFINISHED_NOTE = (
    "The log ends at CUDA's driver warning and nothing in it failed. If this host has a GPU, its driver is "
    "older than the image's CUDA. If it has none, the warning is normal and the start-up had not "
    "finished when the log ends: the next step opens the model repositories, where a cloud repository the "
    "server cannot reach (gs://, s3://, as://) waits silently for minutes; read the log again once the "
    "server has exited or served, and check the repository's network and credentials."
)


def unfinished_start(found: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """The driver's warning of a log that stops at it: its fix says both readings."""
    return tuple(
        dataclasses.replace(f, remediation=f"{UNFINISHED_NOTE} {f.remediation}".strip())
        if f.runbook == c.RUNBOOK_CUDA_DRIVER_MISMATCH and f.model is None and f.severity == c.IMPACT_WARNING
        else f
        for f in found
    )
