"""Fault probes, round fourteen (branch `probes14`, 2026-12-06): symbolic link loops in a model
repository against the real Triton, the bot's Slack settings from the environment —
docs/failure-behaviour.md, "Fault probes, round fourteen"."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Callable
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import triton_sre
from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.stack.local_triton import LocalTriton, LocalTritonError

ROOT = Path(triton_sre.__file__).resolve().parents[1]  # the code under test (PYTHONPATH)
PYTHON_MODEL = "class TritonPythonModel:\n    def execute(self, requests):\n        return []\n"


def _repository(root: Path, *names: str) -> Path:
    for name in names:
        (root / name / "1").mkdir(parents=True)
        (root / name / "config.pbtxt").write_text(f'name: "{name}"\nbackend: "python"\nmax_batch_size: 0\n')
        (root / name / "1" / "model.py").write_text(PYTHON_MODEL)
    return root


def _lint(root: Path) -> tuple[int, list[dict[str, Any]]]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["lint", "--format", "json", "--target", "cpu", str(root)])
    return code, json.loads(out.getvalue())["findings"]


def _index(server: LocalTriton) -> list[dict[str, Any]]:
    request = urllib.request.Request(f"{server.http_url}/v2/repository/index", method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


@pytest.mark.triton
@pytest.mark.server
@pytest.mark.timeout(300)
def test_a_symlink_loop_in_a_model_folder_is_critical_as_triton_never_loads_that_model(
    tmp_path: Path, fresh_triton_factory: Callable[..., LocalTriton]
) -> None:
    """Before: a loop in a model folder (`config.pbtxt -> config.pbtxt`, or any entry) was a
    lint-stray-entry WARNING, 'Files or folders Triton never reads', exit 0. Triton 2.51 stats it when
    it polls the model (`Poll failed for model directory`): the model never loads. Now critical, exit 1."""
    repo = _repository(tmp_path / "repo", "good", "looped_config", "looped_entry")
    config = repo / "looped_config" / "config.pbtxt"
    config.unlink()
    config.symlink_to("config.pbtxt")
    (repo / "looped_entry" / "junk").symlink_to("junk")
    server = fresh_triton_factory(repo)
    states = {entry["name"]: entry.get("state") for entry in _index(server)}
    assert states == {"good": "READY", "looped_config": None, "looped_entry": None}, states
    code, findings = _lint(repo)
    assert code == 1, findings
    found = {(f["model"], f["runbook"], f["severity"], f["file"]) for f in findings}
    assert found == {
        ("looped_config", c.RUNBOOK_PERMISSION_DENIED, c.IMPACT_CRITICAL, "looped_config/config.pbtxt"),
        ("looped_entry", c.RUNBOOK_PERMISSION_DENIED, c.IMPACT_CRITICAL, "looped_entry/junk"),
    }, findings
    assert all("never loaded" in f["evidence"][0]["text"] for f in findings), findings


@pytest.mark.triton
@pytest.mark.server
@pytest.mark.timeout(300)
def test_a_symlink_loop_at_the_repository_top_is_critical_as_triton_loads_no_model(
    tmp_path: Path, fresh_triton_factory: Callable[..., LocalTriton]
) -> None:
    """Before: a loop beside the model folders was a WARNING (server), exit 0. Triton 2.51 fails its
    whole repository poll on it (`failed to poll model repository`): no model loads, the index
    answers 500. Now a critical server-wide finding, exit 1."""
    repo = _repository(tmp_path / "repo", "good")
    (repo / "loop").symlink_to("loop")
    server = fresh_triton_factory(repo, start=False, startup_timeout=20)
    with pytest.raises(LocalTritonError, match="repository index answered 500"):
        server.start()  # stopped after: the message is what the live server answered
    assert "failed to poll model repository" in server.log_path.read_text()
    code, findings = _lint(repo)
    assert code == 1, findings
    (finding,) = findings
    assert (finding["model"], finding["runbook"], finding["severity"], finding["file"]) == (
        None, c.RUNBOOK_PERMISSION_DENIED, c.IMPACT_CRITICAL, "loop",
    ), finding  # fmt: skip
    assert "no model loads" in finding["evidence"][0]["text"], finding


# -- the bot's Slack settings from the environment ---------------------------------------------------------
BOT_ENV_PROBES = {  # the variable and what it holds; the planted secret must never show
    "api-url-no-url": (c.ENV_SLACK_API_URL, "8f14e45fceea167a5a36dedd4s3cretpart"),
    "api-url-unparsable": (c.ENV_SLACK_API_URL, "http://admin:s3cretpart@[::1/api/"),
    "slack-token-two-lines": (c.ENV_SLACK_BOT_TOKEN, "xoxb-1-first\nxoxb-2-s3cretpart"),
    "webhook-token-control": (c.ENV_BOT_TOKEN, "first\x01s3cretpart"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("probe", sorted(BOT_ENV_PROBES))
def test_the_bots_slack_settings_from_the_environment_are_checked_before_it_starts(
    tmp_path: Path, probe: str
) -> None:
    """Before: `$SLACK_API_URL` was any text: the bot started (exit 0 at its stop), the Slack auth
    thread died with a traceback (`ValueError: unknown url type: '8f14…/auth.test'`, the value
    unredacted) and every delivery failed; a Slack token holding a line break started too, and the
    client's error quoted what followed it (`header value: 'Bearer <redacted>\\nxoxb-2-…'`); a webhook
    token no header can carry refused every webhook (401). Now each is a configuration error, exit 2,
    before the bot listens, the value not shown."""
    variable, value = BOT_ENV_PROBES[probe]
    planted = {variable: value}
    if variable == c.ENV_SLACK_API_URL:
        named = f"${variable}: must be an http(s) URL"
    else:
        named = f"${variable} holds a blank, a line break or a control character"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")}
    env.pop(c.ENV_CONFIG, None)
    env.update({"PYTHONPATH": str(ROOT), c.ENV_SLACK_BOT_TOKEN: "xoxb-1", c.ENV_BOT_TOKEN: "hook", **planted})
    argv = ["bot", "--listen", "127.0.0.1:0", "--outbox", str(tmp_path / "outbox.db"), "--channel", "#x"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "triton_sre.cli", *argv], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"the bot started and ran: {err[-2000:]}")
    assert proc.returncode == c.EXIT_USAGE, err
    assert named in err and "Traceback" not in err, err
    assert "s3cretpart" not in err + out, err
    assert len(err.strip().splitlines()) == 1, err
