"""triton_sre.triton.exposition: differential tests against prometheus_client's parser, fuzzing,
truncation and garbage handling, plus the synthetic Triton payload generator."""

from __future__ import annotations

import contextlib
import gc
import math
import pickle
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families
from synthetic import FAILURE_REASONS, QUANTILES, triton_metrics_payload

from triton_sre import conventions as c
from triton_sre.triton import exposition
from triton_sre.triton.exposition import ExpositionError, Sample, iter_parse, parse, parse_bytes

REAL_PAYLOAD = Path(__file__).parent / "data" / "triton_2.51_metrics_cpu.txt"
PER_MODEL = frozenset(c.PER_MODEL_COUNTERS) | frozenset(c.PER_MODEL_GAUGES)

Key = tuple[str, tuple[tuple[str, str], ...], Any]


# ---------------------------------------------------------------------------
# Helpers.
# ---------------------------------------------------------------------------
def _value_key(value: float) -> Any:
    return "NaN" if math.isnan(value) else float(value)  # NaN != NaN; -0.0 == 0.0 is fine


def keys(samples: list[Sample]) -> list[Key]:
    return [(s.name, s.labels, _value_key(s.value)) for s in samples]


# prometheus_client takes the second whitespace-separated token of any `#` line as the keyword,
# so `#x TYPE a counter` declares a counter for it; over-matching is harmless (see below).
_COUNTER_TYPE = re.compile(r"^[ \t]*#\S*[ \t]*TYPE[ \t]+(\S+)[ \t]+counter[ \t]*$", re.MULTILINE)


def reference(text: str) -> Counter[Key]:
    """prometheus_client's samples as (name as written in the text, sorted labels, value).

    prometheus_client renames the samples of a counter declared as `x` (not `x_total`) to
    `x_total` (OpenMetrics style); that is undone here for families it typed as counters.
    Summary/histogram samples keep their `_count`/`_sum`/`_bucket` names, as written.
    """
    renamed = {name for name in _COUNTER_TYPE.findall(text) if not name.endswith("_total")}
    result: Counter[Key] = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            name = sample.name
            if family.type == "counter" and family.name in renamed and name == family.name + "_total":
                name = family.name
            result[(name, tuple(sorted(sample.labels.items())), _value_key(float(sample.value)))] += 1
    return result


def reference_or_none(text: str) -> Counter[Key] | None:
    try:
        return reference(text)
    except Exception:  # prometheus_client raises ValueError, IndexError, ... on bad input
        return None


def sample_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.strip(" \t") and not line.lstrip(" \t").startswith("#"))


# ---------------------------------------------------------------------------
# (a) The captured Triton 2.51 payload.
# ---------------------------------------------------------------------------
def test_real_payload_matches_prometheus_client() -> None:
    text = REAL_PAYLOAD.read_text()
    samples = parse(text)
    assert Counter(keys(samples)) == reference(text)
    assert len(samples) == sample_lines(text) == 57
    names = {s.name for s in samples}
    assert "nv_inference_request_summary_us_count" in names
    assert "nv_inference_request_summary_us_sum" in names
    quantiles = [s for s in samples if s.name == c.NV_REQUEST_SUMMARY_US]
    assert [s.label("quantile") for s in quantiles] == list(QUANTILES)
    assert all(math.isnan(s.value) for s in quantiles)  # written `Nan`
    failures = [s for s in samples if s.name == c.NV_REQUEST_FAILURE]
    assert {s.label(c.LABEL_REASON) for s in failures} == set(FAILURE_REASONS)
    assert failures[0].labels == (("model", "add"), ("reason", "OTHER"), ("version", "1"))


def test_real_payload_keep_selects_without_changing_samples() -> None:
    text = REAL_PAYLOAD.read_text()
    full = parse(text)
    kept = parse(text, keep=PER_MODEL.__contains__)
    assert keys(kept) == keys([s for s in full if s.name in PER_MODEL])
    assert {s.name for s in kept} == PER_MODEL


