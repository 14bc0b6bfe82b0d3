"""The exporter service: the poll loop (scrape → snapshot → derive); its read-only HTTP endpoints are
endpoints.py's (`ExporterServer`, importable from here).

Polls run on their own fixed schedule, never on scrape; a failed fetch is counted in
`triton_sre_poll_errors_total{target,kind}` and the service keeps serving. A poll's calls share one
deadline of `timeout` seconds (a hung Triton costs one timeout per poll, not one per call); when
the metrics port is another listener than the HTTP API and its fetch is still running at half the
deadline, the API side is read on a second thread meanwhile (`Rescue`), so a hung metrics port
does not spend the API's time. The metrics body is folded after the poll's fetches: its parse (seconds
for a fleet of 10,000 models) spends none of their deadline.
"""

from __future__ import annotations

import gc
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from triton_sre import __version__, tracing
from triton_sre import conventions as c
from triton_sre.config import ExporterSettings
from triton_sre.diagnosis.engine import diagnose_reason
from triton_sre.exporter.budgets import BudgetWatch
from triton_sre.exporter.capacity import WATCHED as CAPACITY_NAMES
from triton_sre.exporter.capacity import CapacityReading, CapacityWatch, LoadTimer, energy_rows
from triton_sre.exporter.collector import ExporterView, render_chunks
from triton_sre.exporter.configs import ConfigCache
from triton_sre.exporter.derive import CapacityInputs, Derivation, ReasonMemo, derive_window
from triton_sre.exporter.endpoints import ExporterServer as ExporterServer  # its home is endpoints
from triton_sre.exporter.idleconn import IdleConnections
from triton_sre.exporter.inputs import InputWatch
from triton_sre.exporter.llm import LLM_SAMPLE_NAMES, LLMCollector, LLMData
from triton_sre.exporter.metricsfold import counters_from_samples
from triton_sre.exporter.release import ServerRelease
from triton_sre.exporter.replay import Replayer
from triton_sre.exporter.rescue import Rescue
from triton_sre.exporter.restarts import RestartWatch
from triton_sre.exporter.snapshot import (
    CounterRow,
    IndexEntry,
    IndexReader,
    ModelKey,
    Problems,
    Snapshot,
    keep_family,
    stats_from_json,
)
from triton_sre.exporter.timeline import Timeline
from triton_sre.exporter.window import Window
from triton_sre.redact import redact
from triton_sre.triton.budget import BodyBudget, BudgetExceeded
from triton_sre.triton.client import FetchError, TritonClient
from triton_sre.triton.exposition import ExpositionError, Sample, decode_body, iter_parse

log = logging.getLogger(__name__)

# With the metrics on another listener, the HTTP API side is read on a second thread when the
# metrics fetch is still running at this share of the poll's deadline (it keeps the rest).
RESCUE_AFTER = 0.5


# The samples the LLM and capacity readers take, on the way through the one parse.
_SIDE_NAMES = LLM_SAMPLE_NAMES | CAPACITY_NAMES


def _counters_from_text(
    text: str,
    problems: Problems,
    llm: LLMCollector | None = None,
    watch: CapacityWatch | None = None,
    budget: BodyBudget | None = None,
) -> tuple[dict[ModelKey, CounterRow], frozenset[str]]:
    def side(sample: Any) -> None:
        if sample.name in LLM_SAMPLE_NAMES:
            llm.add(sample)  # type: ignore[union-attr]
        else:
            watch.offer(sample)  # type: ignore[union-attr]

    try:
        # folded slice by slice: only one slice's parse temporaries exist at a time
        samples = chain.from_iterable(iter_parse(text, keep=keep_family, budget=budget))
        models = budget.model_versions if budget is not None else None
        if llm is None or watch is None:
            return counters_from_samples(samples, problems, max_models=models)
        return counters_from_samples(samples, problems, side=side, side_names=_SIDE_NAMES, max_models=models)
    except ExpositionError as exc:
        raise FetchError(c.TARGET_METRICS, c.FAULT_PARSE, f"metrics: {exc}") from None


