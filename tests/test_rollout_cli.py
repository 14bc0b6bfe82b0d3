"""`rollout check` usage errors: exit 2 with a message naming the problem, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.data import shipped
from triton_sre.stack.processes import free_port


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give exactly one pair"),
        (["--baseline-version", "1", "--candidate-version", "2"], "need --model"),
        (["--baseline-model", "blue"], "go together"),
        (["--baseline-selector", "pod=x", "--candidate-selector", 'pod="y"'], "not a label matcher"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["rollout", "check", "--prometheus", "http://127.0.0.1:9", *args])
    assert code == c.EXIT_USAGE
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["soon", "0", "0s", "-1", "nan", "inf", "1e309", "1e9", "15251w"])
@pytest.mark.parametrize("flag", ["--window", "--step"])
def test_a_bad_duration_is_refused_by_name_at_parsing(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each was `internal error: DurationError` (exit 2, but read as a bug)."""
    argv = ["--prometheus", "http://127.0.0.1:9", "--model", "m", "--baseline-version", "1"]
    with pytest.raises(SystemExit) as exited:
        main(["rollout", "check", *argv, "--candidate-version", "2", f"{flag}={value}"])
    assert exited.value.code == c.EXIT_USAGE
    err = capsys.readouterr().err
    assert f"argument {flag}: " in err and "internal error" not in err


def test_unreachable_prometheus_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    argv = ["rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1"]
    code = main([*argv, "--candidate-version", "2", "--step", "5s", "--timeout", "2"])
    assert code == c.EXIT_USAGE
    assert "cannot reach Prometheus" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pair", "nope"], "--pair 'nope': not a pair of the spec's rollout.pairs (scaler)"),
        (["--pair", "scaler", "--baseline-model", "x"], "give it without --baseline-/--candidate-model"),
        (["--pair", "scaler", "--candidate-version", "2"], "give exactly one pair"),
    ],
)
def test_pair_errors_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "slos.yaml"
    pairs = "rollout:\n  pairs: [{name: scaler, baseline: scaler_blue, candidate: scaler_green}]\n"
    spec.write_text(shipped("slos.yaml").read_text() + pairs)
    code = main(["rollout", "check", "--prometheus", "http://127.0.0.1:9", "--spec", str(spec), *args])
    assert code == c.EXIT_USAGE
    assert message in capsys.readouterr().err