# ---------------------------------------------------------------------------
# (b) Synthetic payloads shaped like a big Triton.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(("models", "versions", "gpus"), [(1000, 2, 0), (30, 2, 3)])
def test_synthetic_payload_matches_prometheus_client(models: int, versions: int, gpus: int) -> None:
    text = triton_metrics_payload(models, versions, gpus)
    expected = reference(text)
    samples = parse(text)
    assert Counter(keys(samples)) == expected
    assert len(samples) == sample_lines(text)
    kept = parse(text, keep=PER_MODEL.__contains__)
    assert keys(kept) == keys([s for s in samples if s.name in PER_MODEL])
    # speed is measured by bench/bench_parse.py; the fast-path test below guards the shape


def test_triton_shaped_payload_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> None:
        raise AssertionError("general path used")

    monkeypatch.setattr(exposition, "_merge_odd_lines", fail)
    parse(triton_metrics_payload(20, 2, 2))
    parse(REAL_PAYLOAD.read_text())


def test_general_path_agrees_with_fast_path() -> None:
    text = triton_metrics_payload(40, 2, 2)
    fast = keys(parse(text))
    # Tabs, extra blanks and a `}` inside a label value push lines off the fast path.
    lines = text.split("\n")
    odd = [
        line.replace(" ", "\t ", 1) if i % 3 == 0 and not line.startswith("#") else line
        for i, line in enumerate(lines)
    ]
    assert keys(parse("\n".join(odd))) == fast
    with_brace = text + 'odd{a="}{",b="x\\"y"}\t1 17\n'
    assert keys(parse(with_brace)) == [*fast, ("odd", (("a", "}{"), ("b", 'x"y')), 1.0)]


def _synthetic_skeleton(text: str) -> list[Any]:
    """Comment lines verbatim; sample lines as (name, label names in written order)."""
    skeleton: list[Any] = []
    for line in text.splitlines():
        if line.startswith("#"):
            skeleton.append(line)
        else:
            head = line.rpartition(" ")[0]
            name, _, rest = head.partition("{")
            skeleton.append((name, tuple(re.findall(r'([a-z_]+)="', rest))))
    return skeleton


def test_synthetic_payload_has_the_real_payloads_structure() -> None:
    real = REAL_PAYLOAD.read_text()
    # The capture holds one serving model (`add`) and one that failed to load (`exc`).
    synthetic = triton_metrics_payload(1, 1, failed_models=1)
    assert _synthetic_skeleton(synthetic) == _synthetic_skeleton(real)
    value_format = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?|Nan")
    big = triton_metrics_payload(50, 3, 2, seed=7)
    for line in big.splitlines():
        if not line.startswith("#"):
            assert value_format.fullmatch(line.rpartition(" ")[2]), line


def test_synthetic_payload_gpu_series_and_consistency() -> None:
    samples = parse(triton_metrics_payload(25, 2, gpus=3, seed=3))
    gpus = {s.label(c.LABEL_GPU_UUID) for s in samples if s.name == c.NV_GPU_UTILIZATION}
    assert len(gpus) == 3 and all(g.startswith("GPU-") for g in gpus)
    totals: dict[tuple[str, str, str, str], float] = {}
    per_gpu: dict[tuple[str, str, str, str], float] = {}
    for s in samples:
        if s.name in PER_MODEL:
            key = (s.name, s.label(c.LABEL_MODEL), s.label(c.LABEL_VERSION), s.label(c.LABEL_REASON))
            if s.label(c.LABEL_GPU_UUID):
                assert s.label(c.LABEL_GPU_UUID) in gpus
                per_gpu[key] = s.value
            else:
                totals[key] = s.value
    # every per-model series twice: the GPU instance's carries the values, the model's own zeros
    assert totals and set(per_gpu) == set(totals) and not any(totals.values()) and any(per_gpu.values())
    models = {(m, v) for _, m, v, _ in totals}
    assert len(models) == 25 * 2
    for model, version in models:
        value = {name: per_gpu[(name, model, version, "")] for name in PER_MODEL - {c.NV_REQUEST_FAILURE}}
        assert value[c.NV_INFERENCE_COUNT] >= value[c.NV_REQUEST_SUCCESS] >= value[c.NV_EXEC_COUNT]
        stages = sum(value[name] for name in c.STAGE_COUNTERS.values())
        assert stages <= value[c.NV_REQUEST_DURATION_US]
        summary_count = sorted(
            s.value
            for s in samples
            if s.name == "nv_inference_request_summary_us_count"
            and s.label(c.LABEL_MODEL) == model
            and s.label(c.LABEL_VERSION) == version
        )
        assert summary_count == [0.0, value[c.NV_REQUEST_SUCCESS]]


