"""Triage output shows the release read from the log and the release-aware advice on its own line."""

from __future__ import annotations

import json

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text
from triton_sre.diagnosis.releases import (
    ReleaseReader,
    release_in,
    server_release_from_version,
    server_version_of_release,
)
from triton_sre.diagnosis.render import to_json, to_markdown, to_text

# The FIL backend's XGBoost JSON error (fil_backend#378 wording) under the 22.11 banner.
FAILURE = (
    "E1128 10:29:44.054714 1 model_lifecycle.cc:597] failed to load 'xgb' version 1: Unknown: "
    "xgboost_json.cc:539: Provided JSON could not be parsed as XGBoost model. Parsing error at offset 1\n"
)
BANNER = "NVIDIA Release 22.11 (build 48581223)\n"


def test_release_and_advice_in_json() -> None:
    report = diagnose_events(parse_text(BANNER + FAILURE))
    body = json.loads(json.dumps(to_json(report)))
    assert (body["release"], body["server_version"]) == ("22.11", "2.28")
    finding = body["findings"][0]
    assert finding["runbook"] == c.RUNBOOK_LIBRARY_VERSION_MISMATCH
    assert "24.03 and later" in finding["release_advice"] and "model_support.md" in finding["release_advice"]
    assert finding["remediation"].endswith(finding["release_advice"])  # one-line consumers keep it


def test_release_and_advice_in_text_and_markdown() -> None:
    report = diagnose_events(parse_text(BANNER + FAILURE))
    text = to_text(report)
    assert text.startswith("Triton release read from the log: 22.11 (server 2.28)\n")
    fix = next(line for line in text.splitlines() if line.startswith("   fix: "))
    advice = next(line for line in text.splitlines() if line.startswith("   in 22.11: "))
    assert "24.03 and later" not in fix and "24.03 and later" in advice
    md = to_markdown(report)
    assert "Triton release read from the log: 22.11 (server 2.28)." in md
    assert "> In 22.11: " in md and md.count("24.03 and later") == 1


def test_no_release_no_advice() -> None:
    report = diagnose_events(parse_text(FAILURE))
    body = to_json(report)
    assert body["release"] is None and body["server_version"] is None
    assert body["findings"][0]["release_advice"] is None
    assert "release read from the log" not in to_text(report)
    # A later release without the known issue: the release is shown, no advice.
    newer = diagnose_events(parse_text("NVIDIA Release 24.10 (build 1)\n" + FAILURE))
    assert to_json(newer)["findings"][0]["release_advice"] is None
    assert to_text(newer).startswith("Triton release read from the log: 24.10 (server 2.51)")


def test_server_version_is_the_inverse_of_the_release_mapping() -> None:
    for minor in range(7, 90):
        release = server_release_from_version(2, minor)
        assert release is not None and server_version_of_release(release) == f"2.{minor}"
    assert server_version_of_release("20.12") is None and server_version_of_release("bad") is None


def test_25_07_was_a_patch_version_and_shifts_the_mapping_by_a_month() -> None:
    # The release pages: 2.44.0 = 24.03, 2.59.0 = 25.06, 2.75.0 = 26.11; the notes skip 25.07, whose
    # images (the server's compatibility tables list 25.07 trtllm and vllm images) hold 2.59.1, r25.07's
    # TRITON_VERSION.
    assert server_release_from_version(2, 44) == "24.03"
    assert server_release_from_version(2, 59) == "25.06"
    assert server_release_from_version(2, 59, 1) == "25.07"
    assert server_release_from_version(2, 60) == "25.08"
    assert server_release_from_version(2, 75) == "26.11"
    assert server_version_of_release("25.07") == "2.59"
    assert server_version_of_release("26.11") == "2.75"
    assert (
        release_in("| server_version | 2.59.1 |") == "25.07"
        and release_in("Triton Server Version 2.59.0") == "25.06"
    )
    reader = ReleaseReader()
    reader.note_version("2.59.1")
    assert reader.release == "25.07"


def test_control_characters_of_a_log_never_reach_the_terminal() -> None:
    # A log line holding a terminal title sequence and a bell (a model folder named so, a pasted
    # shell prompt): text and Markdown show their escapes; JSON escapes its own.
    line = (
        "E1203 09:12:41.412870 1 model_lifecycle.cc:630] \"failed to load 'm\x07' version 1: Invalid "
        "argument: unexpected platform type 'x\x1b]0;title\x07\x9b'\"\n"
    )
    report = diagnose_events(parse_text(line))
    assert report.findings
    for out in (to_text(report), to_markdown(report)):
        assert not any(ch in out for ch in "\x07\x1b\x9b"), out
        assert "\\x07" in out
    assert "\x07" in json.loads(json.dumps(to_json(report)))["findings"][0]["evidence"][0]["text"]
