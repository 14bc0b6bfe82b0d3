"""Fault probes, round four (branch `probes`, 2026-12-04): what a sweep of every command and flag
with hostile input found (docs/failure-behaviour.md, "Fault probes, round four")."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_fault_probes import Silent, assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.durations import MAX_SECONDS_ARG, seconds_arg

HUGE_SECONDS = [
    "doctor --triton-url {u} --timeout 1e10",
    "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u} --timeout 1e10",
    "rollout check --model m --baseline-version 1 --candidate-version 2 --prometheus {u} --deadline 1e10",
    "report --out out --prometheus-url {u} --step 1e20",
]


@pytest.fixture
def mute() -> Iterator[Silent]:
    """A server that accepts connections and never answers."""
    server = Silent()
    yield server
    server.close()


@pytest.mark.parametrize("line", HUGE_SECONDS)
def test_an_absurd_number_of_seconds_is_refused_at_parsing(
    tmp_path: Path,
    mute: Silent,
    line: str,
) -> None:
    """`--timeout 1e10` went to socket.settimeout: `internal error: OverflowError: timestamp out of
    range for platform time_t` once a server accepted the connection."""
    code, _, err = run(line.format(u=mute.url).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, "at most")
    assert "internal error" not in err and not mute.accepted.is_set()
    assert not (tmp_path / "out").exists()


def test_seconds_arg_takes_up_to_its_bound_and_no_more() -> None:
    assert seconds_arg(str(MAX_SECONDS_ARG)) == MAX_SECONDS_ARG
    assert seconds_arg("0.5") == 0.5
    for text in (str(MAX_SECONDS_ARG + 1), "1e10", "9" * 400):
        with pytest.raises(argparse.ArgumentTypeError, match="at most"):
            seconds_arg(text)
