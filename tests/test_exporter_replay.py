"""The replayed metrics fold (exporter/replay.py) against the reference parse + fold.

Every body here goes through both: `parse` + `counters_from_samples` (the reference, with its
problems) and `Skeleton` + `MetricsPlan.replay`. Whenever the replay answers, the reference must
have accepted the body without a problem and give the same rows, GPUs and side samples; and for
a body that only changed its values to valid ones, the replay must answer.
"""

from __future__ import annotations

import math
import random
import weakref
from pathlib import Path

import pytest
from client_double import PollClient
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic import triton_metrics_payload

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter import replay as replay_module
from triton_sre.exporter import service
from triton_sre.exporter.capacity import CapacityWatch
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.replay import CounterTable, MetricsPlan, same_rows
from triton_sre.exporter.service import _SIDE_NAMES, Exporter
from triton_sre.exporter.snapshot import Problems, keep_family
from triton_sre.triton.exposition import ExpositionError, parse
from triton_sre.triton.skeleton import Skeleton

DATA = Path(__file__).parent / "data"
# Real Triton 2.51 scrapes (see each file's source): the CPU server and the LLM backends' READMEs.
REAL = [
    (DATA / "triton_2.51_metrics_cpu.txt").read_text(),
    (DATA / "vllm_backend_readme_metrics.txt").read_text(),
    (DATA / "tensorrtllm_backend_readme_metrics.txt").read_text(),
]
BASES = [
    *REAL,
    triton_metrics_payload(30, 2, summaries=False, failed_models=2),
    triton_metrics_payload(12, 2, gpus=3, seed=5),  # totals plus gpu_uuid copies
    # per-GPU series only (older servers): summed per model
    "\n".join(
        line
        for line in triton_metrics_payload(6, 1, gpus=2, seed=2).split("\n")
        if c.LABEL_GPU_UUID in line or not line.startswith("nv_inference")
    ),
    # escaped label values, a timestamp, a plain comment with a number at its end
    "# HELP nv_inference_count Inferences 5\n# TYPE nv_inference_count counter\n"
    'nv_inference_count{model="a\\"b\\\\c\\nd",version="1"} 7 1700000000\n'
    "# a note 12\n"
    'nv_inference_count{model="e f",version="2"} 3\n'
    'nv_inference_exec_count{version="2",model="e f"} 1\n',
]


def reference(text: str):
    """(rows, gpus, side samples, problem count), or None when the body is rejected."""
    problems = Problems()
    side: list = []
    try:
        rows, gpus = counters_from_samples(
            parse(text, keep=keep_family), problems, side=side.append, side_names=_SIDE_NAMES
        )
    except ExpositionError:
        return None
    side = [s for s in side if not CapacityWatch.inert(s.name, s.labels)]
    return rows, gpus, side, problems.count


def plan_for(text: str) -> MetricsPlan:
    skeleton = Skeleton.of(text, keep=keep_family)
    assert skeleton is not None
    return MetricsPlan(skeleton, keep=keep_family, side_names=_SIDE_NAMES, side_inert=CapacityWatch.inert)


def same_samples(a: list, b: list) -> bool:
    return [(s.name, s.labels) for s in a] == [(s.name, s.labels) for s in b] and all(
        x.value == y.value or (math.isnan(x.value) and math.isnan(y.value)) for x, y in zip(a, b, strict=True)
    )


def check(plan: MetricsPlan, text: str) -> bool:
    """Replay and reference agree on `text`; True when the replay answered."""
    fast = plan.replay(text)
    ref = reference(text)
    if fast is None:
        return False
    assert ref is not None, "replay accepted a body the parser rejects"
    rows, gpus, side, problems = ref
    assert problems == 0, "replay answered where the reference reports a problem"
    assert isinstance(fast[0], CounterTable)
    assert same_rows(fast[0], rows)
    assert dict(fast[0].items()).keys() == rows.keys()
    assert fast[1] == gpus
    assert same_samples(fast[2], side)
    return True


