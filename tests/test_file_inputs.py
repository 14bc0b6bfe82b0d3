"""Every file input is checked for type and size before it is read (issue #28, item 3).

A FIFO must not hang a command, /dev/zero must not fill memory, a directory or a dangling link
is a clear error; a YAML "billion laughs" is refused at its first alias; an error message quotes
a bounded prefix of a value; an SLO regex cannot make lint backtrack.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from test_lint_checks import PY, config, lint, runbooks, seed

from triton_sre import conventions as c
from triton_sre import inputs
from triton_sre.checks import ConfigError
from triton_sre.config import load_config
from triton_sre.inputs import MAX_SPEC_BYTES
from triton_sre.slo import SpecError, load_spec, parse_spec

BILLION_LAUGHS = """slos:
  - name: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
    b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
    c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
    d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
    e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
    f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
    g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
    h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
    i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
    objective: *i
"""


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def directory(path: Path) -> Path:
    path.mkdir()
    return path


def dangling(path: Path) -> Path:
    path.symlink_to(path.parent / "no-such-target")
    return path


def dev_zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


def oversized(path: Path) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(MAX_SPEC_BYTES + 1)  # sparse: no disk used
    return path


BAD = {
    "fifo": (fifo, "FIFO"),
    "directory": (directory, "directory"),
    "dangling link": (dangling, "dangling"),
    "/dev/zero": (dev_zero, "character device"),
    "oversized": (oversized, "larger than"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_spec_and_config_files_are_checked_before_reading(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "PIPE_WAIT_S", 1.0)  # a spec FIFO nobody writes to: refused after the wait
    make, said = BAD[case]
    path = make(tmp_path / "input.yaml")
    started = time.monotonic()
    with pytest.raises(SpecError, match=said):
        load_spec(path)
    with pytest.raises(ConfigError, match=said):
        load_config(path)
    assert time.monotonic() - started < 5


def test_billion_laughs_fails_fast_with_a_clear_message() -> None:
    assert len(BILLION_LAUGHS.encode()) < 600
    started = time.monotonic()
    with pytest.raises(SpecError, match="aliases") as raised:
        parse_spec(BILLION_LAUGHS)
    assert time.monotonic() - started < 1
    assert len(str(raised.value)) < 1000


def test_a_key_given_twice_is_refused_naming_the_key_and_both_lines(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys: `objective: 99.9` then `objective: 50` silently
    made a 50 % SLO. The shared loader refuses it, for the spec and for every config file."""
    spec = "slos:\n  - name: a\n    type: availability\n    objective: 99.9\n    objective: 50\n"
    with pytest.raises(SpecError) as raised:
        parse_spec(spec, "s.yaml")
    assert str(raised.value) == (
        "s.yaml: invalid YAML at line 5, column 5: duplicate key 'objective' (first at line 4)"
    )
    with pytest.raises(SpecError, match=r"line 1, column 11: duplicate key 'a' \(first at line 1\)"):
        parse_spec("x: {a: 1, a: 2}")
    config_file = tmp_path / "exporter.yaml"
    config_file.write_text("listen: ':8003'\nlisten: ':9000'\n")
    with pytest.raises(ConfigError, match=r"exporter.yaml: invalid YAML at line 2.*duplicate key 'listen'"):
        load_config(config_file)
    # the same key in two different mappings is no duplicate
    entry = "  - {name: %s, type: availability, objective: 99}\n"
    assert [s.name for s in parse_spec("slos:\n" + entry % "a" + entry % "b").slos] == ["a", "b"]


def test_error_messages_quote_a_bounded_prefix() -> None:
    huge = "x" * 1_000_000
    with pytest.raises(SpecError) as raised:
        parse_spec(f"slos:\n  - name: {huge}\n    type: latency\n")
    assert len(str(raised.value)) < 500 and "xxxx" in str(raised.value)


@pytest.mark.parametrize("case", sorted(BAD))
def test_one_bad_model_file_keeps_the_other_models_findings(tmp_path: Path, case: str) -> None:
    make, said = BAD[case]
    repo = seed(
        tmp_path,
        {
            "bad/config.pbtxt": config("bad"),
            "neg/config.pbtxt": config("neg", mbs=-1),
            "neg/1/model.py": PY,
        },
    )
    (repo / "bad" / "1").mkdir()
    if case == "oversized":
        with open(repo / "bad" / "1" / "model.py", "wb") as handle:
            handle.truncate(64 << 20)
        said = "larger than"
    else:
        make(repo / "bad" / "1" / "model.py")
    started = time.monotonic()
    code, body = lint(repo, "--target", "cpu", "--python", sys.executable)
    assert time.monotonic() - started < 30
    assert code == 1
    found = runbooks(body)
    assert ("bad", c.RUNBOOK_PYTHON_MODEL_ERROR) in found
    assert any(model == "neg" for model, _ in found)  # the other model's finding is still there
    bad = next(f for f in body["findings"] if f["model"] == "bad")
    assert said in str(bad)


SLOW_SLO = """slos:
  - name: latency
    type: latency
    models: {regex: "(a+)+b"}
    objective: 99
    period: 30d
    threshold: 200ms
    queue_time_share: 0.5
"""


def test_catastrophic_slo_regex_is_matched_in_linear_time(tmp_path: Path) -> None:
    slo = tmp_path / "slos.yaml"
    slo.write_text(SLOW_SLO)
    name = "a" * 40  # Python's re: 2^40 steps
    repo = seed(
        tmp_path / "repo",
        {
            f"{name}/config.pbtxt": config(
                name, extra="dynamic_batching {\n  max_queue_delay_microseconds: 1\n}\n"
            )
        }
        | {f"{name}/1/model.py": PY},
    )
    started = time.monotonic()
    code, _ = lint(repo, "--target", "cpu", "--slo-file", str(slo))
    assert time.monotonic() - started < 10
    assert code == 0


def test_triage_refuses_a_directory_or_a_device(tmp_path: Path) -> None:
    from triton_sre.diagnosis.api import DiagnosisError, diagnose_log

    for bad, said in ((tmp_path, "directory"), (Path("/dev/zero"), "not a regular file")):
        with pytest.raises(DiagnosisError, match=said):
            diagnose_log(str(bad), {})


def test_bot_token_file_and_runbook_pages_are_checked_before_reading(tmp_path: Path) -> None:
    from triton_sre.bot.command import read_bearer_token
    from triton_sre.diagnosis.catalog import CatalogError, load_catalog

    started = time.monotonic()
    with pytest.raises(ConfigError, match="FIFO"):
        read_bearer_token(str(fifo(tmp_path / "token")), {})
    with pytest.raises(ConfigError, match="character device"):
        read_bearer_token(str(dev_zero(tmp_path / "zero-token")), {})
    runbooks = directory(tmp_path / "runbooks")
    fifo(runbooks / "stuck.md")
    with pytest.raises(CatalogError, match="FIFO"):
        load_catalog(runbooks)
    assert time.monotonic() - started < 5