def _offer(samples: Iterable[Sample], llm: LLMCollector, watch: CapacityWatch) -> None:
    """Hand replayed side samples to their reader, as `_counters_from_text`'s `side` does."""
    for sample in samples:
        if sample.name in LLM_SAMPLE_NAMES:
            llm.add(sample)
        else:
            watch.offer(sample)


# A line of exposition text that is not blank and not a comment: a sample.
_SAMPLE_LINE = re.compile(r"^[ \t]*[^#\s]", re.MULTILINE)


def _loaded_models(index: list[IndexEntry] | None, stats: Any) -> int:
    """READY models in the index (the statistics' models when the index could not be read)."""
    if index is not None:
        return sum(entry.state == c.STATE_READY for entry in index)
    return len(stats) if stats else 0


class Exporter:
    """Polls one Triton and keeps the latest derivation; `registry` holds its self-metrics."""

    def __init__(
        self,
        settings: ExporterSettings,
        client: TritonClient | None = None,
        clock: Callable[[], float] = time.time,
        diagnose: Callable[[str], str] = diagnose_reason,
    ) -> None:
        self.settings = settings
        self.client = client or TritonClient(
            settings.triton_url,
            settings.resolved_metrics_url,
            timeout=settings.timeout,
            max_bytes=settings.max_response_bytes,
        )
        self._clock = clock
        self._timeline = Timeline()  # the window's own time: the wall clock, never going back
        self._diagnose = ReasonMemo(diagnose)  # each distinct reason once while the index shows it
        self._tracer = tracing.tracer()
        self._lock = threading.Lock()
        # What the derivations need from the window's polls (compact per-series totals, not whole
        # snapshots). Bounded: the window's polls plus a few for jitter, however long the process runs.
        self._window = Window(
            settings.window,
            slack=settings.interval / 2,
            max_polls=math.ceil(settings.window / settings.interval) + 2,
        )
        self._index_reader = IndexReader()
        # replays bodies of one skeleton from their values alone (exporter/replay.py)
        self._replayer = Replayer(keep=keep_family, side_names=_SIDE_NAMES, side_inert=CapacityWatch.inert)
        self._view = ExporterView(up=False, derivation=None)
        self._loads = LoadTimer()  # load times from repository-index transitions
        # /metrics rendered once per poll and served to every scraper: (poll number, body)
        self._polls = 0
        self._rendered: tuple[int, bytes] = (-1, b"")
        self.ready = threading.Event()

        self.registry = CollectorRegistry(auto_describe=True)
        self._poll_duration = Histogram(
            c.M_POLL_DURATION,
            "Seconds one poll of Triton took (all endpoints).",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self._errors = Counter(
            c.M_POLL_ERRORS,
            "Failed fetches from Triton by target and kind.",
            [c.L_TARGET, c.L_KIND],
            registry=self.registry,
        )
        for target in c.POLL_TARGETS:  # expose zeros so rate() works from the first failure
            for kind in c.FAULT_KINDS:
                self._errors.labels(target, kind)
        self._errors.labels(c.TARGET_EXPORTER, c.FAULT_INTERNAL)
        self._budgets = BudgetWatch(settings.metrics_budget, self.registry)
        self._inputs = InputWatch(self.registry)  # triton_sre_input_missing{check} (doctor's checks)
        self._release = ServerRelease(self.registry)  # triton_sre_triton_info{version}, from GET /v2
        self._restarts = RestartWatch(self.registry)  # triton_sre_triton_restarts_total
        # one idle connection per listener, found closed at the next poll by a new process (a client double
        # without URLs has none)
        self._idle = IdleConnections([getattr(self.client, a, "") for a in ("triton_url", "metrics_url")])
        # the configs of the index's models, fetched when one appears or changes (exporter/configs.py)
        self._configs = ConfigCache(self._tracer, self._inputs, self._record_error, self._decode)
        self._last_success = Gauge(
            c.M_LAST_SUCCESS, "Unix time of the last poll that read Triton's metrics.", registry=self.registry
        )
        Gauge(c.M_BUILD_INFO, "triton-sre version.", ["version"], registry=self.registry).labels(
            __version__
        ).set(1)

    # -- polling -------------------------------------------------------------------------------
    def poll_once(self) -> Snapshot | None:
        """Fetch everything once, append the snapshot and re-derive.

        Never raises: a failure inside the exporter's own code is counted as
        `{target="exporter",kind="internal"}`, `up` becomes 0 and the previous derivation is kept.
        Either way `/metrics` is rendered afresh (up, error counters, last success).
        """
        # A poll allocates ~10^5 short-lived acyclic objects (samples, JSON); letting the cyclic
        # GC scan the whole heap for them many times per poll costs more than the poll itself.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._poll()
        except Exception:  # a bug must not freeze /metrics at the last good poll
            log.exception("poll failed unexpectedly")
            self._errors.labels(c.TARGET_EXPORTER, c.FAULT_INTERNAL).inc()
            self._view = ExporterView(up=False, derivation=self._view.derivation)
            return None
        finally:
            self._polls += 1
            if was_enabled:
                gc.enable()

    def _poll(self) -> Snapshot:
        started = time.monotonic()
        with self._tracer.start_as_current_span("triton_sre.poll") as span:
            wall = self._clock()
            taken_at = self._timeline.at(wall, started)
            reader = self.client.until(started + self.client.timeout)  # the poll's calls share one deadline
            closed_by_server = self._idle.closed_by_server(started)  # before the fetches open new ones
            rescue = None
            if self.client.separate_ports:  # another listener: it may answer while the metrics hang
                rescue = Rescue(lambda: self._fetch_api(reader), after=self.client.timeout * RESCUE_AFTER)
            try:
                fetched = [self._fetch_metrics(reader, rescue)]  # the fold takes the body out of it
            finally:
                if rescue is not None:
                    rescue.join()  # never two polls' fetches at once, even after a bug in the fetch
            rescued = rescue is not None and rescue.rescued
            raw_index, stats = rescue.result() if rescue is not None and rescued else self._fetch_api(reader)
            index = self._decode(c.TARGET_INDEX, self._index_reader, raw_index)  # last list if unchanged
            del raw_index
            if index is not None:
                self._configs.refresh(index, reader)
            # The metrics are folded after the poll's fetches: their parse (and the replay plan's
            # learning), seconds at 10,000 models, spend none of the fetches' deadline.
            counters, gpus, llm, reading = self._read_metrics(fetched, _loaded_models(index, stats))
            snapshot = Snapshot(
                taken_at=taken_at,
                counters=counters,
                gpu_uuids=gpus,
                stats=stats,
                index=index,
                configs=self._configs.view,
                llm=llm,
                capacity=reading,
            )
            self._loads.observe(taken_at, index)
            energy = {uuid: joules for uuid, (joules,) in energy_rows(reading).items()} if reading else {}
            host_total = reading.host.get(c.NV_CPU_MEMORY_TOTAL_BYTES) if reading else None
            restarted = self._restarts.observe(counters, energy, index, host_total, closed_by_server)
            self._idle.renew(time.monotonic()) if counters is not None else self._idle.drop()
            if self._release.observe(counters is not None, self._read_release, restarted):
                self._inputs.version = self._release.version
            if counters is not None and stats is not None:
                self._inputs.update(
                    (model for model, _ in llm.rows) if llm else (),
                    {key[0]: s.memory_usage[0][0] for key, s in stats.items() if s.memory_usage},
                )
            with self._lock:
                self._window.add(snapshot)  # nothing older than the window is kept
            capacity = CapacityInputs(self.settings.capacity, self._loads.measured)
            self._diagnose.next_poll()
            derivation = derive_window(self._window, self.settings.pricing, self._diagnose, capacity)
            self._view = ExporterView(up=counters is not None, derivation=derivation)
            span.set_attribute("triton_sre.up", counters is not None)
            span.set_attribute("triton_sre.models", len(derivation.models))
        self._poll_duration.observe(time.monotonic() - started)
        if counters is not None:
            self._last_success.set(wall)
            self.ready.set()
        return snapshot

    def _call(self, target: str, span_name: str, fetch: Callable[[], Any]) -> Any:
        with self._tracer.start_as_current_span(span_name):
            try:
                return fetch()
            except FetchError as exc:
                self._record_error(exc.target, exc.kind, str(exc))
                tracing.mark_error(exc.kind)
                return None

    def _decode(self, target: str, decode: Callable[..., Any], payload: Any, *, in_call: bool = False) -> Any:
        """`decode(payload, problems)`, or None when it fails. Values the decoder rejected are one
        parse error of `target`; an exception (a shape no decoder expects) is one too, and only
        that target's part of the poll is lost. `in_call`: decoded inside its Triton call's span
        (a body read as it is decoded), which a failure marks; the poll's own span it never marks."""
        if payload is None:
            return None
        problems = Problems()
        try:
            result = decode(payload, problems)
        except FetchError as exc:
            self._record_error(exc.target, exc.kind, str(exc))
            if in_call:
                tracing.mark_error(exc.kind)
            return None
        except Exception as exc:  # RecursionError, OverflowError, ...: the payload, not the exporter
            self._record_error(target, c.FAULT_PARSE, f"cannot decode: {type(exc).__name__}: {exc}"[:300])
            if in_call:
                tracing.mark_error(c.FAULT_PARSE)
            return None
        if problems:
            self._record_error(
                target, c.FAULT_PARSE, f"{problems.count} value(s) ignored, first: {problems.first}"
            )
        return result

    def _fetch_metrics(self, reader: Any, rescue: Rescue | None) -> bytes | None:
        body = self._call(c.TARGET_METRICS, "GET /metrics", reader.metrics)
        if rescue is not None:
            rescue.keep()  # fetched (or failed) in time: the API side stays on this thread
        return body

    def _read_metrics(
        self, fetched: list[bytes | None], loaded: int = 0
    ) -> tuple[Any, Any, LLMData | None, CapacityReading | None]:
        """The fetched metrics body folded: replayed from its values when it has the plan's
        skeleton, else parsed (and offered to the replayer). The body is taken out of `fetched`, so
        no caller holds the bytes through the parse besides their text."""
        body = fetched.pop()
        if body is None:
            return None, None, None, None
        try:
            text = decode_body(body)
        except ExpositionError as exc:
            self._record_error(c.TARGET_METRICS, c.FAULT_PARSE, f"metrics: {exc}")
            return None, None, None, None
        del body  # the text is all we need; do not hold both through the parse
        if loaded and _SAMPLE_LINE.search(text) is None:
            # Triton writes every loaded model's request counters: no sample at all is not a Triton
            # with nothing to say but another answer (a proxy's, another service's). A failed read,
            # not a poll of zeros: `up` 0, the window's last good polls kept.
            what = "comments only" if text.strip() else "an empty body"
            self._record_error(
                c.TARGET_METRICS,
                c.FAULT_EMPTY,
                f"metrics: {what} while {loaded} model(s) are READY: not Triton's metrics endpoint",
            )
            return None, None, None, None
        # the LLM backends' samples (exporter/llm.py) and the capacity families
        # (exporter/capacity.py) are taken out on the way through the one parse
        llm = LLMCollector()
        watch = CapacityWatch()
        budget = self._budgets.body()
        # Triton repeats its lines at every scrape: a body with the last plan's skeleton is folded
        # from its values alone (exporter/replay.py); anything else takes the reference path.
        replayed = self._replayer.replay(text)
        if replayed is not None:
            counters, gpus, side = replayed
            return counters, gpus, *self._side_readings(side)
        self._inputs.saw_body(text)  # a replayed body has the same skeleton: the same families
        clean: list[bool] = []

        def tap(text: str, problems: Problems) -> tuple[dict[ModelKey, CounterRow], frozenset[str]]:
            try:
                result = _counters_from_text(text, problems, llm, watch, budget)
            except BudgetExceeded as exc:  # refused whole: a failed read, as an empty body is
                raise FetchError(c.TARGET_METRICS, c.FAULT_OVER_BUDGET, self._budgets.over(exc)) from None
            clean.append(not problems)
            return result

        decoded = self._decode(c.TARGET_METRICS, tap, text)
        if decoded is None:
            return None, None, None, None
        result = decoded[0], decoded[1], llm.result(), watch.reading()
        if clean == [True]:
            side = (result[2], result[3])
            self._replayer.learn(
                text, result[0], result[1], lambda samples: self._side_readings(samples) == side
            )
        return result

    def _side_readings(self, samples: Iterable[Sample]) -> tuple[LLMData, CapacityReading]:
        llm, watch = LLMCollector(), CapacityWatch()
        _offer(samples, llm, watch)
        return llm.result(), watch.reading()

    def _fetch_api(self, reader: Any) -> tuple[Any, Any]:
        """The repository index, fetched (decoded later, on the poll thread), and the statistics,
        decoded entry by entry as their body streams in, under the poll's deadline."""
        raw_index = self._call(c.TARGET_INDEX, "POST /v2/repository/index", reader.repository_index)
        # The body streams in while it is decoded: both inside the span, so a fault reading it marks the span.
        stats = self._call(
            c.TARGET_STATS,
            "GET /v2/models/stats",
            lambda: self._decode(c.TARGET_STATS, stats_from_json, reader.all_stats(), in_call=True),
        )
        return raw_index, stats

    def _read_release(self) -> Any:
        """Triton's server metadata (GET /v2, read-only), None when the read failed (counted). It follows
        the fold (a restart shows in the counters), which spends none of the fetches' deadline and takes
        seconds at fleet size: the read has a deadline of its own (it is rare: at start, after an outage or
        a restart)."""
        reader = self.client.until(time.monotonic() + self.client.timeout)
        return self._call(c.TARGET_SERVER, "GET /v2", reader.server_metadata)

    def _record_error(self, target: str, kind: str, message: str) -> None:
        self._errors.labels(target, kind).inc()
        log.warning("poll %s failed (%s): %s", target, kind, message)

    def run(self, stop: threading.Event) -> None:
        """Poll on a fixed schedule until `stop` is set; a slow poll skips missed ticks."""
        next_tick = time.monotonic()
        while not stop.is_set():
            self.poll_once()  # never raises: failures are counted and rendered
            next_tick += self.settings.interval
            now = time.monotonic()
            if next_tick < now:
                next_tick = now + self.settings.interval - (now - next_tick) % self.settings.interval
            stop.wait(max(0.0, next_tick - now))

    def close(self) -> None:
        """Close the idle connections to Triton (polling again opens new ones)."""
        self._idle.drop()

    # -- read side -----------------------------------------------------------------------------
    @property
    def derivation(self) -> Derivation | None:
        return self._view.derivation

    @property
    def up(self) -> bool:
        return self._view.up

    def metrics_text(self) -> bytes:
        """The exposition body; rendered once per poll, since nothing in it changes between polls."""
        with self._lock:
            polls, body = self._rendered
            if polls != self._polls:
                chunks = []
                for text in render_chunks(self._view):
                    try:
                        chunks.append(text.encode())
                    except UnicodeEncodeError:  # a lone surrogate that got past the decoders: never go dark
                        chunks.append(text.encode("utf-8", "replace"))
                chunks.append(generate_latest(self.registry))
                body = b"".join(chunks)
                del chunks
                self._rendered = (self._polls, body)
            return body

    def debug_models(self) -> dict[str, Any]:
        """The latest index with full reasons and diagnosed runbooks (read-only, for humans)."""
        d = self._view.derivation
        return {
            "up": self._view.up,
            "window_seconds": d.window_seconds if d else None,
            "models": [
                {
                    "model": s.model,
                    "version": s.version,
                    "state": s.state,
                    "runbook": s.runbook,
                    "reason": redact(s.reason, queries=False),  # a repository URL may carry a key
                }
                for s in (d.states if d else ())
            ],
        }
