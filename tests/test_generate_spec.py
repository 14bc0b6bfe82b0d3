"""The SLO spec: validation errors name file, SLO and field; invalid input exits 2 and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from triton_sre import conventions as c
from triton_sre.cli import main
from triton_sre.durations import DurationError, format_duration, parse_duration, whole_ms
from triton_sre.generate.families import rule_files
from triton_sre.generate.rulefile import all_rules, model_matchers
from triton_sre.generate.slo_rules import tiers
from triton_sre.promql import selector
from triton_sre.slo import SpecError, parse_spec

REPO = Path(__file__).resolve().parents[1]

VALID = {
    "slos": [
        {"name": "avail", "type": "availability", "objective": 99.9},
        {"name": "lat", "type": "latency", "objective": 99, "threshold": "250ms"},
    ]
}


def _with(path: tuple[object, ...], value: object, *, delete: bool = False) -> dict:
    doc = yaml.safe_load(yaml.safe_dump(VALID))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


INVALID = [
    # (mutation, words the message must contain)
    (("slos", 0, "objective"), None, True, ["slos[0] (avail)", "objective", "required"]),
    (("slos", 1, "threshold"), None, True, ["slos[1] (lat)", "threshold", "required"]),
    (("slos", 0, "type"), None, True, ["slos[0] (avail)", "type"]),
    (("slos", 0, "name"), None, True, ["slos[0]", "name"]),
    (("slos", 0, "objective"), 100, False, ["slos[0] (avail)", "objective", "less than 100"]),
    (("slos", 0, "objective"), 100.5, False, ["objective", "less than 100"]),
    (("slos", 0, "objective"), 0, False, ["objective", "greater than 0"]),
    (("slos", 0, "objective"), -1, False, ["objective"]),
    (("slos", 0, "objective"), "99.9%", False, ["objective", "percentage"]),
    (("slos", 0, "objectve"), 99, False, ["slos[0] (avail)", "unknown key 'objectve'"]),
    (("slos", 0, "threshold"), "1s", False, ["slos[0] (avail)", "unknown key 'threshold'"]),
    (("extra",), 1, False, ["unknown key 'extra'"]),
    (("slos", 0, "period"), "30 days", False, ["slos[0] (avail)", "period", "duration"]),
    (("slos", 0, "period"), "1d", False, ["period", "at least 3d"]),
    (("slos", 1, "threshold"), "fast", False, ["slos[1] (lat)", "threshold", "duration"]),
    (("slos", 1, "threshold"), "1500us", False, ["threshold"]),
    (("slos", 1, "time_slice"), "5s", False, ["time_slice"]),
    (("slos", 1, "latency_sli"), "p99", False, ["latency_sli"]),
    (("slos", 0, "models"), {"regex": "llm-(["}, False, ["slos[0] (avail)", "models.regex", "invalid"]),
    (("slos", 0, "models"), {"regex": "(?!bad).*"}, False, ["models.regex", "RE2"]),
    (("slos", 0, "models"), {"regexp": "x"}, False, ["models", "unknown key 'regexp'"]),
    (("slos", 0, "models"), [], False, ["models"]),
    (("slos", 0, "models"), 7, False, ["models"]),
    (("slos", 0, "bad_reasons"), ["backend"], False, ["bad_reasons", "unknown failure reason 'backend'"]),
    (("slos", 0, "min_request_rate"), -1, False, ["min_request_rate"]),
    # beyond what Prometheus parses or the generated tests can hold: refused with the range
    (("slos", 0, "min_request_rate"), 1e53, False, ["slos[0] (avail)", "min_request_rate", "at most 1000000000"]),  # noqa: E501
    (("operational",), {"min_request_rate": 1e10}, False, ["operational.min_request_rate", "at most 1000000000"]),  # noqa: E501
    (("rollout",), {"min_request_rate": 1e10}, False, ["rollout.min_request_rate", "at most 1000000000"]),
    (("rollout",), {"alpha": float("nan")}, False, ["rollout.alpha", "nan"]),
    (("slos", 1, "threshold"), "99999999999999999999999ms", False, ["slos[1] (lat)", "threshold", "365d"]),
    (("slos", 0, "period"), "366d", False, ["slos[0] (avail)", "period", "at most 365d"]),
    (("operational",), {"startup_probe_budget": "2d"}, False, ["operational.startup_probe_budget", "1d"]),
    (("slos", 1, "name"), "avail", False, ["slos[1] (avail)", "duplicate"]),
    (("slos", 1, "name"), "has space", False, ["slos[1]", "name"]),
    (("scrape",), {"triton_job": ""}, False, ["scrape.triton_job"]),
    (("scrape",), {"triton_container": "a\nb"}, False, ["scrape.triton_container"]),
    (("operational",), {"gpu_memory_ratio": 2}, False, ["operational.gpu_memory_ratio"]),
    (("slos",), [], False, ["slos"]),
    (("slos", 1, "quantile"), 0.98, False, ["slos[1] (lat)", "quantile", "0.999"]),
    (("slos", 1, "quantile"), "p99", False, ["quantile"]),
    (("slos", 0, "quantile"), 0.99, False, ["slos[0] (avail)", "unknown key 'quantile'"]),
    (("scrape",), {"latency_metrics": ["summaries"]}, False, ["scrape.latency_metrics", "summary"]),
    (("scrape",), {"latency_metrics": "summary"}, False, ["scrape.latency_metrics"]),
]


@pytest.mark.parametrize(("path", "value", "delete", "words"), INVALID)
def test_invalid_spec_names_file_slo_and_field(path, value, delete, words, tmp_path: Path, capsys) -> None:
    spec = tmp_path / "myslos.yaml"
    spec.write_text(yaml.safe_dump(_with(path, value, delete=delete)))
    out = tmp_path / "out"
    assert main(["generate", "--spec", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "myslos.yaml" in err
    for word in words:
        assert word in err, (word, err)
    assert not out.exists(), "an invalid spec must not write anything"


def test_unparseable_and_missing_files_exit_2(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("slos: [\n")
    assert main(["generate", "--spec", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.yaml" in capsys.readouterr().err
    assert main(["generate", "--spec", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "o")]) == 2
    assert "nope.yaml" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_valid_minimal_spec_gets_defaults() -> None:
    spec = parse_spec(yaml.safe_dump(VALID))
    avail, lat = spec.slos
    assert avail.period == "30d" and avail.bad_reasons is None and avail.models.kind == "all"
    assert lat.threshold_s == 0.25 and lat.latency_sli == c.LATENCY_SLI_AUTO and lat.time_slice == "1m"
    assert str(avail.budget) == "0.001"
    assert spec.triton_job == c.DEFAULT_TRITON_JOB and spec.exporter_job == c.DEFAULT_EXPORTER_JOB
    assert lat.quantile == c.DEFAULT_SLO_QUANTILE and spec.latency_metrics == (c.LATENCY_SOURCE_SUMMARY,)


def _slice_rule(spec) -> dict:
    files = rule_files(spec)
    return next(r for r in all_rules(files) if r.get("record") == c.REC_SLO_SLICE_BAD)


def test_the_time_slice_sli_judges_the_quantile_and_says_when_it_only_has_averages(
    tmp_path: Path, capsys
) -> None:
    doc = _with(("slos", 1, "quantile"), 0.95)
    rule = _slice_rule(parse_spec(yaml.safe_dump(doc)))
    assert f'{c.NV_REQUEST_SUMMARY_US}{{job="triton", quantile="0.95"}}' in rule["expr"]
    assert f'"{c.L_LATENCY_SOURCE}", "{c.LATENCY_SOURCE_AVERAGE}"' in rule["expr"]  # the fallback
    assert c.L_LATENCY_SOURCE not in rule["labels"]
    both = parse_spec(yaml.safe_dump({**doc, "scrape": {"latency_metrics": ["histogram", "summary"]}}))
    assert "histogram_quantile(0.95, " in _slice_rule(both)["expr"]
    # neither: a warning on stderr, and the rule says its SLI is average-based
    doc["scrape"] = {"latency_metrics": []}
    averages = parse_spec(yaml.safe_dump(doc))
    rule = _slice_rule(averages)
    assert rule["labels"][c.L_LATENCY_SOURCE] == c.LATENCY_SOURCE_AVERAGE
    assert c.NV_REQUEST_SUMMARY_US not in rule["expr"] and "histogram_quantile" not in rule["expr"]
    spec_file = tmp_path / "slos.yaml"
    spec_file.write_text(yaml.safe_dump(doc))
    assert main(["generate", "--spec", str(spec_file), "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "SLO lat" in err and "summary_latencies=true" in err
    assert main(["generate", "--spec", str(REPO / "slos.yaml"), "--out", str(tmp_path / "o2")]) == 0
    assert "warning" not in capsys.readouterr().err


def test_burn_factors_follow_the_workbook_and_scale_with_the_period() -> None:
    slo30 = parse_spec(yaml.safe_dump(VALID)).slos[0]
    assert [(t[0], t[1], round(t[4], 6), t[3]) for t in tiers(slo30)] == [
        ("1h", "5m", 14.4, c.SEVERITY_PAGE),
        ("6h", "30m", 6.0, c.SEVERITY_PAGE),
        ("1d", "2h", 3.0, c.SEVERITY_TICKET),
        ("3d", "6h", 1.0, c.SEVERITY_TICKET),
    ]
    doc = _with(("slos", 0, "period"), "28d")
    slo28 = parse_spec(yaml.safe_dump(doc)).slos[0]
    assert [round(t[4], 4) for t in tiers(slo28)] == [13.44, 5.6, 2.8, 0.9333]


def test_durations() -> None:
    assert parse_duration("1h30m", "x") == 5400
    assert parse_duration("500ms", "x") == 0.5
    assert format_duration(5400) == "90m"
    assert format_duration(2592000) == "30d"
    with pytest.raises(DurationError):
        parse_duration("0s", "x")


@pytest.mark.parametrize("threshold", ["9ms", "13ms", "1001ms", "4342ms", "1s9ms", "59999ms"])
def test_every_whole_millisecond_threshold_is_accepted(threshold: str) -> None:
    """ms were summed as n x 0.001 (9ms gave 0.009000000000000001 s) and the whole-millisecond check
    compared floats exactly: about one threshold in eight of 1-20000 ms was refused."""
    assert parse_duration(threshold, "x") == whole_ms(parse_duration(threshold, "x")) / 1000
    slo = parse_spec(yaml.safe_dump(_with(("slos", 1, "threshold"), threshold))).slos[1]
    assert round(slo.threshold_s * 1e6) == whole_ms(slo.threshold_s) * 1000
    assert format_duration(slo.threshold_s) == format_duration(parse_duration(threshold, "x"))
    assert whole_ms(parse_duration(threshold, "x") + 0.0005) is None  # half a millisecond more


def test_model_selectors_become_matchers() -> None:
    doc = _with(("slos", 0, "models"), ["resnet50", "bert.large"])
    slo = parse_spec(yaml.safe_dump(doc)).slos[0]
    assert model_matchers(slo) == [("model", "=~", "resnet50|bert\\.large")]
    assert 'model=~"resnet50|bert\\\\.large"' in selector("x", model_matchers(slo))
    doc = _with(("slos", 0, "models"), {"regex": "llm-.*"})
    assert model_matchers(parse_spec(yaml.safe_dump(doc)).slos[0]) == [("model", "=~", "llm-.*")]


def test_llm_slo_types_need_a_bucket_bound_threshold() -> None:
    spec = parse_spec(
        "slos:\n"
        "  - {name: t, type: ttft, objective: 99, threshold: 250ms}\n"
        "  - {name: p, type: time_per_output_token, objective: 99.5, threshold: 75ms, models: [llm]}\n"
    )
    assert [(s.type, s.threshold_s) for s in spec.slos] == [(c.SLO_TTFT, 0.25), (c.SLO_TPOT, 0.075)]
    for bad, message in (
        ("{name: t, type: ttft, objective: 99, threshold: 30ms}", "not a bucket bound of vllm:time_to_first"),
        ("{name: t, type: time_per_output_token, objective: 99, threshold: 5ms}", "10ms, 25ms, 50ms"),
        ("{name: t, type: ttft, objective: 99}", "threshold: required"),
        ("{name: t, type: ttft, objective: 99, threshold: 1s, time_slice: 1m}", "unknown key 'time_slice'"),
        ("{name: t, type: tokens, objective: 99}", "ttft, time_per_output_token"),
    ):
        with pytest.raises(SpecError, match=message):
            parse_spec(f"slos:\n  - {bad}\n")


DROPPING = """
slos:
  - name: odd-names
    type: latency
    models: {regex: "[a-z]{3}-model"}
    objective: 99
    threshold: 500ms
  - name: loose
    type: availability
    objective: 90
  - name: sliced
    type: latency
    objective: 99
    threshold: 500ms
    latency_sli: time_slice
  - name: fine
    type: availability
    objective: 99.9
