"""`triton-sre triage` of a compressed log cut short (a download or a copy that stopped): the part that
decoded is diagnosed, stderr says where the compressed stream was cut, `--format json` carries `truncated`,
and the exit is 1 for a failure found in that part, else 3 (the cause may be in the part lost). Damaged data
(not cut) and a cut before any text stay exit 2. Before (probes21), every cut was `corrupt gzip data:
Compressed file ended before the end-of-stream marker was reached`, exit 2, nothing diagnosed."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main

BROKEN_LOG = Path(__file__).parent / "data" / "logs" / "real" / "default-exit-false.log"
"""A real Triton 2.51 log of a model that failed to load (its findings are critical)."""
FILLER = "".join(
    f"I1129 18:{i // 1000:02d}:{i % 60:02d}.{i:06d} 1 a.cc:1] served {i * 7919}\n" for i in range(24000)
)
"""Info lines after the failure, later than the log's own (1.2 MB, over bzip2's 900 kB block: only a whole
block decodes): the part a cut loses (they hold no finding)."""
PACKERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": gzip.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["triage", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("compression", sorted(PACKERS))
def test_a_cut_log_is_diagnosed_as_far_as_it_decodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compression: str
) -> None:
    text = BROKEN_LOG.read_text() + FILLER
    packed = PACKERS[compression](text.encode())
    whole, cut = tmp_path / "whole.log", tmp_path / "cut.log"
    whole.write_text(text)  # the same log uncut: the lines lost hold no finding
    at = len(packed) - 1500  # well inside the filler's compressed bytes
    cut.write_bytes(packed[:at])
    want_code, want_out, _ = run(capsys, "--format", "json", str(whole))
    code, out, err = run(capsys, "--format", "json", str(cut))
    assert want_code == code == c.EXIT_FAILURE, err
    got = json.loads(out)
    assert got["findings"] and got["findings"] == json.loads(want_out)["findings"]
    assert got["truncated"] == {"compression": compression, "at_byte": at}
    assert "truncated" not in json.loads(want_out)
    assert f"the {compression} data is cut short at byte {at:,} of the compressed stream" in err
    assert str(cut) in err and "cause may be in the part lost" not in err


def test_a_cut_log_with_no_failure_in_its_part_exits_3_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packed = gzip.compress(FILLER.encode())[:200_000]
    cut = tmp_path / "cut.log.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    code, out, err = run(capsys, str(cut))
    assert code == c.EXIT_INCONCLUSIVE == 3
    assert out == "No load failure found.\n"
    assert f"cut short at byte {len(packed) // 2:,} of the compressed stream" in err
    assert "the cause may be in the part lost" in err
    complete = tmp_path / "whole.log.gz"
    complete.write_bytes(packed)
    assert run(capsys, str(complete))[0] == c.EXIT_OK


def test_a_cut_log_on_stdin_alike() -> None:
    packed = gzip.compress((BROKEN_LOG.read_text() + FILLER).encode())
    cut = packed[: len(packed) - 1500]
    done = subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "triage", "--format", "json", "-"],
        input=cut,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == c.EXIT_FAILURE, done.stderr
    assert json.loads(done.stdout)["truncated"] == {"compression": "gzip", "at_byte": len(cut)}
    assert f"at byte {len(cut):,}" in done.stderr.decode()


def test_a_cut_before_any_text_and_damaged_data_stay_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packed = gzip.compress((BROKEN_LOG.read_text() + FILLER).encode())
    bad = tmp_path / "bad"
    bad.write_bytes(packed[:12])  # the header and a few bytes: nothing decodes
    code, out, err = run(capsys, str(bad))
    assert code == c.EXIT_USAGE and out == ""
    assert "cut short at byte 12 of the compressed stream, before any text decoded" in err
    damaged = bytearray(packed)
    damaged[len(packed) // 2 : len(packed) // 2 + 64] = bytes(64)  # not cut: wrong bytes mid-stream
    bad.write_bytes(bytes(damaged))
    code, out, err = run(capsys, str(bad))
    assert code == c.EXIT_USAGE and out == ""
    assert "corrupt gzip data" in err