def test_synthetic_payload_is_deterministic_and_sized() -> None:
    assert triton_metrics_payload(5, 2, 1, seed=4) == triton_metrics_payload(5, 2, 1, seed=4)
    assert triton_metrics_payload(5, 2, 1, seed=4) != triton_metrics_payload(5, 2, 1, seed=5)
    assert sample_lines(triton_metrics_payload(1000, 2, summaries=False)) == 2000 * 13 + 5
    assert sample_lines(triton_metrics_payload(0, 0)) == 5
    with pytest.raises(ValueError):
        triton_metrics_payload(-1, 1)


# ---------------------------------------------------------------------------
# (c) Fuzzed valid payloads: same samples as prometheus_client.
# ---------------------------------------------------------------------------
_SUFFIXES = ("_total", "_count", "_sum", "_bucket", "_created", "_info", "_gcount", "_gsum")
metric_names = st.from_regex(r"[a-zA-Z_:][a-zA-Z0-9_:]{0,12}", fullmatch=True).filter(
    lambda n: not n.endswith(_SUFFIXES)
)
# prometheus_client rejects label names starting with `__` (the Go parser only rejects
# `__name__`), so the differential test stays clear of them; `le`/`quantile` are added below.
label_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9_]{0,8}", fullmatch=True).filter(
    lambda n: n not in ("le", "quantile")
)
label_values = st.text(max_size=10)
SAFE_TEXT = st.text(alphabet="abcXYZ019 _:.,;()[]{}=+-*/#", max_size=30)
blanks = st.sampled_from(["", " "])


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@st.composite
def values(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["float", "int", "special"]))
    if kind == "int":
        return str(draw(st.integers(-(10**20), 10**20)))
    if kind == "special":
        return draw(st.sampled_from(["Nan", "NaN", "nan", "+Inf", "-Inf", "Inf", "inf", "-inf", "+Infinity"]))
    number = draw(st.floats(allow_nan=True, allow_infinity=True))
    fmt = draw(st.sampled_from(["{!r}", "{:.6e}", "{:.17g}", "{:g}"]))
    return fmt.format(number)


@st.composite
def sample_lines_strategy(draw: st.DrawFn, name: str, extra_label: tuple[str, str] | None) -> str:
    names = draw(st.lists(label_names, max_size=4, unique=True))
    pairs = [(n, _escape(draw(label_values))) for n in names]
    if extra_label is not None:
        pairs.append(extra_label)
    draw(st.randoms()).shuffle(pairs)
    line = draw(blanks) + name
    if pairs or draw(st.booleans()):
        inner = ",".join(
            f'{draw(blanks)}{n}{draw(blanks)}={draw(blanks)}"{v}"{draw(blanks)}' for n, v in pairs
        )
        if pairs and draw(st.booleans()):
            inner += ","
        line += draw(blanks) + "{" + inner + draw(blanks) + "}" + draw(st.sampled_from(["", " ", "  "]))
    else:
        line += draw(st.sampled_from([" ", "  "]))
    line += draw(values())
    if draw(st.booleans()):
        line += draw(st.sampled_from([" ", "  "])) + str(draw(st.integers(-(10**15), 10**15)))
    return line + draw(blanks)


