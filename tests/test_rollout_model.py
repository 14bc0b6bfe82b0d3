"""The rollout comparison model: the rank test, the margins, the verdict, the selectors, the spec."""

from __future__ import annotations

import math
import subprocess
import time
from pathlib import Path

import pytest
from binaries import binary

from triton_sre import conventions as c
from triton_sre.data import shipped
from triton_sre.generate.rollout import ROLLOUT_FILE, rollout_groups
from triton_sre.generate.rulefile import render_yaml
from triton_sre.generate.tests_rollout import test_files as rollout_test_files
from triton_sre.rollout.live import collect
from triton_sre.rollout.model import (
    BATCHER_SAID,
    BATCHING_AFTER_FAILURES,
    BATCHING_AT_LOWER_LOAD,
    NO_BATCHER,
    NO_DATA,
    judge,
)
from triton_sre.rollout.sides import (
    TRAFFIC,
    Side,
    parse_selector,
    side_queries,
    summary_figures,
    version_sides,
)
from triton_sre.rollout.stats import mann_whitney_greater, median
from triton_sre.slo import SpecError, default_spec, parse_spec


def test_mann_whitney_matches_the_normal_approximation_by_hand() -> None:
    # U = 9 of 9, mean 4.5, variance 3*3/12*7 = 5.25, z = (9 - 4.5 - 0.5) / sqrt(5.25)
    test = mann_whitney_greater([1, 2, 3], [4, 5, 6])
    assert test.u == 9
    assert test.p_value == pytest.approx(0.5 * math.erfc(4 / math.sqrt(5.25) / math.sqrt(2)))
    assert test.p_value == pytest.approx(0.0404, abs=1e-4)
    # reversed: no evidence the candidate is greater
    assert mann_whitney_greater([4, 5, 6], [1, 2, 3]).p_value > 0.9


def test_ties_reduce_the_variance_and_all_tied_is_no_evidence() -> None:
    assert mann_whitney_greater([1, 1, 1], [1, 1, 1]).p_value == 1.0
    # average ranks: [1,1,2] vs [2,3,3] -> ranks 1.5,1.5,3.5 | 3.5,5.5,5.5; U2 = 14.5 - 6 = 8.5
    tied = mann_whitney_greater([1, 1, 2], [2, 3, 3])
    assert tied.u == 8.5
    variance = 9 / 12 * (7 - (6 + 6 + 6) / 30)
    assert tied.z == pytest.approx((8.5 - 4.5 - 0.5) / math.sqrt(variance))
    assert median([3, 1, 2, 4]) == 2.5


def _sides() -> tuple[Side, Side]:
    return version_sides("triton", "m", "1", "2")


Samples = dict[str, tuple[list[float], list[float]]]


def _samples(base: list[float], cand: list[float], rate: float = 5.0) -> Samples:
    n = len(base)
    return {TRAFFIC: ([rate] * n, [rate] * n), c.ROLLOUT_FIG_LATENCY_P99: (base, cand)}


def test_verdicts_fail_pass_and_inconclusive() -> None:
    rs = default_spec().rollout
    base = [0.010 + 0.001 * (i % 3) for i in range(12)]
    slow = judge(*_sides(), _samples(base, [v * 4 for v in base]), rs)
    assert slow.verdict == c.ROLLOUT_FAIL and slow.figures[0].p_value < 0.001
    # significantly but slightly worse (5 %, inside the 20 % margin): noise is not a regression
    slight = judge(*_sides(), _samples(base, [v * 1.05 + 0.0005 for v in base]), rs)
    assert slight.verdict == c.ROLLOUT_PASS and slight.figures[0].p_value < 0.05
    # far worse on a median but too few samples to tell: the figure has no data, traffic decides
    quiet = judge(*_sides(), _samples(base, [v * 4 for v in base], rate=0.01), rs)
    assert quiet.verdict == c.ROLLOUT_INCONCLUSIVE and "m v1 and m v2" in quiet.reason
    assert "no request at all" not in quiet.reason
    # a candidate version nobody serves (`--candidate-version 3` for 2, journey23): inconclusive, as
    # before, but the reason says it had no request at all rather than only "too little traffic"
    absent = judge(*_sides(), {TRAFFIC: ([5.0] * 12, []), c.ROLLOUT_FIG_LATENCY_P99: (base, [])}, rs)
    assert absent.verdict == c.ROLLOUT_INCONCLUSIVE
    assert absent.reason.startswith("too little traffic on m v2 ")
    assert "no request at all on m v2 in the window: is it served" in absent.reason


