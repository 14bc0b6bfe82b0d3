"""Control characters from the user's arguments, a scenario file, Prometheus or Triton are shown
escaped (``\\x1b``) in `rollout check` and `gameday` text output: an ``ESC [2J`` or a bare CR
echoed as it came clears or rewrites the operator's terminal. JSON output stays faithful JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_prometheus import serve
from test_fault_probes import run

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.gameday import scorecard
from triton_sre.gameday.runner import Result
from triton_sre.redact import printable

HOSTILE = "m\x1b[2J\rv\x07\x9b31m\u202e"
"""Clear the screen, go back to the line's start, ring, a C1 CSI, a right-to-left override."""


def _raw_controls(text: str) -> list[str]:
    return [ch for ch in text if not ch.isprintable() and ch not in "\n"]


def test_printable_escapes_every_control_and_keeps_the_rest() -> None:
    assert printable(HOSTILE) == "m\\x1b[2J\\rv\\x07\\x9b31m\\u202e"
    assert printable("plain ünïcode ✓ text") == "plain ünïcode ✓ text"
    assert printable("a\nb\tc") == "a\\nb\\tc"  # one field is one line
    assert printable("m\udcff") == "m\\xff"  # a byte that was not UTF-8 (surrogateescape): the byte


def _serve_one_series() -> Any:
    return serve(
        lambda query, stamps: {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": [[t, "1"] for t in stamps]}],
        }
    )


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_rollout_check_shows_a_hostile_model_name_escaped_in_text_and_as_is_in_json(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    httpd = _serve_one_series()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["rollout", "check", "--prometheus", url, "--model", HOSTILE, "--baseline-version", "1"]
        code = main([*argv, "--candidate-version", "2\r", "--window", "5m", "--format", fmt])
    finally:
        httpd.shutdown()
        httpd.server_close()
    out, err = capsys.readouterr()
    assert code == c.EXIT_OK, err
    if fmt == "json":
        body = json.loads(out)
        assert body["candidate"] == f"{HOSTILE} v2\r"  # faithful: the JSON escapes are JSON's
    else:
        assert _raw_controls(out) == [], out
        assert "m\\x1b[2J\\rv" in out and "v2\\r" in out


def test_a_prometheus_error_text_is_shown_escaped(tmp_path: Path) -> None:
    body = json.dumps({"status": "error", "errorType": "bad_data", "error": "boom\x1b[2J\x1b]0;owned\x07"})
    httpd = serve(lambda query, stamps: body.encode())
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = "rollout check --model m --baseline-version 1 --candidate-version 2 --step 30s --prometheus"
        code, _, err = run([*argv.split(), url], tmp_path)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == c.EXIT_USAGE, err
    assert _raw_controls(err) == [] and "boom\\x1b[2J\\x1b]0;owned\\x07" in err, err


def test_the_same_series_error_shows_the_name_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["rollout", "check", "--prometheus", "http://127.0.0.1:9", "--model", HOSTILE]
    assert main([*argv, "--baseline-version", "1", "--candidate-version", "1"]) == c.EXIT_USAGE
    err = capsys.readouterr().err
    assert _raw_controls(err) == [] and "the same series" in err, err


def _result() -> Result:
    result = Result("file-x", f"injects {HOSTILE}", f"Alert{HOSTILE}", f"runbook{HOSTILE}")
    result.alert, result.runbook = f"Alert{HOSTILE}", f"runbook{HOSTILE}"
    result.error = f"RuntimeError: {HOSTILE}"
    result.lost = [f"lost {HOSTILE}"]
    return result


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_scorecard_shows_answers_and_errors_escaped(fmt: str) -> None:
    text = scorecard.render([_result()], {"error": f"stack {HOSTILE}"}, fmt)
    assert _raw_controls(text) == [], text
    assert "Alertm\\x1b[2J" in text and "RuntimeError: m\\x1b[2J" in text and "stack m\\x1b" in text


def test_the_json_scorecard_stays_faithful() -> None:
    body = json.loads(scorecard.render([_result()], {"error": f"stack {HOSTILE}"}, "json"))
    assert body["scenarios"][0]["alert"] == f"Alert{HOSTILE}" and body["error"] == f"stack {HOSTILE}"


@pytest.mark.parametrize(
    "args",
    [["--scenario", HOSTILE], ["--attach", f"/nonexistent/{HOSTILE}"]],
    ids=["unknown-scenario", "attach"],
)
def test_gameday_echoes_arguments_escaped(args: list[str], tmp_path: Path) -> None:
    code, _, err = run(["gameday", *args], tmp_path)
    assert code == c.EXIT_USAGE, err
    assert _raw_controls(err) == [] and "m\\x1b[2J\\rv" in err, err


def test_gameday_list_shows_a_scenario_files_text_escaped(tmp_path: Path) -> None:
    scenario = tmp_path / "hostile.py"
    scenario.write_text(
        f"{HOSTILE!r}\n"  # the docstring: what it injects
        "NAME = 'hostile'\n"
        f"expect = {{'alert': 'A', 'runbook': {sorted(c.RUNBOOK_IDS)[0]!r}, "
        f"'labels': {{'model': {HOSTILE!r}}}}}\n"
        "def inject(ctx):\n    pass\n"
        "def restore(ctx):\n    pass\n"
    )
    code, out, err = run(["gameday", "--list", "--scenario-file", str(scenario)], tmp_path)
    assert code == c.EXIT_OK, err
    assert _raw_controls(out) == [] and "m\\x1b[2J" in out, out
