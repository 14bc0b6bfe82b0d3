"""The one Prometheus HTTP API client (instant, vector and range queries, the loaded scrape interval).

Every query has a deadline for its whole answer and follows redirects on the same host only
(`httpclient`). A range longer than Prometheus answers at once is read in slices (`promcore.range_slices`,
the pure part: errors, range arithmetic, a series' checks), a range answer series by series as it is
decoded. Used by the bot (facts and chart),
the report (range queries, turned into pandas frames in report/prom.py), `rollout check` and the
demo's status table. An answer's `warnings` (possibly partial data) and `infos` are kept on the
client (`warnings`, `infos`, `heeding`), never dropped. Base install only: requests and pyyaml.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import requests
import yaml

from triton_sre.durations import DurationError, parse_duration
from triton_sre.httpclient import deadline, describe, new_session
from triton_sre.inputs import load_yaml
from triton_sre.promcore import (
    MAX_QUERY_CHARS,
    PromBudgetError,
    PromError,
    PromQueryTimeout,
    check_labels,
    check_series,
    json_kind,
    malformed,
    query_timeout_message,
    range_slices,
    series_points,
    step_param,
)
from triton_sre.redact import bounded, one_line, redact
from triton_sre.timeorder import CONFLICT, ordered_arrays, ordered_points

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "INFOS",
    "MAX_ANSWER_BYTES",
    "WARNINGS",
    "PromBudgetError",
    "PromError",
    "PromQueryTimeout",
    "Prometheus",
]

DEFAULT_TIMEOUT_S = 5.0
MAX_ERROR_CHARS = 300  # of Prometheus' own error text quoted in a PromError
MAX_ANSWER_BYTES = 256 * 2**20
"""Of one API answer's body: a bigger one (a query matching millions of series, 200,000 targets of
a proxy gone wrong) is refused with PromError before it is decoded (decoded JSON takes ~10x)."""
_CHUNK = 256 * 1024
_DECODER = json.JSONDecoder()
# a range answer as Prometheus writes it, up to its first series: read series by series (`_matrix`)
_MATRIX_HEAD = re.compile(
    r'\s*\{\s*"status"\s*:\s*"success"\s*,\s*"data"\s*:\s*\{\s*"resultType"\s*:\s*"matrix"\s*,'
    r'\s*"result"\s*:\s*\[\s*'
)
_AFTER_SERIES = re.compile(r"\s*([,\]])\s*")
MAX_WARNINGS = 20  # distinct warnings a client keeps (each cut to MAX_ERROR_CHARS)
WARNINGS, INFOS = "warnings", "infos"  # an answer's keys of possibly partial data and PromQL's annotations


PLAUSIBLE_CLOCK = (946_684_800.0, 7_258_118_400.0)  # 2000-01-01 and 2200-01-01 UTC, Unix seconds


class Prometheus:
    def __init__(
        self,
        url: str,
        timeout: float = DEFAULT_TIMEOUT_S,
        budget: float | None = None,
        max_bytes: int = MAX_ANSWER_BYTES,
    ) -> None:
        """`timeout`: seconds for each query's whole answer; `budget`: seconds for every query made
        through this client together (an answer that must come in time, the bot's slash command);
        `max_bytes`: the largest answer read."""
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.budget = budget
        self._ends = None if budget is None else time.monotonic() + budget
        self.max_bytes = max_bytes
        self.session = new_session()
        self.warnings: list[tuple[str, str]] = []
        """(query as sent, text) of each distinct warning an answer carried with `status: success` (a
        store not answering, a limit hit: the data read may be partial). Redacted, one line each; at
        most MAX_WARNINGS kept."""
        self.infos: list[tuple[str, str]] = []
        """The same of `infos` (PromQL's annotations, such as "metric might not be a counter" on a rate
        of a name without `_total`, as Triton's counters are): said, not a sign of partial data."""
        self._heeding = threading.local()  # this thread's `heeding` blocks' lists

    @contextmanager
    def heeding(self) -> Iterator[list[tuple[str, str]]]:
        """A list of the warnings (not infos) of the answers this thread reads within the block: a
        long-lived client's (the bot's) per notification, whatever `self.warnings` already holds."""
        found: list[tuple[str, str]] = []
        stack = self._heeding.__dict__.setdefault("stack", [])
        stack.append(found)
        try:
            yield found
        finally:
            stack.remove(found)

    @contextmanager
    def budgeted(self, seconds: float) -> Iterator[Prometheus]:
        """Within the block, every query of this client together has `seconds` (the bot's facts of one
        notification: a Prometheus that never answers costs one budget, not 5 s per query)."""
        saved = self.budget, self._ends
        self.budget, self._ends = seconds, time.monotonic() + seconds
        try:
            yield self
        finally:
            self.budget, self._ends = saved

    def _late(self) -> PromError:
        if self._ends is not None and time.monotonic() >= self._ends - 0.001:
            return PromBudgetError(
                f"Prometheus at {self.url} did not answer within {self.budget:g}s (all queries)"
            )
        return PromError(f"Prometheus at {self.url} did not answer within {self.timeout:g}s")

    def _fetch(self, path: str, params: dict[str, Any]) -> tuple[int, bytearray]:
        """HTTP status and body of one API call (at most `max_bytes`, within the deadline)."""
        timeout = self.timeout if self._ends is None else min(self.timeout, self._ends - time.monotonic())
        if timeout <= 0:
            raise self._late()
        response = None
        try:
            with deadline(timeout) as armed:  # the whole answer, not each read
                response = self.session.get(f"{self.url}{path}", params=params, timeout=timeout, stream=True)
                with response:
                    raw = self._read(response, path, params)
        except requests.RequestException as exc:
            if armed.expired or isinstance(exc, requests.Timeout):  # whichever clock ran out first
                raise self._late() from None
            if response is not None:  # it answered (status and headers), then the body broke off
                raise PromError(
                    f"Prometheus at {self.url} answered HTTP {response.status_code}, then {describe(exc)}"
                ) from None
            raise PromError(f"cannot reach Prometheus at {self.url}: {describe(exc)}") from None
        if armed.expired:
            raise self._late()
        return response.status_code, raw

    def _get(self, path: str, params: dict[str, Any]) -> Any:
        """The ``data`` of a successful API answer; PromError naming the URL or the query otherwise."""
        status, raw = self._fetch(path, params)
        return self._data(path, params, status, raw)

    def _data(self, path: str, params: dict[str, Any], status: int, raw: bytes | bytearray | str) -> Any:
        """The ``data`` of an API answer's body, decoded whole (PromError unless a success)."""
        try:
            body = json.loads(raw)
            del raw
        except ValueError:
            raise PromError(f"{self.url}: HTTP {status}, not a Prometheus API answer") from None
        except RecursionError:  # json's decoder recurses per level: '[' * 100000
            raise PromError(
                f"{self.url}{path}: the answer is nested too deeply to be a Prometheus API answer"
            ) from None
        query = bounded(params.get("query", ""), MAX_QUERY_CHARS)
        if status != 200 or not isinstance(body, dict) or body.get("status") != "success":
            error = body.get("error") if isinstance(body, dict) else None
            if isinstance(body, dict) and (
                body.get("errorType") == "timeout" or "context deadline exceeded" in str(error)
            ):  # its --query.timeout; 2.42 says `expanding series: context deadline exceeded` as `execution`
                said = one_line(str(error or "timeout"), MAX_ERROR_CHARS)
                raise PromQueryTimeout(query_timeout_message(query or path, self._query_timeout(), said))
            if error:
                raise PromError(f"{path} {query}: {one_line(error, MAX_ERROR_CHARS)}")
            # JSON but no API answer (`null`, a list, a string, an object without `status`): say what
            # came, not the bare HTTP status (`…: 200` read as a success)
            what = f"status {bounded(body.get('status'))}" if isinstance(body, dict) else json_kind(body)
            raise PromError(
                f"{self.url}{path} {query}: HTTP {status}, not a Prometheus API answer (JSON {what})"
            )
        data = body.get("data")
        if not isinstance(data, dict | list):  # `"data": null`, a number: no API answers that
            raise PromError(f"{path} {query}: unexpected answer from Prometheus: data is {bounded(data)}")
        self._heed(str(params.get("query", "")), body, data)
        return data

    def _query_timeout(self) -> str | None:
        """Prometheus' `--query.timeout` flag (`/api/v1/status/flags`), for a message; None when it will
        not say within the time left (another store, a proxy, the budget spent)."""
        try:
            status, raw = self._fetch("/api/v1/status/flags", {})
            limit = json.loads(raw).get("data", {}).get("query.timeout") if status == 200 else None
        except (PromError, ValueError, AttributeError):
            return None
        return one_line(limit, 40) if isinstance(limit, str) and limit else None

    def _heed(self, query: str, *objects: Any) -> None:
        """Keep the `warnings` and `infos` of an answer's body (and of its data, where a proxy may put
        them) in `self.warnings` and `self.infos`."""
        for holder in objects:
            for key in (WARNINGS, INFOS):
                texts = holder.get(key) if isinstance(holder, dict) else None
                for text in texts if isinstance(texts, list) else [texts] if texts else []:
                    self._said(key, (query, redact(one_line(str(text), MAX_ERROR_CHARS))))

    def _said(self, key: str, seen: tuple[str, str]) -> None:
        """One (query, redacted text) of an answer's `key` (`WARNINGS` or `INFOS`), kept; a subclass
        may keep more of it (the report: the sections the query feeds)."""
        kept = self.warnings if key == WARNINGS else self.infos
        if seen not in kept and len(kept) < MAX_WARNINGS:
            kept.append(seen)
        for found in getattr(self._heeding, "stack", []) if key == WARNINGS else []:
            if seen not in found and len(found) < MAX_WARNINGS:
                found.append(seen)

    def _read(self, response: requests.Response, path: str, params: dict[str, Any]) -> bytearray:
        """The whole body, at most `max_bytes` of it: a larger answer is PromError, never held."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise self._too_large(path, params, f"{int(declared):,} bytes, more")
        raw = bytearray()
        for chunk in response.iter_content(_CHUNK):
            raw += chunk
            if len(raw) > self.max_bytes:
                raise self._too_large(path, params, "more")
        return raw

    def _too_large(self, path: str, params: dict[str, Any], what: str) -> PromError:
        query = bounded(params.get("query", ""), MAX_QUERY_CHARS)
        return PromError(
            f"{path} {query}: the answer is {what} than the {self.max_bytes:,} bytes this client reads: "
            "ask for fewer series or a coarser step"
        )

    def api(self, path: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``data`` object of a GET API call answering one, e.g. ``/api/v1/targets`` (doctor):
        PromError when it is not an object, so callers read it with ``.get`` safely."""
        data = self._get(path, params or {})
        if not isinstance(data, dict):
            raise PromError(
                f"{path}: unexpected answer from Prometheus: data is {bounded(data)}, not an object"
            )
        return data

    def instant(self, expr: str, at: float | None = None) -> float | None:
        """The first sample of an instant query, at Unix time `at` or now (None when the result is
        empty or not finite)."""
        for _, value in self._samples(expr, keep_non_finite=True, at=at)[:1]:
            return value if math.isfinite(value) else None
        return None

    def vector(self, expr: str, at: float | None = None) -> list[tuple[dict[str, str], float]]:
        """Every (labels, value) of an instant query at Unix time `at` or now; non-finite values are
        left out."""
        return self._samples(expr, keep_non_finite=False, at=at)

    def _samples(
        self, expr: str, keep_non_finite: bool, at: float | None = None
    ) -> list[tuple[dict[str, str], float]]:
        params = {"query": expr} if at is None else {"query": expr, "time": f"{at:.3f}"}
        data = self._get("/api/v1/query", params)
        result = data.get("result", []) if isinstance(data, dict) else None
        if not isinstance(result, list):
            raise malformed(expr, "the result is not a list")
        out = []
        for item in result:
            try:
                value = float(item["value"][1])
                labels = dict(item.get("metric") or {})
            except (KeyError, IndexError, TypeError, ValueError, AttributeError):
                raise malformed(expr, f"a sample is not [time, value]: {str(item)[:80]}") from None
            check_labels(expr, labels)
            if keep_non_finite or math.isfinite(value):
                out.append((labels, value))
        return out

    def _matrix(self, expr: str, start: float, end: float, step: float) -> Iterator[Any]:
        """Each series of a range answer (unchecked). An answer that begins as Prometheus writes one
        is decoded one series at a time (the whole answer decoded at once takes ~10x its text: 200,000
        series held 1.5 GB), any other from the whole body; the same PromError either way."""
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": step_param(step)}
        status, raw = self._fetch("/api/v1/query_range", params)
        try:
            text = raw.decode("utf-8") if status == 200 else ""
        except UnicodeDecodeError:
            text = ""
        head = _MATRIX_HEAD.match(text)
        if head is None:
            yield from self._whole_matrix(expr, self._data("/api/v1/query_range", params, status, raw))
            return
        del raw
        at = head.end()
        if text.startswith("]", at):
            at += 1
        else:
            while True:
                try:
                    series, at = _DECODER.raw_decode(text, at)
                except (ValueError, RecursionError):
                    raise self._broken(params, status, text) from None
                yield series
                after = _AFTER_SERIES.match(text, at)
                if after is None:
                    raise self._broken(params, status, text)
                at = after.end()
                if after.group(1) == "]":
                    break
        try:  # after the result: the data object's end and the body's, warnings and infos among them
            rest = _DECODER.decode('{"data": {"result": []' + text[at:])
        except (ValueError, RecursionError):
            raise self._broken(params, status, text) from None
        if not isinstance(rest, dict) or not isinstance(rest.get("data"), dict):
            raise self._broken(params, status, text)
        self._heed(expr, rest, rest["data"])

    def _broken(self, params: dict[str, Any], status: int, text: str) -> PromError:
        """The error of a range answer the series-by-series reading could not go through: the one the
        whole body's decoding gives (`_data`), else that it is no API answer."""
        try:
            self._data("/api/v1/query_range", params, status, text)
        except PromError as exc:
            return exc
        return PromError(f"{self.url}: HTTP {status}, not a Prometheus API answer")

    @staticmethod
    def _whole_matrix(expr: str, data: Any) -> list[Any]:
        kind = data.get("resultType") if isinstance(data, dict) else type(data).__name__
        result = data.get("result") if isinstance(data, dict) else None
        if kind != "matrix":
            raise malformed(expr, f"expected a matrix, got {kind!r}")
        if not isinstance(result, list):
            raise malformed(expr, f"the result is not a list: {bounded(result)}")
        return result

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        """The raw matrix: one ``{"metric": labels, "values": [[ts, "value"], ...]}`` per series, its shape
        checked once here (every time and value a number), so callers convert without checking again.

        Any range: a range of more than PROMETHEUS_MAX_POINTS points per series is read in slices
        (`range_slices`) and each series' slices joined by label set, in the order series are first seen
        (a series absent from some slices has only the points it has). A label set a slice answers twice
        (not Prometheus: a proxy merging two sources) stays two series, the n-th copy joined to the n-th.
        Each series' samples in time order, one per time (`timeorder`: what a proxy answers otherwise)."""
        joined: dict[tuple[tuple[tuple[str, str], ...], int], dict[str, Any]] = {}
        for first, last in range_slices(start, end, step):
            copies: dict[tuple[tuple[str, str], ...], int] = {}
            for series in self._matrix(expr, first, last, step):
                check_series(expr, series)
                labels = tuple(sorted((str(k), str(v)) for k, v in series["metric"].items()))
                copies[labels] = copies.get(labels, -1) + 1
                key = (labels, copies[labels])
                into = joined.get(key)
                if into is None:
                    joined[key] = series
                else:
                    into["values"] += series["values"]
        for series in joined.values():  # in time order, one sample per time (`timeorder`)
            series["values"], said = ordered_points(series["values"])
            self._note_order(expr, said)
        return list(joined.values())

    def _note_order(self, expr: str, said: str | None) -> None:
        """Keep what putting a series' samples in time order did: a conflict as a warning (the figures
        rest on one of two sources), a plain reordering as an info."""
        if said is not None:
            self._said(WARNINGS if said == CONFLICT else INFOS, (expr, said))

    def iter_range_arrays(
        self, expr: str, start: float, end: float, step: float
    ) -> Iterator[tuple[dict[str, str], np.ndarray, np.ndarray]]:
        """The matrix of ONE range query (at most PROMETHEUS_MAX_POINTS points: the report reads its
        `range_slices` with this) as (labels, timestamps, values) per series, checked as `query_range`
        checks it (the same PromError), converted by numpy in one pass per series as it is decoded: the
        per-point check in Python was a third of the report's reading time at 20,000 series."""
        import numpy as np

        for series in self._matrix(expr, start, end, step):
            points = series_points(series)
            if points is None:  # a shape or value numpy cannot vouch for: the exact check says what
                check_series(expr, series)
                points = np.array(series["values"], dtype=np.float64).reshape(-1, 2)
            labels = {str(k): str(v) for k, v in series["metric"].items()}
            stamps, values, said = ordered_arrays(points[:, 0], points[:, 1])
            self._note_order(expr, said)
            yield labels, np.ascontiguousarray(stamps), np.ascontiguousarray(values)

    def now(self) -> float:
        """Prometheus' own clock (`time()` evaluated there): a window "up to now" must end at the data's
        now, not at this machine's clock (skewed, a window would ask for samples not there yet or judge
        old ones). This machine's clock when Prometheus gives none; a time no clock reads (before 2000,
        after 2200: a proxy's or a stand-in's answer) is a PromError, not a window of another era."""
        value = self.instant("vector(time())")
        if value is None:
            return time.time()
        if not PLAUSIBLE_CLOCK[0] <= value <= PLAUSIBLE_CLOCK[1]:
            raise PromError(
                f"Prometheus at {self.url} answered time() = {value!r}, not a clock's reading (Unix seconds)"
            )
        return value

    def range(self, expr: str, seconds: float, step: float) -> list[dict[str, Any]]:
        """`query_range` over the last `seconds` up to now by Prometheus' clock (`now`; the bot's chart):
        any length, read in slices. A machine minutes ahead charted the last sample repeated minutes past
        it (Prometheus' 5-minute lookback) and lost as many minutes at the start."""
        end = self.now()
        return self.query_range(expr, end - seconds, end, step)

    def scrape_interval(self, job: str) -> float | None:
        """Seconds between scrapes of `job` (else the global interval) from Prometheus' loaded
        configuration (/api/v1/status/config); None when Prometheus does not say. A configuration of
        another shape (`yaml` not text, `global` or `scrape_configs` not what Prometheus writes: a
        proxy's or another server's answer) says nothing, never an error."""
        try:
            text = self._get("/api/v1/status/config", {})["yaml"]
            config = load_yaml(text) if isinstance(text, str) else None  # depth bounded
        except (PromError, KeyError, TypeError, yaml.YAMLError):
            return None
        if not isinstance(config, dict):
            return None
        settings = config.get("global")
        interval = settings.get("scrape_interval", "1m") if isinstance(settings, dict) else "1m"
        scrapes = config.get("scrape_configs")
        for scrape in scrapes if isinstance(scrapes, list) else []:
            if isinstance(scrape, dict) and scrape.get("job_name") == job and scrape.get("scrape_interval"):
                interval = scrape["scrape_interval"]
        try:
            return parse_duration(str(interval), "scrape_interval")
        except DurationError:
            return None
