"""Pure data: the event a log parser yields (`LogEvent`) and the names its fields take.

`logparse` makes these from lines; the engine, the scanner and the rules read them. Kept apart so the
readers need no parser.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CLOSING_FAILURE",
    "GPU_SEEN_MARKS",
    "PROGRESS_MARKS",
    "SOURCE_OPTION",
    "SOURCE_RAW",
    "SOURCE_TABLE",
    "LogEvent",
]

PROGRESS_MARKS: tuple[str, ...] = (
    "loading: ",
    "successfully loaded",
    "Started GRPCInferenceService",
    "Started HTTPService",
    "TRITONBACKEND_Initialize",
    "TRITONBACKEND_ModelInstanceInitialize",
)
"""Literals of the ``I`` lines that show start-up went on (and which backend and device it uses): the engine
weighs only these ``I`` lines around a CUDA warning, and the chunked scanner keeps them, so both
readers see the same."""
GPU_SEEN_MARKS: tuple[str, ...] = ("supporting NVML metrics", "Collecting metrics for GPU")
"""Literals of core's ``I`` lines that NVML found a GPU (metrics.cc: r20's ``found 1 GPUs supporting NVML
metrics``, later ``Collecting metrics for GPU 0: <name>``): a driver is loaded. The engine weighs them
beside CUDA's driver warning (`gpu_context`) and the chunked scanner keeps them."""
CLOSING_FAILURE = "failed to load '"
"""Core's closing line of a failed load (``failed to load '<model>'``, model_lifecycle.cc), which 2.51 logs
at ``I``: the engine reads it at any level (`reasons.FAILED_BARE`, for a model whose E line is cut off),
so the chunked scanner keeps the ``I`` lines holding it too."""

SOURCE_TABLE = "model-status-table"
SOURCE_RAW = ""
SOURCE_OPTION = "server-option"
"""A row of the options table Triton prints at start (only ``server_version`` is kept)."""


@dataclass(frozen=True, slots=True)
class LogEvent:
    """One logical log entry: a log line with its continuation lines, or one status-table row."""

    line: int
    """1-based line number of the event's first line."""
    level: str
    """I, W, E or F; "" for a raw line outside Triton's logger."""
    source: str
    """``file.cc:NNN`` for log lines, `SOURCE_TABLE`, `SOURCE_PROTOBUF`, `SOURCE_MAIN` or ""."""
    message: str
    """Unquoted and unescaped message; continuation lines appended after ``\\n``."""
    text: str
    """The first line as written (copy-paste prefixes removed), for evidence."""
    model: str | None = None
    """Status-table rows only: the model column."""
    version: str | None = None
    """Status-table rows only: the version column (None for ``-``)."""
    cut: bool = False
    """Status-table rows only: the row's last line ends without its border (cut by a terminal or a
    paste), so the message may stop mid-way (`inventory.leading_part_match`)."""