def with_values(text: str, rng: random.Random, choices: list[str], share: float = 1.0) -> str:
    """`text` with the value of (a share of) its sample lines replaced by one of `choices`."""
    out = []
    for line in text.split("\n"):
        if line and not line.startswith("#") and rng.random() < share:
            head, _, rest = line.partition("} ") if "}" in line else line.partition(" ")
            _, _, stamp = rest.partition(" ")
            line = f"{head}{'} ' if '}' in line else ' '}{rng.choice(choices)}" + (
                f" {stamp}" if stamp else ""
            )
        out.append(line)
    return "\n".join(out)


VALID_VALUES = [
    "0",
    "1",
    "42",
    "1e3",
    "7.5",
    "123456789012",
    "0.000001",
    "1E+2",
    ".5",
    "18446744073709551616",
]


@pytest.mark.parametrize("base", BASES, ids=range(len(BASES)))
def test_replay_matches_reference_when_only_values_change(base: str) -> None:
    ref = reference(base)
    assert ref is not None and ref[3] == 0
    plan = plan_for(base)
    assert check(plan, base)
    rng = random.Random(1)
    for _ in range(20):
        assert check(plan, with_values(base, rng, VALID_VALUES))


def test_synthetic_polls_share_one_skeleton() -> None:
    """The bench's polls: other seeds, other values, same lines (as a real server's scrapes)."""
    plan = plan_for(triton_metrics_payload(50, 2, seed=0, summaries=False))
    for seed in range(1, 4):
        assert check(plan, triton_metrics_payload(50, 2, seed=seed, summaries=False))
        assert check(
            plan, triton_metrics_payload(50, 2, seed=seed, summaries=False).replace(" 0\n", " 0 17\n")
        )


@pytest.mark.parametrize("value", ["NaN", "Nan", "+Inf", "-Inf", "-1", "1e400", "3e19", "-0.5"])
def test_values_the_reference_rejects_are_not_replayed(value: str) -> None:
    base = BASES[3]
    plan = plan_for(base)
    line = next(x for x in base.split("\n") if x.startswith(c.NV_INFERENCE_COUNT + "{"))
    text = base.replace(line, line.rsplit(" ", 1)[0] + " " + value, 1)
    assert plan.replay(text) is None
    ref = reference(text)
    assert ref is not None and ref[3] == 1


@pytest.mark.parametrize(
    "bad",
    [
        'nv_inference_count{model="a",version="1"} 1_0',  # not a value
        'nv_inference_count{model="a",version="1"} 0x10',
        'nv_inference_count{model="a",version="1"} 1 1.5',  # float timestamp
        'nv_inference_count{model="a",version="1"} 1 # {trace_id="x"} 1',  # exemplar (OpenMetrics)
        'nv_inference_count{model="a",version="1",} 1',  # trailing comma: valid, other text
        'nv_inference_count{model="a",model="b"} 1',  # duplicate label name
        'nv_inference_count{model="a\\q"} 1',  # bad escape
        'nv_inference_count{__name__="x"} 1',
        'nv_inference_count {model="a"} 1',
        'nv_inference_count{model="a",version="1"}  1',
        'nv_inference_count{model="a",version="1"} 1\r',
        "# TYPE nv_inference_count counter 5",
        "# HELP",
        "garbage",
        'nv_inference_count{model="a",version="1"}',
    ],
)
def test_malformed_lines_are_never_replayed(bad: str) -> None:
    base = BASES[3]
    plan = plan_for(base)
    lines = base.split("\n")
    for at in (0, 5, len(lines) - 2):
        text = "\n".join([*lines[:at], bad, *lines[at:]])
        assert plan.replay(text) is None
        # the same text as a new skeleton: only if the parser accepts it
        if Skeleton.of(text) is not None:
            parse(text)
    assert plan.replay(base.rstrip("\n")) is None  # truncated
    assert Skeleton.of(base.rstrip("\n")) is None