@st.composite
def payloads(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for name in draw(st.lists(metric_names, min_size=1, max_size=5, unique=True)):
        typ = draw(st.sampled_from(["counter", "gauge", "untyped", "summary", "histogram", None]))
        if draw(st.booleans()):
            lines.append(f"# HELP {name} {draw(SAFE_TEXT)}".rstrip())
        if typ is not None:
            lines.append(f"# TYPE {name} {typ}")
        for _ in range(draw(st.integers(0, 4))):
            if typ == "summary":
                suffix = draw(st.sampled_from(["", "_count", "_sum"]))
                extra = ("quantile", draw(st.sampled_from(["0.5", "0.99"]))) if not suffix else None
            elif typ == "histogram":
                suffix = draw(st.sampled_from(["_bucket", "_count", "_sum"]))
                extra = ("le", draw(st.sampled_from(["0.1", "+Inf"]))) if suffix == "_bucket" else None
            else:
                suffix, extra = "", None
            lines.append(draw(sample_lines_strategy(name + suffix, extra)))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# note: " + draw(SAFE_TEXT)])))
    return "\n".join(lines) + "\n"


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(payloads(), st.randoms())
def test_fuzzed_payloads_match_prometheus_client(text: str, rnd: random.Random) -> None:
    samples = parse(text)
    assert Counter(keys(samples)) == reference(text)
    assert keys(parse_bytes(text.encode())) == keys(samples)
    wanted = {s.name for s in samples if rnd.random() < 0.5}
    assert keys(parse(text, keep=wanted.__contains__)) == keys([s for s in samples if s.name in wanted])


# ---------------------------------------------------------------------------
# (d) Arbitrary text: a list of samples or ExpositionError, nothing else.
# ---------------------------------------------------------------------------
TOKENS = [
    "a", "nv_x", "b:c", "_", "{", "}", "=", '"', ",", "\\", "\\n", '\\"', "\\t", " ", "\t", "\n", "\n",
    "\r", "#", "# HELP ", "# TYPE ", "counter", "summary", "1", "-2.5e3", "Nan", "+Inf", "1_0", "0x1",
    "\u0131nf", "__name__", "le", 'x="y"', "\x00", "\u00e9", "\U0001f600",
]  # fmt: skip
near_valid = st.lists(st.sampled_from(TOKENS), max_size=40).map("".join)


@st.composite
def mutated_payloads(draw: st.DrawFn) -> str:
    """A valid fuzzed payload with a few characters deleted, inserted or replaced."""
    text = draw(payloads())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 2))
        text = text[:at] + draw(st.sampled_from(["", *TOKENS])) + text[at + cut :]
    return text


def _check_arbitrary(text: str) -> None:
    try:
        samples = parse(text)
    except ExpositionError as exc:
        assert exc.lineno >= 1 and str(exc).startswith(f"line {exc.lineno}: ")
        samples = None
    else:
        assert all(isinstance(s, Sample) and isinstance(s.value, float) for s in samples)
    try:
        none_kept = parse(text, keep=lambda name: False)
    except ExpositionError as exc:
        none_kept = None
        assert samples is None  # skipping lines never rejects what a full parse accepts
        with pytest.raises(ExpositionError) as full:
            parse(text)
        assert (full.value.lineno, full.value.reason) == (exc.lineno, exc.reason)
    if samples is None and none_kept is not None:
        # ...and only duplicate label names, not checked on skipped lines, are let through.
        with pytest.raises(ExpositionError, match="duplicate label name"):
            parse(text)
    if samples is not None:
        assert none_kept == []
        expected = reference_or_none(text)
        if expected is not None:  # both parsers accept: they must agree
            assert Counter(keys(samples)) == expected


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text_parses_or_raises_exposition_error(text: str) -> None:
    _check_arbitrary(text)


@FUZZ
@given(near_valid)
def test_near_valid_text_parses_or_raises_exposition_error(text: str) -> None:
    _check_arbitrary(text)


@FUZZ
@given(mutated_payloads())
def test_mutated_payloads_parse_or_raise_exposition_error(text: str) -> None:
    _check_arbitrary(text)


@FUZZ
@given(st.binary(max_size=200))
def test_arbitrary_bytes_parse_or_raise_exposition_error(body: bytes) -> None:
    with contextlib.suppress(ExpositionError):
        parse_bytes(body)