def test_batching_ratio_is_worse_when_lower() -> None:
    rs = default_spec().rollout
    base = [8.0, 8.1, 7.9, 8.0, 8.2, 7.8, 8.0]
    samples = {TRAFFIC: ([5.0] * 7, [5.0] * 7), c.ROLLOUT_FIG_BATCHING_RATIO: (base, [v / 4 for v in base])}
    assert judge(*_sides(), samples, rs).verdict == c.ROLLOUT_FAIL
    samples[c.ROLLOUT_FIG_BATCHING_RATIO] = (base, [v * 2 for v in base])
    assert judge(*_sides(), samples, rs).verdict == c.ROLLOUT_PASS


def test_selector_parsing_and_queries() -> None:
    assert parse_selector('{pod=~"triton-canary-.*", app!="x\\"y"}') == (
        ("pod", "=~", "triton-canary-.*"),
        ("app", "!=", 'x"y'),
    )
    with pytest.raises(ValueError, match="not a label matcher"):
        parse_selector("pod=triton")
    queries = side_queries(
        _sides()[1], "30s", (c.LATENCY_SOURCE_SUMMARY,), exporter_job=c.DEFAULT_EXPORTER_JOB
    )
    assert 'version="2"' in queries[c.ROLLOUT_FIG_ERROR_RATIO] and "[30s]" in queries[TRAFFIC]
    assert c.NV_REQUEST_SUMMARY_US in queries[c.ROLLOUT_FIG_LATENCY_P99]
    assert c.ROLLOUT_FIG_LATENCY_P99 not in side_queries(
        _sides()[1], "30s", (), exporter_job=c.DEFAULT_EXPORTER_JOB
    )


def test_spec_defaults_come_from_the_slos_and_errors_name_the_field() -> None:
    rs = default_spec().rollout
    assert rs.margins[c.ROLLOUT_FIG_ERROR_RATIO] == pytest.approx(0.001)  # 99.9 % availability
    assert rs.min_request_rate == 0.1 and rs.window == "15m"
    pair = "{name: scaler, baseline: scaler_blue, candidate: scaler_green}"
    text = default_spec_text() + f"\nrollout:\n  pairs: [{pair}]\n"
    assert parse_spec(text).rollout.pairs[0].candidate == "scaler_green"
    bad = default_spec_text() + "\nrollout:\n  margins: {p99: 0.1}\n"
    with pytest.raises(SpecError, match=r"rollout\.margins: unknown figure"):
        parse_spec(bad)  # refused where the spec loads


def default_spec_text() -> str:
    return shipped("slos.yaml").read_text()