def test_skeleton_of_rejects_what_parse_rejects() -> None:
    for text in ["x 1", 'x{a="1"} 1\nx{', "# TYPE x summ\n", "x{a=1} 1\n", "x 1 2 3\n", "x\t1 1.5\n"]:
        with pytest.raises(ExpositionError):
            parse(text)
        assert Skeleton.of(text) is None


def test_odd_but_valid_shapes_stay_on_the_reference_path() -> None:
    # valid, but not the plain shape a replay can keep: no skeleton, never wrong
    for text in ["x\t1\n", 'x{a="}"} 1\n', "  x 1\n", 'x{a="1"} 1  \n']:
        parse(text)
        assert Skeleton.of(text) is None
    skeleton = Skeleton.of("# HELP\n# TYPE x\nx 1\n")  # bare HELP/TYPE lines are kept as text
    assert skeleton is not None and skeleton.values("# HELP\n# TYPE x\nx 2\n") == ["2"]


def test_duplicate_series_make_no_plan() -> None:
    base = BASES[3]
    line = next(x for x in base.split("\n") if x.startswith(c.NV_EXEC_COUNT + "{"))
    for twin in (line, line.replace('model="model_0000",version="1"', 'version="1",model="model_0000"')):
        text = base.replace(line, f"{line}\n{twin}", 1)
        assert reference(text)[3] == 1  # the reference counts the repeat
        skeleton = Skeleton.of(text)
        assert skeleton is not None
        with pytest.raises(ValueError, match="duplicate"):
            MetricsPlan(skeleton, keep=keep_family, side_names=_SIDE_NAMES)


@settings(max_examples=150, deadline=None)
@given(
    base=st.sampled_from(BASES),
    seed=st.integers(0, 2**32),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from(["\n", " ", "{", "}", '"', "x", ",", "#", "1", "\t"])),
        max_size=3,
    ),
    values=st.lists(
        st.sampled_from([*VALID_VALUES, "NaN", "-1", "+Inf", "1_0", "1 2", "1 x", ""]), min_size=1
    ),
)
def test_replay_never_disagrees_with_the_reference(base, seed, edits, values) -> None:
    plan = plan_for(base)
    text = with_values(base, random.Random(seed), values, share=0.3)
    for where, char in edits:  # a few stray characters anywhere
        at = int(where * len(text))
        text = text[:at] + char + text[at:]
    check(plan, text)


class ScriptedClient(PollClient):
    """Serves the given metrics bodies in turn (then the last one again)."""

    def __init__(self, bodies: list[str]) -> None:
        self.bodies = bodies
        self.polls = 0

    def metrics(self) -> bytes:
        body = self.bodies[min(self.polls, len(self.bodies) - 1)]
        self.polls += 1
        return body.encode()

    def repository_index(self) -> list[dict]:
        return [{"name": "model_0000", "version": "1", "state": c.STATE_READY}]

    def all_stats(self) -> list[dict]:
        return []

    def model_config(self, model: str, version: str = "") -> dict:
        return {"max_batch_size": 4}


def parse_errors(exporter: Exporter) -> float:
    value = exporter.registry.get_sample_value(
        c.M_POLL_ERRORS, {c.L_TARGET: c.TARGET_METRICS, c.L_KIND: c.FAULT_PARSE}
    )
    return value or 0.0