# ---------------------------------------------------------------------------
# (e) Truncated bodies.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [REAL_PAYLOAD.read_bytes(), triton_metrics_payload(3, 1, 2, failed_models=1).encode()],
    ids=["real", "synthetic-gpu"],
)
def test_truncated_body_raises_or_yields_a_prefix(body: bytes) -> None:
    full = keys(parse_bytes(body))
    line_ends = [i + 1 for i, byte in enumerate(body) if byte == ord("\n")]
    cuts = sorted({*range(0, len(body), 97), *line_ends[::7]})
    raised = 0
    for cut in cuts:
        prefix = body[:cut]
        if cut == 0 or prefix.endswith(b"\n"):
            got = keys(parse_bytes(prefix))
            assert got == full[: len(got)]
            assert len(got) == sample_lines(prefix.decode())
        else:
            with pytest.raises(ExpositionError) as info:
                parse_bytes(prefix)
            assert info.value.lineno == prefix.count(b"\n") + 1
            raised += 1
    assert raised > 50


# ---------------------------------------------------------------------------
# (f) Garbage.
# ---------------------------------------------------------------------------
GARBAGE = {
    "random-bytes": random.Random(1).randbytes(4096),
    "nul-bytes": b"\x00" * 64 + b"\n",
    "html-error-page": (
        b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
        b"<body><h1>502 Bad Gateway</h1></body></html>\n"
    ),
    "json-object": b'{"error": "model not found", "code": 404}\n',
    "json-array": b'[{"name": "nv_inference_count", "value": 1}]\n',
    "plain-text": b"404 page not found\n",
    "gzip": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + bytes(range(256)),
    "utf16": "nv_inference_count 1\n".encode("utf-16"),
    "bom": b"\xef\xbb\xbf" + REAL_PAYLOAD.read_bytes(),
    "crlf": REAL_PAYLOAD.read_bytes().replace(b"\n", b"\r\n"),
    "yaml": b"metrics:\n  - nv_inference_count: 1\n",
    "openmetrics-eof": b"# TYPE a counter\na_total 1\n# EOF",
}


@pytest.mark.parametrize("body", GARBAGE.values(), ids=GARBAGE.keys())
def test_garbage_raises_exposition_error(body: bytes) -> None:
    with pytest.raises(ExpositionError) as info:
        parse_bytes(body)
    assert info.value.lineno >= 1


# ---------------------------------------------------------------------------
# Grammar details and the error report.
# ---------------------------------------------------------------------------
VALID = {
    "empty": ("", []),
    "blank-and-comments": ("\n  \n# hello\n#\n# HELP\n# TYPE\n# HELP x\n# HELPER x\n", []),
    "no-labels": ("a 1\n", [("a", (), 1.0)]),
    "empty-labels": ("a{} 1\n", [("a", (), 1.0)]),
    "sorted-labels": ('a{z="1",b="2"} 3\n', [("a", (("b", "2"), ("z", "1")), 3.0)]),
    "escapes": ('a{b="x\\\\y\\"z\\n"} 1\n', [("a", (("b", 'x\\y"z\n'),), 1.0)]),
    "braces-in-values": ('a{b="}{",c=","} 1\n', [("a", (("b", "}{"), ("c", ",")), 1.0)]),
    "trailing-comma": ('a{b="1",} 1\n', [("a", (("b", "1"),), 1.0)]),
    "whitespace": (' \ta \t{ b = "1" , c="2" , }\t2  17 \n', [("a", (("b", "1"), ("c", "2")), 2.0)]),
    "no-space-after-brace": ('a{b="1"}2\n', [("a", (("b", "1"),), 2.0)]),
    "timestamp": ("a 1 -1700000000000\n", [("a", (), 1.0)]),
    "nan-variants": ("a Nan\nb NaN\nc nan\n", [("a", (), "NaN"), ("b", (), "NaN"), ("c", (), "NaN")]),
    "inf-variants": (
        "a +Inf\nb -Inf\nc inf\n",
        [("a", (), math.inf), ("b", (), -math.inf), ("c", (), math.inf)],
    ),
    "floats": ("a 1e3\nb -.5\nc 5.\n", [("a", (), 1000.0), ("b", (), -0.5), ("c", (), 5.0)]),
    "colon-name": ("a:b_c 1\n", [("a:b_c", (), 1.0)]),
    "reserved-prefix-label": ('a{__b="1"} 1\n', [("a", (("__b", "1"),), 1.0)]),
    "unicode-value": ('a{b="é😀\u2028\r"} 1\n', [("a", (("b", "é😀\u2028\r"),), 1.0)]),
}


