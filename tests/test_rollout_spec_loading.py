"""The spec's `rollout:` section is validated where the spec loads (slo.py), not where a command
first reads it: every command that loads the spec refuses a bad setting with one message naming
the entry and the field, and exit 2 (`lint`, `report` and `doctor` used to accept what `generate`
and `rollout check` refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_fault_probes import assert_clean_error, run

from triton_sre import conventions as c
from triton_sre.data import shipped
from triton_sre.slo import SpecError, parse_spec

# (the `rollout:` section's body, what the message must name)
BAD = [
    ("bogus: 1", "rollout: unknown key 'bogus'"),
    ("window: 0s", "rollout.window"),
    ("window: -5m", "rollout.window"),
    ("window: 500ms", "rollout.window"),  # the generated promtool test read "-500ms"
    ("window: 5s", "rollout.window"),  # shorter than two scrapes: a rate over it is empty
    ("window: 90500ms", "rollout.window"),  # the alert's `for` is in whole seconds
    ("alpha: .nan", "rollout.alpha"),
    ("alpha: 0", "rollout.alpha"),  # p < 0 never: nothing could fail
    ("alpha: 5", "rollout.alpha"),  # p < 5 always: every difference "significant"
    ("alpha: '0.05'", "rollout.alpha"),
    (f"margins: {{{c.ROLLOUT_FIG_LATENCY_P99}: .inf}}", f"rollout.margins.{c.ROLLOUT_FIG_LATENCY_P99}"),
    (f"margins: {{{c.ROLLOUT_FIG_LATENCY_P99}: -0.1}}", f"rollout.margins.{c.ROLLOUT_FIG_LATENCY_P99}"),
    # a batching ratio lower by 150 % of the baseline is below 0: the guard could never fire
    (f"margins: {{{c.ROLLOUT_FIG_BATCHING_RATIO}: 1.5}}", f"rollout.margins.{c.ROLLOUT_FIG_BATCHING_RATIO}"),
    # an error ratio (0..1) worse by 2 than its baseline cannot be
    (f"margins: {{{c.ROLLOUT_FIG_ERROR_RATIO}: 2}}", f"rollout.margins.{c.ROLLOUT_FIG_ERROR_RATIO}"),
    ("margins: {p99: 0.1}", "rollout.margins: unknown figure"),
    ("min_samples: 2.5", "rollout.min_samples"),
    ("min_samples: 1", "rollout.min_samples"),
    ("min_request_rate: -1", "rollout.min_request_rate"),
    ("min_request_rate: .inf", "rollout.min_request_rate"),
    ("pairs: [{name: a, baseline: b, candidate: b}]", "rollout.pairs[0]"),
    ("pairs: [{name: a, baseline: b}]", "rollout.pairs[0]"),
    ('pairs: [{name: a, baseline: "b\\e[2J", candidate: c}]', "rollout.pairs[0]"),
    (
        "pairs: [{name: a, baseline: b, candidate: c}, {name: a, baseline: d, candidate: e}]",
        "rollout.pairs[1]",
    ),
]


@pytest.mark.parametrize("alpha", ["0", "1", "5", "-0.5"])
def test_alpha_out_of_range_is_named_by_the_open_interval_it_must_be_in(alpha: str) -> None:
    """docs/rollouts.md's message: 0 and 1 are refused like 5, so no message may call them allowed."""
    with pytest.raises(SpecError) as caught:
        parse_spec(_text(f"alpha: {alpha}"), "s.yaml")
    assert "s.yaml: rollout.alpha: must be greater than 0 and less than 1, got" in str(caught.value)


def _text(body: str) -> str:
    return shipped("slos.yaml").read_text() + f"\nrollout:\n  {body}\n"


@pytest.mark.parametrize(("body", "names"), BAD, ids=[b for b, _ in BAD])
def test_a_bad_rollout_setting_is_refused_when_the_spec_loads(body: str, names: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(_text(body), "s.yaml")
    assert f"s.yaml: {names}" in str(caught.value)


COMMANDS = [
    "generate --check --spec {f}",
    "rollout check --prometheus http://127.0.0.1:9 --model m --baseline-version 1 --candidate-version 2 "
    "--spec {f}",
    "lint --slo-file {f} repo",
    "report --prometheus-url http://127.0.0.1:9 --out out --slo-file {f}",
    "doctor --triton-url http://127.0.0.1:9 --spec {f}",
]


@pytest.mark.parametrize("line", COMMANDS, ids=[line.split()[0] for line in COMMANDS])
def test_every_command_that_loads_the_spec_refuses_it_with_the_same_message(
    tmp_path: Path, line: str
) -> None:
    body = "alpha: 5"
    path = tmp_path / "s.yaml"
    path.write_text(_text(body))
    (tmp_path / "repo" / "m" / "1").mkdir(parents=True)
    (tmp_path / "repo" / "m" / "config.pbtxt").write_text('name: "m"\nbackend: "python"\n')
    with pytest.raises(SpecError) as caught:
        parse_spec(path.read_text(), str(path))
    code, _, err = run(line.format(f=path).split(), tmp_path)
    assert_clean_error(code, err, c.EXIT_USAGE, str(caught.value))