def test_exporter_replays_and_still_reports_garbage_and_bad_values() -> None:
    polls = [triton_metrics_payload(20, 2, seed=s, summaries=False) for s in range(6)]
    negative = polls[4].replace(" 0\n", " -3\n", 1)
    bodies = [polls[0], polls[1], polls[2], "garbage\n", polls[3], negative, polls[4], polls[5]]
    exporter = Exporter(ExporterSettings(interval=1, window=10), client=ScriptedClient(bodies))  # type: ignore[arg-type]
    seen = []
    for body in bodies:
        snapshot = exporter.poll_once()
        seen.append((exporter._replayer.plan is not None, parse_errors(exporter)))
        ref = reference(body)
        if ref is None:
            assert snapshot.counters is None
        else:
            assert same_rows(snapshot.counters, ref[0])
    # the plan is made at the first clean poll, kept through garbage and bad values
    assert [plan for plan, _ in seen] == [True, True, True, True, True, True, True, True]
    assert [errors for _, errors in seen] == [0, 0, 0, 1, 1, 2, 2, 2]
    assert isinstance(exporter.poll_once().counters, CounterTable)


def counting_slow_path(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bodies the exporter folds by the reference parse (its slow path), in poll order."""
    slow: list[str] = []
    reference_fold = service._counters_from_text

    def counted(text, *args, **kwargs):
        slow.append(text)
        return reference_fold(text, *args, **kwargs)

    monkeypatch.setattr(service, "_counters_from_text", counted)
    return slow


def counting_plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per `MetricsPlan` the exporter makes."""
    made: list[int] = []

    class Counted(MetricsPlan):
        def __init__(self, *args, **kwargs) -> None:
            made.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(replay_module, "MetricsPlan", Counted)
    return made


def test_the_second_poll_is_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Triton repeats its lines: only the first body is parsed; the second is already replayed
    (a second full parse and fold cost seconds at 10,000 models), with the reference's rows."""
    slow = counting_slow_path(monkeypatch)
    bodies = [triton_metrics_payload(20, 2, seed=s, summaries=False) for s in range(4)]
    exporter = Exporter(ExporterSettings(interval=1, window=10), client=ScriptedClient(bodies))  # type: ignore[arg-type]
    for body in bodies:
        snapshot = exporter.poll_once()
        assert same_rows(snapshot.counters, reference(body)[0])
    assert slow == bodies[:1]
    assert isinstance(snapshot.counters, CounterTable)


def test_a_new_skeleton_after_the_first_plan_needs_two_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the first plan is made at once: a server whose lines change at every scrape costs one
    plan, then the reference path alone; a skeleton that then holds is planned at its second poll."""
    slow = counting_slow_path(monkeypatch)
    made = counting_plans(monkeypatch)
    reordered = [
        triton_metrics_payload(10 + s, 2, seed=s, summaries=False) for s in range(4)
    ]  # a model more at every scrape: a new skeleton each time
    steady = [triton_metrics_payload(30, 2, seed=s, summaries=False) for s in range(4)]
    bodies = reordered + steady
    exporter = Exporter(ExporterSettings(interval=1, window=10), client=ScriptedClient(bodies))  # type: ignore[arg-type]
    plans = []
    for body in bodies:
        snapshot = exporter.poll_once()
        assert same_rows(snapshot.counters, reference(body)[0])
        plans.append(len(made))
    assert plans == [1, 1, 1, 1, 1, 2, 2, 2]
    assert slow == reordered + steady[:2]


class RecordingClient(ScriptedClient):
    """`ScriptedClient` that records each call, in order, in `calls`."""

    def __init__(self, bodies: list[str], calls: list[str]) -> None:
        super().__init__(bodies)
        self.calls = calls

    def metrics(self) -> bytes:
        self.calls.append("metrics")
        return super().metrics()

    def repository_index(self) -> list[dict]:
        self.calls.append("index")
        return super().repository_index()

    def all_stats(self) -> list[dict]:
        self.calls.append("stats")
        return super().all_stats()

    def model_config(self, model: str, version: str = "") -> dict:
        self.calls.append("config")
        return super().model_config(model, version)


def test_the_metrics_are_parsed_and_learned_after_the_polls_fetches(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse and the learning of a plan (seconds each at 10,000 models) come after every fetch
    of their poll, so they spend none of the poll's deadline; the plan is there for the next poll."""
    calls: list[str] = []
    reference_fold = service._counters_from_text

    def parsed(*args, **kwargs):
        calls.append("parse")
        return reference_fold(*args, **kwargs)

    monkeypatch.setattr(service, "_counters_from_text", parsed)
    bodies = [triton_metrics_payload(20, 2, seed=s, summaries=False) for s in range(2)]
    exporter = Exporter(ExporterSettings(interval=1, window=10), client=RecordingClient(bodies, calls))  # type: ignore[arg-type]
    learn = exporter._replayer.learn

    def recorded(*args, **kwargs) -> None:
        calls.append("learn")
        learn(*args, **kwargs)

    exporter._replayer.learn = recorded  # type: ignore[method-assign]
    exporter.poll_once()
    assert calls == ["metrics", "index", "stats", "config", "parse", "learn"]
    assert exporter._replayer.plan is not None
    calls.clear()
    assert isinstance(exporter.poll_once().counters, CounterTable)
    assert calls == ["metrics", "index", "stats"]  # replayed: nothing to learn


class Body(bytearray):
    """A metrics body a weak reference can follow (a plain bytearray takes none)."""


def test_the_metrics_bytes_are_let_go_before_the_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parse holds the body's text, not the bytes besides (29 MB each at 10,000 models): once the
    fold moved after the poll's fetches, the poll still held the bytes through it."""
    alive: list[bool] = []
    reference_fold = service._counters_from_text
    bodies = [triton_metrics_payload(20, 2, seed=0, summaries=False)]
    held: list[weakref.ref] = []

    class WeakBodyClient(ScriptedClient):
        def metrics(self) -> Body:
            body = Body(super().metrics())
            held.append(weakref.ref(body))
            return body

    def parsed(*args, **kwargs):
        alive.append(held[-1]() is not None)
        return reference_fold(*args, **kwargs)

    monkeypatch.setattr(service, "_counters_from_text", parsed)
    exporter = Exporter(ExporterSettings(interval=1, window=10), client=WeakBodyClient(bodies))  # type: ignore[arg-type]
    assert same_rows(exporter.poll_once().counters, reference(bodies[0])[0])
    assert alive == [False]


def test_bodies_larger_than_one_slice() -> None:
    """Skeletons and values are read in ~1 MB slices: a 2.4 MB body (summaries on) and small
    slices give the same answers as one piece."""
    bodies = [triton_metrics_payload(300, 2, seed=s) for s in range(3)]
    assert len(bodies[0]) > 2_000_000
    plan = plan_for(bodies[0])
    for body in bodies:
        assert check(plan, body)
    skeleton = Skeleton.of(bodies[1])
    whole = skeleton.values(bodies[2], chunk_chars=len(bodies[2]) + 1)
    assert whole is not None and len(whole) == len(skeleton.samples)
    for chunk in (1, 333, 65_536):
        assert skeleton.values(bodies[2], chunk_chars=chunk) == whole
    assert skeleton.values(bodies[2].replace("model_0299", "model_0298"), chunk_chars=333) is None


def test_real_triton_repeats_its_lines_and_the_replay_agrees(triton) -> None:
    """The premise, on the real 2.51 server: two scrapes with traffic between them differ only
    in their values, and the replay of the second equals the reference fold of it."""
    import time

    import requests

    from triton_sre.demo.traffic import TrafficDriver

    first = requests.get(triton.metrics_url, timeout=10).text
    plan = plan_for(first)
    driver = TrafficDriver(triton.http_url, max_duration_s=3.0, max_requests=60, error_fraction=0.2).start()
    time.sleep(3.0)
    driver.stop()
    time.sleep(2.5)  # Triton refreshes some gauges every 2 s
    second = requests.get(triton.metrics_url, timeout=10).text
    assert second != first
    assert check(plan, second)