@pytest.mark.parametrize(("text", "expected"), VALID.values(), ids=VALID.keys())
def test_valid_lines(text: str, expected: list[Key]) -> None:
    assert keys(parse(text)) == expected


INVALID = {
    "truncated": ("a 1\nb 2", 2, "does not end with a newline"),
    "truncated-comment": ("a 1\n# HELP b", 2, "does not end with a newline"),
    "missing-value": ("a 1\nb\n", 2, "missing sample value"),
    "non-numeric": ("a abc\n", 1, "invalid sample value"),
    "underscore-digits": ("a 1_000\n", 1, "invalid sample value"),
    "hex": ("a 0x10\n", 1, "invalid sample value"),
    "dotless-i-inf": ("a \u0131nf\n", 1, "invalid sample value"),
    "float-timestamp": ("a 1 1.5\n", 1, "unexpected text after the sample value"),
    "two-timestamps": ("a 1 2 3\n", 1, "unexpected text after the sample value"),
    "unterminated-label-set": ('a{b="1" 1\n', 1, "expected ',' or '}'"),
    "unterminated-label-value": ('a{b="1} 1\n', 1, "unterminated label value"),
    "unquoted-label-value": ("a{b=1} 1\n", 1, "double-quoted"),
    "bad-escape": ('a{b="\\t"} 1\n', 1, "invalid escape"),
    "duplicate-label": ('a 1\na{b="1",b="2"} 1\n', 2, "duplicate label name 'b'"),
    "reserved-name-label": ('a{__name__="x"} 1\n', 1, "__name__ is reserved"),
    "leading-comma": ('a{,b="1"} 1\n', 1, "expected a label name"),
    "bad-metric-name": ("a-b 1\n", 1, "invalid character in metric name"),
    "no-metric-name": ('{a="b"} 1\n', 1, "expected a metric name"),
    "bad-help-name": ("# HELP 1a text\n", 1, "malformed HELP or TYPE"),
    "bad-type": ("# TYPE a counters\n", 1, "malformed HELP or TYPE"),
    "crlf": ("a 1\r\n", 1, "carriage return"),
    "later-line": ('a 1\nb 2\n\n# c\nd{e="f"} x\n', 5, "invalid sample value"),
}


@pytest.mark.parametrize(("text", "lineno", "reason"), INVALID.values(), ids=INVALID.keys())
def test_invalid_lines(text: str, lineno: int, reason: str) -> None:
    with pytest.raises(ExpositionError) as info:
        parse(text)
    assert info.value.lineno == lineno
    assert reason in info.value.reason
    assert str(info.value).startswith(f"line {lineno}: ")
    assert info.value.excerpt == text.split("\n")[lineno - 1][:80]


def test_first_invalid_line_is_reported_on_a_big_body() -> None:
    text = triton_metrics_payload(30, 2)
    lines = text.split("\n")
    bad = ["x{a=1} 2", "x 1 2 3", 'x{a="1",a="2"} 1']
    for index, line in zip((5, 400, 900), bad, strict=True):
        broken = "\n".join([*lines[:index], line, *lines[index:]])
        with pytest.raises(ExpositionError) as info:
            parse(broken)
        assert info.value.lineno == index + 1


def test_excerpt_is_short_and_error_pickles() -> None:
    line = "a{" + ",".join(f'l{i}="{i}"' for i in range(50)) + "} oops"
    with pytest.raises(ExpositionError) as info:
        parse(line + "\n")
    assert len(info.value.excerpt) == 80 and info.value.excerpt.endswith("...")
    copy = pickle.loads(pickle.dumps(info.value))
    assert str(copy) == str(info.value) and copy.lineno == 1
    assert isinstance(info.value, ValueError)


