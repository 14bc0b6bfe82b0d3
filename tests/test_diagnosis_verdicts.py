"""A model's load verdict inside a pasted block is quoted from its own line (diagnosis/verdicts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.diagnosis.engine import diagnose_events
from triton_sre.diagnosis.logparse import parse_text

LOGS = Path(__file__).parent / "data" / "logs"
OOM = (
    "ERROR: failed to load model 'resnet50': CUDA out of memory. Tried to allocate 2.00 GiB "
    "(GPU 0; 15.78 GiB total capacity)"
)


@pytest.mark.parametrize(
    "lines",
    [
        ["+ tritonserver --model-repository=/models", OOM, "after"],  # a shell's trace line before it
        ["some text", OOM, "after"],
        ["some text", OOM[:80], OOM[80:], "after"],  # cut at a terminal's width, the rest on the next line
    ],
    ids=["xtrace", "text", "terminal-cut"],
)
def test_a_verdict_in_a_raw_block_is_quoted_from_its_line(lines: list[str]) -> None:
    (finding,) = diagnose_events(parse_text("\n".join(lines) + "\n")).findings
    assert (finding.model, finding.runbook) == ("resnet50", c.RUNBOOK_GPU_OUT_OF_MEMORY)
    assert [(e.line, e.text[:40]) for e in finding.evidence] == [(2, OOM[:40])]


@pytest.mark.parametrize(
    ("log", "line", "words"),
    [
        # a client's exception under a dashed rule and a notebook cell's preamble
        ("heldout10/nvtabular-1280.log", 23, "load failed for model 'movielens_hugectr'"),
        # kubectl describe: the Reason field, not "Spec:"
        ("heldout21/seldon-core-4617.log", 13, "rpc error: code = InvalidArgument"),
    ],
)
def test_corpus_blocks_quote_the_verdict_line(log: str, line: int, words: str) -> None:
    text = (LOGS / log).read_text()
    evidence = [e for f in diagnose_events(parse_text(text)).findings for e in f.evidence]
    assert any(e.line == line and words in e.text for e in evidence), evidence
    body = text.split("\n")
    assert words in body[line - 1]  # the line number points at the quoted line


def test_a_bare_verdict_below_the_paste_s_words_names_the_model() -> None:
    """Core's closing line pasted under a sentence of the user's: the model failed, quoted from its line."""
    text = "We see this after the upgrade:\n  failed to load 'mymodel'\n"
    (finding,) = diagnose_events(parse_text(text)).findings
    assert (finding.model, finding.runbook) == ("mymodel", c.RUNBOOK_UNKNOWN_LOAD_FAILURE)
    assert [e.line for e in finding.evidence] == [2]


def test_a_cause_above_a_bare_verdict_in_one_block_is_the_model_s() -> None:
    """heldout27's Riva notes: the CUDA error, the model's closing line, main's refusal, in one block."""
    text = (LOGS / "heldout27" / "riva-xavier-conformer-trt-cuda-oom.log").read_text()
    first = diagnose_events(parse_text(text)).findings[0]
    assert (first.model, first.runbook) == (
        "riva-trt-conformer-en-US-asr-streaming-am-streaming",
        c.RUNBOOK_GPU_OUT_OF_MEMORY,
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("Hello, I get this:\n\nERROR something failed badly\n", 3),
        ("x\nERROR: something failed badly\n", 2),
        ("Running it:\n2024-01-01 10:00:00.000 ERROR onnxruntime: Non-zero status code returned\n", 2),
        ("the job printed\n  FATAL boom\n", 2),
        ("kubectl said:\nError: container triton terminated with exit code 139.\n", 2),
        ("and then\nerror during capture\n", 2),
        # a cobra CLI's returned error (Singularity/Apptainer's `instance stop`, heldout66)
        ('then I stopped it:\nError for command "stop": no instance found\n', 2),
    ],
)
def test_a_level_word_line_under_other_text_is_never_empty(text: str, line: int) -> None:
    findings = diagnose_events(parse_text(text)).findings
    assert findings and findings[0].severity == c.IMPACT_CRITICAL
    assert findings[0].evidence[0].line == line


def test_a_report_field_named_error_is_no_failure() -> None:
    """vegeta's report (heldout22's healthy KServe log): ``Error Set:`` with nothing under it."""
    assert not diagnose_events(parse_text("Success       [ratio]   100.00%\nError Set:\n")).findings


# Lines that are a failure alone but a header with nothing under it (the lines under it say what failed).
_ALONE_ONLY = {
    "Error:",  # kserve-2246, server-1925
    "error:",
    "Error Set:",  # vegeta's report field (heldout22's healthy KServe log): alone it reads as a failure word
    # numba's report field (heldout121's numba-5303; its "Error at driver init" line decides)
    "Error class: <class 'numba.cuda.cudadrv.error.CudaSupportError'>",
}


def test_every_corpus_failure_line_is_read_under_a_sentence_of_prose() -> None:
    """Never empty: each corpus line that alone gives a critical finding still gives one with a user's own
    sentence pasted above it (one raw block, the failure not its first line)."""
    seen: set[str] = set()
    missed = []
    for path in sorted(LOGS.rglob("*.log")):
        for line in path.read_text(errors="replace").split("\n"):
            text = line.strip()
            if not text or text.startswith("#") or text in seen or len(text) > 400 or text in _ALONE_ONLY:
                continue
            seen.add(text)
            alone = diagnose_events(parse_text(text + "\n")).findings
            if not alone or alone[0].severity != c.IMPACT_CRITICAL:
                continue
            under = diagnose_events(parse_text(f"Hello, after the upgrade I get this:\n{text}\n")).findings
            if not under or under[0].severity != c.IMPACT_CRITICAL:
                missed.append((path.name, text[:100]))
    assert len(seen) > 1000
    assert missed == []
