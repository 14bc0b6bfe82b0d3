"""Fault probes, round eight (branch `probes8`, 2026-12-05): time (a clock stepping back, odd
`TZ`), restarts and repeated starts, empty answers — docs/failure-behaviour.md, "Fault probes,
round eight"."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from client_double import PollClient
from prometheus_client.parser import text_string_to_metric_families

from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter
from triton_sre.pricing import Pricing

MODELS = ("alpha", "beta")
READY_INDEX = [{"name": m, "version": "1", "state": c.STATE_READY} for m in MODELS]


def metrics_body(poll: int) -> bytes:
    """Triton's per-model counters after `poll` polls of steady traffic (2 inferences/execution)."""
    lines = []
    for scale, model in enumerate(MODELS, start=1):
        labels = f'model="{model}",version="1"'
        n = 100 * poll * scale
        lines += [
            f"# HELP {c.NV_INFERENCE_COUNT} inferences",
            f"# TYPE {c.NV_INFERENCE_COUNT} counter",
            f"{c.NV_INFERENCE_COUNT}{{{labels}}} {n}",
            f"{c.NV_EXEC_COUNT}{{{labels}}} {n // 2}",
            f"{c.NV_REQUEST_DURATION_US}{{{labels}}} {n * 1000}",
            f"{c.NV_REQUEST_SUCCESS}{{{labels}}} {n}",
        ]
        lines += [f"{stage}{{{labels}}} {n * 100}" for stage in c.STAGE_COUNTERS.values()]
    return ("\n".join(lines) + "\n").encode()


def stats_body(poll: int) -> str:
    entries = []
    for scale, model in enumerate(MODELS, start=1):
        n = 100 * poll * scale
        ns = {"count": n, "ns": n * 1000}
        entries.append(
            {
                "name": model,
                "version": "1",
                "inference_count": n,
                "execution_count": n // 2,
                "batch_stats": [
                    {"batch_size": 2, "compute_input": ns, "compute_infer": ns, "compute_output": ns}
                ],
            }
        )
    return json.dumps({"model_stats": entries})


class Stub(PollClient):
    """A Triton answering the given metrics body, index and statistics."""

    def __init__(self, metrics: bytes, index: list, stats: str) -> None:
        self._metrics, self._index, self._stats = metrics, index, stats

    def metrics(self) -> bytes:
        return self._metrics

    def repository_index(self) -> list:
        return self._index

    def all_stats(self) -> Iterator:
        from triton_sre.triton.client import iter_model_stats

        return iter_model_stats(self._stats)

    def model_config(self, name: str) -> object:
        return {"name": name, "max_batch_size": 8, "dynamic_batching": {}}


def exporter_with(clock: Callable[[], float]) -> Exporter:
    settings = ExporterSettings(
        triton_url="http://stub:8000",
        interval=15,
        window=60,
        pricing=Pricing(currency="USD", node_hour=1.0, cpu_execution_slots=2),
    )
    return Exporter(settings, client=Stub(b"", [], "{}"), clock=clock)


def poll(exporter: Exporter, n: int, *, metrics: bytes | None = None, index: list | None = None) -> None:
    exporter.client = Stub(
        metrics_body(n) if metrics is None else metrics,
        READY_INDEX if index is None else index,
        stats_body(n),
    )
    assert exporter.poll_once() is not None


def exported(exporter: Exporter) -> dict[tuple[str, tuple], float]:
    text = exporter.metrics_text().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def family(samples: dict, name: str) -> dict[tuple, float]:
    return {labels: value for (n, labels), value in samples.items() if n == name}


def ready_states(samples: dict) -> set[str]:
    return {
        dict(labels)[c.LABEL_MODEL]
        for labels, value in family(samples, c.M_MODEL_STATE).items()
        if dict(labels)[c.L_STATE] == c.STATE_READY and value == 1
    }


# -- time --------------------------------------------------------------------------------------


def test_a_clock_stepping_back_between_polls_keeps_the_window_and_never_goes_negative() -> None:
    """The wall clock steps back 10 minutes (NTP, a VM restored from a snapshot) after three polls.
    Before: the poll read as older than the window, every model state and rate vanished and
    `triton_sre_window_seconds` was -600 until the clock caught up with the old polls."""
    times = iter([1000.0, 1015.0, 1030.0, 400.0, 415.0])
    exporter = exporter_with(lambda: next(times))
    for n in (1, 2, 3):
        poll(exporter, n)
    before = exported(exporter)
    assert set(family(before, c.M_BATCHING_RATIO).values()) == {2.0}
    for n in (4, 5):  # the clock stepped back between poll 3 and 4
        poll(exporter, n)
        after = exported(exporter)
        (window,) = family(after, c.M_WINDOW_SECONDS).values()
        assert window >= 30.0  # the three earlier polls are still in the window
        assert set(family(after, c.M_BATCHING_RATIO).values()) == {2.0}
        assert ready_states(after) == set(MODELS)
        assert all(v >= 0 for (name, _), v in after.items() if name.startswith("triton_sre_"))
    # the last success is the wall clock's reading: what an alert compares with time()
    assert family(after, c.M_LAST_SUCCESS) == {(): 415.0}


# -- empty answers -----------------------------------------------------------------------------


def errors(samples: dict, target: str, kind: str) -> float:
    return samples.get((c.M_POLL_ERRORS, ((c.L_KIND, kind), (c.L_TARGET, target))), 0.0)


def test_an_empty_metrics_body_while_models_are_ready_is_a_counted_fault_keeping_the_last_values() -> None:
    """A proxy (or another service on the port) answers Triton's /metrics with 200 and no sample.
    Before: `up` 1, no error counted, every rate gone: read as a Triton with no series."""
    times = iter(range(1000, 2000, 15))
    exporter = exporter_with(lambda: float(next(times)))
    poll(exporter, 1)
    poll(exporter, 2)
    good = exported(exporter)
    for n, body in ((3, b""), (4, b"# HELP nv_inference_count x\n# TYPE nv_inference_count counter\n\n")):
        poll(exporter, n, metrics=body)
        after = exported(exporter)
        assert family(after, c.M_UP) == {(): 0.0}
        assert errors(after, c.TARGET_METRICS, c.FAULT_EMPTY) == n - 2
        assert errors(after, c.TARGET_METRICS, c.FAULT_PARSE) == 0
        # the window's good polls still stand: the same ratios, the last success not moved
        assert family(after, c.M_BATCHING_RATIO) == family(good, c.M_BATCHING_RATIO)
        assert family(after, c.M_LAST_SUCCESS) == family(good, c.M_LAST_SUCCESS)
    poll(exporter, 5)  # the real metrics are back
    assert family(exported(exporter), c.M_UP) == {(): 1.0}


def test_an_empty_metrics_body_of_a_triton_without_ready_models_is_still_read() -> None:
    """A Triton with no model loaded (CPU metrics off) may write nothing: not a fault."""
    times = iter(range(1000, 2000, 15))
    exporter = exporter_with(lambda: float(next(times)))
    unavailable = [{"name": "alpha", "version": "1", "state": c.STATE_UNAVAILABLE, "reason": "x"}]
    for index in ([], unavailable):
        poll(exporter, 1, metrics=b"", index=index)
        samples = exported(exporter)
        assert family(samples, c.M_UP) == {(): 1.0}
        assert errors(samples, c.TARGET_METRICS, c.FAULT_EMPTY) == 0