def test_parse_bytes_reports_bad_utf8_line() -> None:
    with pytest.raises(ExpositionError) as info:
        parse_bytes(b'a 1\nb{c="\xff"} 2\n')
    assert info.value.lineno == 2 and "UTF-8" in info.value.reason


# ---------------------------------------------------------------------------
# keep.
# ---------------------------------------------------------------------------
def test_keep_is_called_once_per_distinct_name() -> None:
    calls: list[str] = []

    def keep(name: str) -> bool:
        calls.append(name)
        return name.endswith("_count")

    samples = parse(triton_metrics_payload(10, 2), keep=keep)
    assert sorted(calls) == sorted(set(calls))
    assert samples and all(s.name.endswith("_count") for s in samples)


@pytest.mark.parametrize(
    "line",
    ["skipped{a=1} 2", 'skipped{a="\\t"} 2', "skipped x", 'skipped{__name__="a"} 1', "skipped 1 2 3"],
)
def test_skipped_lines_are_still_validated(line: str) -> None:
    text = f"kept 1\n{line}\n"
    with pytest.raises(ExpositionError) as info:
        parse(text, keep=lambda name: name == "kept")
    assert info.value.lineno == 2


def test_duplicate_labels_only_detected_on_kept_lines() -> None:
    text = 'kept 1\nskipped{a="1",a="2"} 2\n'
    assert keys(parse(text, keep=lambda name: name == "kept")) == [("kept", (), 1.0)]
    with pytest.raises(ExpositionError):
        parse(text)


# ---------------------------------------------------------------------------
# Odds and ends.
# ---------------------------------------------------------------------------
def test_sample_label_helper_and_immutability() -> None:
    sample = parse('a{model="m",version="2"} 1\n')[0]
    assert sample.label("model") == "m"
    assert sample.label(c.LABEL_GPU_UUID) == ""
    assert sample.label(c.LABEL_GPU_UUID, "none") == "none"
    assert sample == Sample("a", (("model", "m"), ("version", "2")), 1.0)
    assert hash(sample) == hash(Sample("a", (("model", "m"), ("version", "2")), 1.0))
    with pytest.raises(AttributeError):
        sample.value = 2.0  # type: ignore[misc]


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("text", ["a 1\n", "a 1"])
def test_gc_state_is_restored(enabled: bool, text: str) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with contextlib.suppress(ExpositionError):
            parse(text)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


# ---------------------------------------------------------------------------
# Slices: iter_parse gives parse's samples and parse's errors, whatever the slice size.
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("chunk_chars", [1, 97, 4096, 1 << 20])
def test_iter_parse_equals_parse(chunk_chars: int) -> None:
    text = triton_metrics_payload(40, 2, gpus=2) + REAL_PAYLOAD.read_text()
    whole = parse(text, keep=PER_MODEL.__contains__)
    sliced = [
        s for part in iter_parse(text, keep=PER_MODEL.__contains__, chunk_chars=chunk_chars) for s in part
    ]
    assert keys(sliced) == keys(whole)


@pytest.mark.parametrize("chunk_chars", [1, 50, 4096])
def test_iter_parse_reports_whole_body_line_numbers(chunk_chars: int) -> None:
    good = triton_metrics_payload(5, 1)
    lines = good.splitlines(keepends=True)
    bad_at = len(lines) - 7
    lines[bad_at] = 'nv_inference_count{model="x" 1\n'
    with pytest.raises(ExpositionError) as whole:
        parse("".join(lines))
    with pytest.raises(ExpositionError) as sliced:
        for _ in iter_parse("".join(lines), chunk_chars=chunk_chars):
            pass
    assert sliced.value.lineno == whole.value.lineno == bad_at + 1
    with pytest.raises(ExpositionError, match="newline"):
        for _ in iter_parse(good.rstrip("\n"), chunk_chars=chunk_chars):
            pass