"""


def test_generate_warns_once_per_slo_whose_test_scenarios_it_leaves_out(tmp_path: Path, capsys) -> None:
    spec_file = tmp_path / "dropping.yaml"
    spec_file.write_text(DROPPING)
    out = tmp_path / "out"
    assert main(["generate", "--spec", str(spec_file), "--out", str(out)]) == 0
    warnings = [ln for ln in capsys.readouterr().err.splitlines() if "promtool scenarios left out" in ln]
    assert [ln.split(": SLO ")[1].split(":")[0] for ln in warnings] == ["odd-names", "loose", "sliced"]
    assert all(ln.startswith("triton-sre generate: warning: ") and "dropping.yaml" in ln for ln in warnings)
    odd, loose, sliced = warnings
    assert "/[a-z]{3}-model/" in odd and "queue-time test" in odd
    assert "1h/5m tier (at 14.4x a 10% budget it can never fire)" in loose and "6h/30m" not in loose
    assert "latency_sli: time_slice" in sliced
    # what the warnings say is what the test files lack
    names = [
        g["name"]
        for f in (out / "alerts" / "tests").glob("triton-slo-rules*.test.yaml")
        for g in yaml.safe_load(f.read_text())["tests"]
    ]
    assert not [n for n in names if n.startswith("odd-names:")]
    assert not [n for n in names if n.startswith("loose:") and "1h/5m" in n]
    assert [n for n in names if n.startswith("loose:") and "6h/30m" in n and "above" in n]
    assert not [n for n in names if n.startswith("sliced:") and "tier" in n]
    assert [n for n in names if n.startswith("sliced:") and "total outage" in n]
    assert [n for n in names if n.startswith("fine:") and "1h/5m" in n and "above" in n]
