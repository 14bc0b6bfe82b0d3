"""`rollout check` usage errors: exit 2 with a message naming the problem, never a traceback."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fake_prometheus import serve

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.data import shipped
from triton_sre.rollout.live import alert_sides
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


def _strict(text: str) -> Any:
    """JSON as a strict consumer reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON output")

    return json.loads(text, parse_constant=refuse)


def _same_everywhere(value: str) -> Any:
    """A Prometheus answering every range query with one series holding `value` at every step."""
    return serve(
        lambda query, stamps: {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": [[t, value] for t in stamps]}],
        }
    )


@pytest.mark.parametrize(
    ("value", "rate", "verdict"),
    [
        ("1e308", 1e308, c.EXIT_OK),  # finite, but the sum of two overflowed: medians and means were inf
        ("-5", 0.0, c.EXIT_INCONCLUSIVE),  # no rate, ratio or duration is negative: not a sample
        ("NaN", 0.0, c.EXIT_INCONCLUSIVE),
        ("+Inf", 0.0, c.EXIT_INCONCLUSIVE),
    ],
)
def test_samples_no_figure_can_have_are_left_out_and_the_json_stays_json(
    value: str, rate: float, verdict: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """`1e308` everywhere printed `"baseline": Infinity, "difference": NaN` (not JSON) and `-5` judged
    negative error ratios and latencies as figures."""
    httpd = _same_everywhere(value)
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1"]
        code = main([*argv, "--candidate-version", "2", "--window", "5m", "--format", "json"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    out, err = capsys.readouterr()
    assert code == verdict, err
    body = _strict(out)
    assert body["request_rate"] == {"baseline": rate, "candidate": rate}
    for figure in body["figures"]:
        for key in ("baseline", "candidate", "difference"):
            assert figure[key] is None or (math.isfinite(figure[key]) and figure[key] >= 0), figure
    assert (body["figures"] == []) == (rate == 0.0)


@pytest.mark.parametrize("flag", ["--model", "--baseline-version", "--job"])
def test_a_name_that_is_not_utf8_is_a_usage_error(flag: str, tmp_path: Path) -> None:
    """A byte that is not UTF-8 in a name (`--model $'m\\xff'`) was `internal error: UnicodeEncodeError`."""
    args = {"--model": b"m", "--baseline-version": b"1", "--job": b"triton"}
    args[flag] = args[flag] + b"\xff"
    argv = [sys.executable.encode(), b"-m", b"triton_sre.cli", b"rollout", b"check"]
    argv += [b"--prometheus", f"http://127.0.0.1:{free_port()}".encode(), b"--candidate-version", b"2"]
    for name, value in args.items():
        argv += [name.encode(), value]
    done = subprocess.run(argv, capture_output=True, timeout=60, cwd=tmp_path)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == c.EXIT_USAGE and done.stdout == b"", err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err, err
    assert f"{flag}: not valid UTF-8" in err, err


@pytest.mark.parametrize(
    "pair",
    [
        ["--model", "m", "--baseline-version", "1", "--candidate-version", "1"],
        ["--baseline-model", "scaler_blue", "--candidate-model", "scaler_blue"],
        ["--baseline-selector", 'pod=~"a-.*", app="t"', "--candidate-selector", '{app="t",pod=~"a-.*"}'],
    ],
    ids=["version", "model", "selector"],
)
def test_a_candidate_that_is_its_baseline_is_a_usage_error(
    pair: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Comparing a series with itself could only pass (or wait for traffic): a pipeline that named the
    same version twice was told to promote it."""
    code = main(["rollout", "check", "--prometheus", f"http://127.0.0.1:{free_port()}", *pair])
    err = capsys.readouterr().err
    assert code == c.EXIT_USAGE
    assert "the same series" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("skew_s", [-3600.0, 3600.0])
def test_the_window_ends_at_prometheus_now_whatever_the_local_clock(
    skew_s: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """The window ended at this machine's clock: one an hour ahead of Prometheus asked for samples
    Prometheus does not have yet (inconclusive, exit 3, on a busy canary); one an hour behind judged
    the traffic of an hour ago."""
    prom_now = time.time() + skew_s

    def answer(query: str, stamps: list[float]) -> Any:
        values = [[t, "1"] for t in stamps if t <= prom_now and t > prom_now - 600]
        return {"resultType": "matrix", "result": [{"metric": {}, "values": values}] if values else []}

    httpd = serve(answer, instant=[{"metric": {}, "value": [prom_now, f"{prom_now:.3f}"]}])
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["rollout", "check", "--prometheus", url, "--model", "m", "--baseline-version", "1"]
        code = main(
            [*argv, "--candidate-version", "2", "--window", "5m", "--step", "10s", "--format", "json"]
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    out, err = capsys.readouterr()
    assert code == c.EXIT_OK, (out, err)
    assert json.loads(out)["request_rate"] == {"baseline": 1.0, "candidate": 1.0}


@pytest.mark.parametrize("answer_time", [-5.0, 0.0, 1e300])
def test_a_prometheus_time_no_clock_reads_is_an_error_naming_it(
    answer_time: float, capsys: pytest.CaptureFixture[str]
) -> None:
    """A proxy's or stand-in's `time()` of -5 or 1e300 asked for a window of another era (exit 3 or a
    verdict on nothing); now the check stops with exit 2 and the value it was given."""
    httpd = serve(
        lambda _q, _s: {"resultType": "matrix", "result": []},
        instant=[{"metric": {}, "value": [0, repr(answer_time)]}],
    )
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        code = main(
            [
                "rollout",
                "check",
                "--prometheus",
                url,
                "--model",
                "m",
                "--baseline-version",
                "1",
                "--candidate-version",
                "2",
                "--window",
                "5m",
            ]
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    _, err = capsys.readouterr()
    assert code == c.EXIT_USAGE, err
    assert "not a clock's reading" in err and repr(answer_time) in err


def test_cluster_compares_one_cluster_of_a_global_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a global store (every cluster remote-writing) the baseline of a canary in one cluster summed
    every cluster's baseline: the fleet journey read ranker v1 at 317 requests/s on the global
    Prometheus, 120 in the canary's cluster. --cluster selects the spec's cluster_label."""
    spec = tmp_path / "slos.yaml"
    spec.write_text("cluster_label: region\n" + shipped("slos.yaml").read_text())
    seen: list[str] = []
    now = time.time()

    def answer(query: str, stamps: list[float]) -> Any:
        rate = "1" if 'region="east"' in query else "10"  # east alone, or every region summed
        return {"resultType": "matrix", "result": [{"metric": {}, "values": [[t, rate] for t in stamps]}]}

    httpd = serve(answer, instant=[{"metric": {}, "value": [now, f"{now:.3f}"]}], seen=seen)
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        argv = ["rollout", "check", "--prometheus", url, "--spec", str(spec), "--model", "m"]
        argv += ["--baseline-version", "1", "--candidate-version", "2", "--cluster", "east"]
        code = main([*argv, "--window", "5m", "--step", "10s", "--format", "json"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    out, err = capsys.readouterr()
    assert code == c.EXIT_OK, (out, err)
    body = json.loads(out)
    assert body["request_rate"] == {"baseline": 1.0, "candidate": 1.0}
    assert body["baseline"].endswith("in east") and body["candidate"].endswith("in east"), body
    # the exporter's gauges (its job alone) are joined `on (model, region)` with the served series of east
    exporter = f'{c.LABEL_JOB}="{c.DEFAULT_EXPORTER_JOB}"'
    selectors = [s for q in seen for s in re.findall(r"\{[^}]*\}", q) if exporter not in s]
    assert selectors and all('region="east"' in s for s in selectors), selectors


def test_a_rollout_alert_of_one_cluster_is_judged_in_that_cluster() -> None:
    """The bot's lines for a TritonRolloutRegression alert on a global store judged the canary of one
    cluster against every cluster's baseline (journeyfleet): the alert's cluster label narrows both sides."""
    labels = {c.LABEL_JOB: "triton", c.LABEL_MODEL: "m", c.LABEL_BASELINE: "1", c.LABEL_VERSION: "2"}
    plain = alert_sides(labels, "triton", "region")
    assert plain is not None and all(("region", "=", "east") not in s.matchers for s in plain)
    narrowed = alert_sides({**labels, "region": "east"}, "triton", "region")
    assert narrowed is not None
    assert all(("region", "=", "east") in s.matchers and s.label.endswith("in east") for s in narrowed)
    assert [s.matchers[:-1] for s in narrowed] == [s.matchers for s in plain]