def test_a_declared_blue_green_pair_fires_in_promtool(tmp_path: Path) -> None:
    """The generated rules and tests for a spec declaring a pair, run by the real promtool."""
    pair = "{name: scaler, baseline: scaler_blue, candidate: scaler_green}"
    spec = parse_spec(default_spec_text() + f"\nrollout:\n  window: 10m\n  pairs: [{pair}]\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / ROLLOUT_FILE).write_text(render_yaml(rollout_groups(spec, "runbooks/"), "slos.yaml"))
    tests = rollout_test_files(spec, "runbooks/")
    for name, doc in tests.items():
        assert any("blue/green" in t["name"] for t in doc["tests"])
        (tmp_path / "tests" / name).write_text(render_yaml(doc, "slos.yaml"))
    done = subprocess.run(
        [binary("promtool"), "test", "rules", *tests], cwd=tmp_path / "tests", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout + done.stderr


@pytest.mark.parametrize("floor", ["", "    min_request_rate: 0.01\n", "    min_request_rate: 5\n"])
def test_the_generated_guard_tests_follow_the_spec_traffic_floor(tmp_path: Path, floor: str) -> None:
    """The availability SLO's `min_request_rate` (0 unless set) is the guard's floor: its generated
    tests send half of it as "too little traffic", and with 0 a trickle that fires."""
    spec = parse_spec(f"slos:\n  - name: a\n    type: availability\n    objective: 99.9\n{floor}")
    (tmp_path / "tests").mkdir()
    (tmp_path / ROLLOUT_FILE).write_text(render_yaml(rollout_groups(spec, "runbooks/"), "slos.yaml"))
    tests = rollout_test_files(spec, "runbooks/")
    for name, doc in tests.items():
        names = [t["name"] for t in doc["tests"]]
        assert any(("trickle" if not floor else "too little traffic") in n for n in names), names
        (tmp_path / "tests" / name).write_text(render_yaml(doc, "slos.yaml"))
    done = subprocess.run(
        [binary("promtool"), "test", "rules", *tests], cwd=tmp_path / "tests", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


class _RecordingProm:
    """Answers every range query with one flat series and records (query, start, end, step)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, float, float, float]] = []

    def now(self) -> float:
        return time.time()

    def query_range(self, query: str, start: float, end: float, step: float) -> list[dict[str, object]]:
        self.calls.append((query, start, end, step))
        n = int((end - start) // step) + 1
        return [{"values": [[start + i * step, "0.01"] for i in range(n)]}]


@pytest.mark.parametrize(("window", "summary_reads"), [(900.0, 15), (40.0, 1)])
def test_summary_quantiles_are_sampled_once_per_summary_window(window: float, summary_reads: int) -> None:
    """Triton's summary quantiles cover the last 60 s (prometheus-cpp's default max_age, which core
    keeps): reads 4 s apart would repeat the same slow requests and make the rank test's p-value
    far too small. They are read once per window; counter figures keep the requested step."""
    prom = _RecordingProm()
    latency = (c.LATENCY_SOURCE_SUMMARY,)
    samples = collect(prom, _sides(), window, 4.0, latency, exporter_job=c.DEFAULT_EXPORTER_JOB)  # type: ignore[arg-type]
    summary = summary_figures(latency)
    assert summary == {c.ROLLOUT_FIG_LATENCY_P99, c.ROLLOUT_FIG_LATENCY_P50}
    assert summary_figures((c.LATENCY_SOURCE_HISTOGRAM, c.LATENCY_SOURCE_SUMMARY)) == set()
    for query, start, end, step in prom.calls:
        from_summary = c.NV_REQUEST_SUMMARY_US in query
        assert step == (max(4.0, c.TRITON_SUMMARY_MAX_AGE_S) if from_summary else 4.0), query
        assert start <= end and end - start < window
    for name in summary:
        assert [len(side) for side in samples[name]] == [summary_reads, summary_reads]
    assert len(samples[c.ROLLOUT_FIG_COMPUTE_PER_INFERENCE][0]) == window // 4
    # 40 s of summary reads are one independent sample: the figure cannot decide a verdict
    if summary_reads < default_spec().rollout.min_samples:
        result = judge(*_sides(), samples, default_spec().rollout)
        p99 = next(f for f in result.figures if f.figure.name == c.ROLLOUT_FIG_LATENCY_P99)
        assert p99.verdict == NO_DATA and p99.candidate == 0.01


def test_a_batching_ratio_lowered_by_failures_says_so_beside_the_error_ratio() -> None:
    """journey23: the failing candidate's batching ratio was 0.657 (below 1) because Triton counts its
    failed batches as executions but their requests not as inferences; the reason said
    `error-ratio, ..., batching-ratio`, the error regression twice. The batching ratio is still
    reported, with why it dropped; alone (no failures) it reads as before."""
    rs = default_spec().rollout
    n = 8
    traffic = ([5.0] * n, [5.0] * n)
    errors = ([0.0] * n, [0.5 + 0.01 * (i % 3) for i in range(n)])
    batching = ([4.0 + 0.1 * (i % 3) for i in range(n)], [0.65 + 0.01 * (i % 3) for i in range(n)])
    both = judge(
        *_sides(),
        {TRAFFIC: traffic, c.ROLLOUT_FIG_ERROR_RATIO: errors, c.ROLLOUT_FIG_BATCHING_RATIO: batching},
        rs,
    )
    assert both.verdict == c.ROLLOUT_FAIL
    assert both.reason == (
        f"candidate worse beyond the margin: {c.ROLLOUT_FIG_ERROR_RATIO}, "
        f"{c.ROLLOUT_FIG_BATCHING_RATIO} ({BATCHING_AFTER_FAILURES})"
    )
    alone = judge(*_sides(), {TRAFFIC: traffic, c.ROLLOUT_FIG_BATCHING_RATIO: batching}, rs)
    assert alone.reason == f"candidate worse beyond the margin: {c.ROLLOUT_FIG_BATCHING_RATIO}"


def test_a_candidate_failing_every_request_fails_on_its_errors_with_or_without_a_batching_ratio() -> None:
    """version32: a candidate whose every request fails has no successful inference, so the exporter and
    the recording rules give it no batching ratio; the rollout's own figure reads 0 there. Either way the
    verdict is a failure on the error ratio: never a pass, never inconclusive for want of the ratio."""
    rs = default_spec().rollout
    n = 8
    traffic = ([5.0] * n, [5.0] * n)
    errors = ([0.0] * n, [1.0] * n)
    base_batching = [4.0 + 0.1 * (i % 3) for i in range(n)]
    for cand_batching in ([0.0] * n, []):
        samples = {
            TRAFFIC: traffic,
            c.ROLLOUT_FIG_ERROR_RATIO: errors,
            c.ROLLOUT_FIG_BATCHING_RATIO: (base_batching, cand_batching),
        }
        verdict = judge(*_sides(), samples, rs)
        assert verdict.verdict == c.ROLLOUT_FAIL, cand_batching
        assert verdict.reason.startswith(f"candidate worse beyond the margin: {c.ROLLOUT_FIG_ERROR_RATIO}")


def _batching_samples(
    ratios: tuple[float, float], rates: tuple[float, float]
) -> dict[str, tuple[list[float], list[float]]]:
    """Eight intervals a side: each side's batching ratio near `ratios` (a little noise), requests/s."""
    n = 8
    base, cand = ([ratio + 0.01 * (i % 3) for i in range(n)] for ratio in ratios)
    return {TRAFFIC: ([rates[0]] * n, [rates[1]] * n), c.ROLLOUT_FIG_BATCHING_RATIO: (base, cand)}


def test_the_batching_ratio_not_judged_says_a_dynamic_batcher_only_when_one_runs() -> None:
    """journey28: the reason said a dynamic batcher makes smaller batches at lower load of a model that
    had none. Unknown (no exporter) it says `if the model has one`; the exporter's fact says which."""
    rs, samples = default_spec().rollout, _batching_samples((1.6, 1.2), (10.0, 2.0))
    for batcher in (None, True):
        verdict = judge(*_sides(), samples, rs, batcher)
        assert verdict.verdict == c.ROLLOUT_PASS, verdict.reason
        said = f"{BATCHER_SAID[batcher]} (it is judged from 80% of the baseline's traffic)"
        assert verdict.reason.endswith(said), verdict.reason
    assert BATCHER_SAID[None] not in judge(*_sides(), samples, rs, True).reason
    none = judge(*_sides(), samples, rs, False).reason
    assert none.endswith(f"not judged: {NO_BATCHER}") and "dynamic batcher makes" not in none, none


def test_the_batching_ratio_of_models_without_a_dynamic_batcher_is_judged_at_no_load() -> None:
    """rollout31: without a dynamic batcher each execution is a request as its client batched it; the
    ratio is the clients' batch size, which no version changes. At comparable traffic a candidate whose
    clients sent half the rows a request failed on it; the exporter saying no batcher runs, it is not
    judged (its figures stay measured). Unknown, or a batcher running, it is judged as before."""
    rs, samples = default_spec().rollout, _batching_samples((4.0, 2.0), (10.0, 10.0))
    for batcher in (None, True):
        judged = judge(*_sides(), samples, rs, batcher)
        assert judged.verdict == c.ROLLOUT_FAIL, judged.reason
    verdict = judge(*_sides(), samples, rs, False)
    assert verdict.verdict == c.ROLLOUT_PASS, verdict.reason
    (figure,) = verdict.figures
    assert figure.verdict == BATCHING_AT_LOWER_LOAD and (figure.baseline, figure.candidate) == (4.01, 2.01)
    unjudged = f"{c.ROLLOUT_FIG_BATCHING_RATIO} not judged: {NO_BATCHER}"
    assert verdict.reason == f"no figure worse beyond its margin; {unjudged}", verdict.reason


def test_every_rollout_function_taking_the_exporter_job_requires_it() -> None:
    """tidy34: `collect`, `verdict_now`, the bot's verdicts and the instant reads of the exporter's
    gauges defaulted `exporter_job` to the default job while every production caller passed the
    spec's: a new caller leaving it out would read another job's marks unawares. Each function of
    rollout/ taking it takes it as a keyword without a default."""
    import importlib
    import inspect
    import pkgutil

    import triton_sre.rollout as rollout

    taking = []
    for info in pkgutil.iter_modules(rollout.__path__):
        module = importlib.import_module(f"{rollout.__name__}.{info.name}")
        for name, function in inspect.getmembers(module, inspect.isfunction):
            parameter = inspect.signature(function).parameters.get("exporter_job")
            if function.__module__ != module.__name__ or parameter is None:
                continue
            taking.append(name)
            assert parameter.kind is parameter.KEYWORD_ONLY, f"{info.name}.{name}"
            assert parameter.default is parameter.empty, f"{info.name}.{name} defaults it"
    expected = {"collect", "verdict_now", "model_verdicts", "pair_verdicts", "judged_until_budget"}
    assert expected | {"ensembles", "dynamic_batcher", "rate_figures", "side_queries"} <= set(taking)
