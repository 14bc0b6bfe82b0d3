"""A log quoted in code comments (a deploy script's or a notebook's note on the failure it met) reads as the
log it quotes; a comment or a root prompt beside other lines stays a comment (issue #20: never empty)."""

from __future__ import annotations

import gzip
from pathlib import Path

from triton_sre import conventions as c
from triton_sre.diagnosis.api import diagnose_log
from triton_sre.diagnosis.catalog import load_catalog
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.quoted import MAX_QUOTED_LINES

_QUOTE = (
    "# The g5 fleet cannot run the CUDA 12 image:\n"
    "#   * the 25.04 DLC on a host with driver 470.256.02 refused outright --\n"
    '#     "built for NVIDIA Driver Release 575.51 or later ... compatibility mode is\n'
    '#     UNAVAILABLE" -- after which Triton started with no GPU visible.\n'
)


def _findings(text: str) -> list[tuple[str | None, str]]:
    return [(f.model, f.runbook) for f in diagnose_events(parse_text(text)).findings]


def test_a_log_quoted_in_comments_reads_as_the_log() -> None:
    report = diagnose_events(parse_text(_QUOTE))
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_CUDA_DRIVER_MISMATCH]
    assert report.findings[0].evidence[0].line == 3  # the comment line the refusal starts on


def test_the_file_reader_reads_it_too(tmp_path: Path) -> None:
    path = tmp_path / "note.log.gz"
    path.write_bytes(gzip.compress(_QUOTE.encode()))
    report = diagnose_log(str(path), load_catalog(None).titles)
    assert [f.runbook for f in report.findings] == [c.RUNBOOK_CUDA_DRIVER_MISMATCH]


def test_a_glog_line_quoted_in_a_python_comment() -> None:
    text = (
        "# E1203 10:00:00.000000 1 model_lifecycle.cc:654] failed to load 'resnet' version 1: Invalid "
        "argument: unexpected directory name 'resnet50' for model 'resnet', "
        "directory name must equal model name\n"
    )
    assert _findings(text) == [("resnet", c.RUNBOOK_CONFIG_NAME_MISMATCH)]


def test_comments_beside_other_lines_stay_comments() -> None:
    # A root prompt's command and a comment above a healthy start: the comments are never read.
    text = (
        "# tritonserver --model-repository=/models  # failed to load before the fix\n"
        "I1203 10:00:00.000000 1 server.cc:674] \n"
        "I1203 10:00:01.000000 1 grpc_server.cc:2451] Started GRPCInferenceService at 0.0.0.0:8001\n"
    )
    assert _findings(text) == []
    assert _findings(text.replace("# tritonserver", "#!/bin/sh\n# tritonserver")) == []


def test_a_commented_config_is_no_failure() -> None:
    text = "# name: \"resnet\"\n# max_batch_size: 8\n# instance_group [ { kind: KIND_GPU } ]\n"
    assert _findings(text) == []


def test_a_long_commented_file_is_not_a_quote() -> None:
    # Past MAX_QUOTED_LINES comment lines the input is a commented file: nothing is kept or read.
    filler = "# a line of a long commented file\n" * MAX_QUOTED_LINES
    assert _findings(filler + _QUOTE) == []
    assert _findings(_QUOTE + filler[: len(filler) // 2]) == [(None, c.RUNBOOK_CUDA_DRIVER_MISMATCH)]
