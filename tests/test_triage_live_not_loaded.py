"""`triage --triton-url` on a server that refused a model's config (journey26), against the real Triton 2.51.

A config.pbtxt Triton refuses while polling the repository (here a preferred_batch_size above
max_batch_size) leaves the model in the repository index by its name alone: no version, state or reason.
triage said "No load failure found." and nothing of the model; it now names it and where its reason is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from corpus import refused_config_repository

from triton_sre import conventions as c
from triton_sre.diagnosis.command import not_loaded_note

ROOT = Path(__file__).resolve().parent.parent
REFUSED = "reranker"
FINE = "ok_model"


def _triage(url: str, *fmt: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_sre.cli", "triage", "--triton-url", url, *fmt],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def test_a_model_whose_config_triton_refused_is_named(fresh_triton_factory: Any, tmp_path: Path) -> None:
    repo = refused_config_repository(tmp_path / "models", REFUSED, FINE)
    triton = fresh_triton_factory(repo)  # --model-control-mode=none, --exit-on-error=false
    assert "Poll failed for model directory 'reranker'" in triton.read_log()

    text = _triage(triton.http_url)
    assert text.returncode == c.EXIT_OK  # nothing says it is a failure under every control mode
    assert "No load failure found." in text.stdout
    # the release is GET /v2's, not a log's (it said "read from the log")
    assert text.stdout.startswith("Triton release reported by the server: 24.10 (server 2.51)\n")
    assert f"Not loaded, with no state or reason in the repository index: {REFUSED}." in text.stdout
    assert FINE not in text.stdout and "triton-sre triage <log>" in text.stdout

    as_json = _triage(triton.http_url, "--format", "json")
    assert json.loads(as_json.stdout)["findings"] == []  # stdout stays one JSON document
    assert REFUSED in as_json.stderr


def test_the_note_is_empty_when_every_entry_has_a_state() -> None:
    assert not_loaded_note([{"name": "a", "version": "1", "state": "READY"}]) == ""
    note = not_loaded_note([{"name": "b"}, {"name": "a"}, {"name": "c", "version": "1", "state": "READY"}])
    assert note.startswith("Not loaded, with no state or reason in the repository index: a, b.")
