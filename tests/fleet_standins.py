"""Loopback stand-ins for a fleet-sized Triton and Prometheus (`doctor` and `report` at scale).

No real Triton here can hold 20,000 models, nor a real Prometheus 200,000 series in a test's time,
so these answer in the shapes the real servers use (the Triton API's JSON as 2.51 writes it, the
`/metrics` body from `synthetic.triton_metrics_payload`, Prometheus' API envelope):

- `FleetTriton(models)`: `GET /v2`, `/metrics`, `POST /v2/repository/index` (every model READY),
  `GET /v2/models/stats` (one entry per model, every `memory_every`-th with a GPU memory_usage),
  `GET /v2/models/<m>/config` (every `llm_every`-th model a vLLM one, every `cache_every`-th with the
  response cache on). HTTP/1.1 keep-alive, as Triton's server; `requests` counts the calls per path
  kind, `connections` the connections opened, and `config_delay` slows each config answer.
- `FleetPrometheus(targets)`: `/api/v1/targets` with that many active targets (job `triton` then
  `exporter`, every `down_every`-th down), `/api/v1/rules`, `/api/v1/alertmanagers`,
  `/api/v1/status/config`; `targets_body` replaces the targets answer (wrong shapes). With `models`
  and `tritons`, the report's range queries and series counts; `families=True` adds the families a
  24.11+ LLM fleet has beside them: the first-response histogram's buckets (`BUCKETS` of them per
  model and Triton), the vLLM token counters and TensorRT-LLM's token-length sums (every model and
  Triton), the exporter's capacity families (per model, per GPU: `gpus` per Triton, per exporter)
  and the TTFT p99 the report asks at the range's end (one series per model).

Each can run in this process (a daemon thread) or, for the bench, in a child process (`spawn`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from synthetic import triton_metrics_payload

from triton_sre import conventions as c

VERSION = "2.51.0"
_CONFIG = re.compile(r"/v2/models/([^/]+)(?:/versions/[^/]+)?/config")


def model_name(index: int) -> str:
    """The name synthetic.triton_metrics_payload gives model `index`."""
    return f"model_{index:04d}"


class _Server:
    """A threading HTTP server on 127.0.0.1 whose handler calls `self.answer(path, method)`."""

    def __init__(self) -> None:
        owner = self
        self.requests: Counter[str] = Counter()
        self.connections = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Triton's and Prometheus' servers
            disable_nagle_algorithm = True  # headers and body are two writes: no delayed-ACK stall

            def log_message(self, *args: object) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with owner._lock:
                    owner.connections += 1

            def do_GET(self) -> None:
                owner._reply(self, "GET")

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner._reply(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    def answer(self, path: str, method: str, query: str = "") -> tuple[int, bytes, str]:
        raise NotImplementedError

    def _reply(self, h: BaseHTTPRequestHandler, method: str) -> None:
        path, _, query = h.path.partition("?")
        with self._lock:
            self.requests[_CONFIG.sub("/v2/models/*/config", path)] += 1
        status, body, ctype = self.answer(path, method, query)
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            h.wfile.write(body)
        except OSError:
            h.close_connection = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def start(self) -> Any:
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _json(data: Any) -> tuple[int, bytes, str]:
    return 200, json.dumps(data).encode(), "application/json"


class FleetTriton(_Server):
    def __init__(
        self,
        models: int,
        *,
        summaries: bool = False,
        llm_every: int = 1000,
        cache_every: int = 0,
        memory_every: int = 7,
        config_delay: float = 0.0,
    ) -> None:
        super().__init__()
        self.models = models
        self.llm_every = llm_every
        self.cache_every = cache_every
        self.config_delay = config_delay
        self.metrics = triton_metrics_payload(models, 1, summaries=summaries).encode()
        names = [model_name(i) for i in range(models)]
        self.index = json.dumps([{"name": n, "version": "1", "state": c.STATE_READY} for n in names]).encode()
        stats = []
        for i, name in enumerate(names):
            entry: dict[str, Any] = {"name": name, "version": "1", "inference_count": i, "execution_count": i}
            if memory_every and i % memory_every == 0:
                entry[c.STATS_MEMORY_USAGE] = [{"type": c.MEMORY_TYPE_GPU, "id": 0, "byte_size": 1 << 20}]
            stats.append(entry)
        self.stats = json.dumps({"model_stats": stats}).encode()
        self._number = {name: i for i, name in enumerate(names)}

    def config(self, index: int) -> dict[str, Any]:
        name = model_name(index)
        config: dict[str, Any] = {"name": name, "backend": "python", "max_batch_size": 8}
        if self.llm_every and index % self.llm_every == 0:
            config["backend"] = c.BACKEND_VLLM
            config["model_transaction_policy"] = {"decoupled": True}
        if self.cache_every and index % self.cache_every == 0:
            config["response_cache"] = {"enable": True}
        return config

    def answer(self, path: str, method: str, query: str = "") -> tuple[int, bytes, str]:
        if path == c.PATH_METRICS:
            return 200, self.metrics, "text/plain; version=0.0.4"
        if path == "/v2":
            return _json({"name": "triton", "version": VERSION, "extensions": []})
        if path == "/v2/repository/index" and method == "POST":
            return 200, self.index, "application/json"
        if path == "/v2/models/stats":
            return 200, self.stats, "application/json"
        found = _CONFIG.fullmatch(path)
        if found and found[1] in self._number:
            if self.config_delay:
                time.sleep(self.config_delay)
            return _json(self.config(self._number[found[1]]))
        return 404, b'{"error":"not found"}', "application/json"


_PER_MODEL = frozenset((*c.PER_MODEL_COUNTERS, c.M_COST_PER_HOUR, c.M_BATCHING_RATIO, c.M_BATCH_FILL_RATIO))
_PER_INSTANCE = frozenset((c.M_SERVER_COST_PER_HOUR, c.M_IDLE_COST_FRACTION))
BUCKETS = ("100", "500", "2000", "5000", "+Inf")  # Triton's default first-response buckets (ms)
_HISTOGRAM = f"{c.NV_FIRST_RESPONSE_HISTOGRAM_MS}_bucket"
_TOKENS = frozenset(
    (
        c.VLLM_PROMPT_TOKENS,
        c.VLLM_GENERATION_TOKENS,
        f"{c.TRT_INPUT_TOKEN_LEN}_sum",
        f"{c.TRT_OUTPUT_TOKEN_LEN}_sum",
    )
)
_COUNTERS = frozenset((*c.PER_MODEL_COUNTERS, _HISTOGRAM, *_TOKENS))
_CAPACITY_PER_MODEL = frozenset((c.M_MODEL_MEMORY_BYTES, c.M_MODEL_LOAD_SECONDS))
_CAPACITY_PER_GPU = frozenset(
    (
        c.M_GPU_MEMORY_HEADROOM_BYTES,
        c.M_GPU_LARGEST_MODEL_BYTES,
        c.M_GPU_MODELS_THAT_FIT,
        c.M_ENERGY_COST_PER_HOUR,
    )
)
_CAPACITY_PER_EXPORTER = frozenset(
    (c.M_HOST_MEMORY_HEADROOM_BYTES, c.M_HOST_MODELS_THAT_FIT, c.M_GPU_METRICS_MISSING)
)
_NAME = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)")
_AGGREGATION = re.compile(r"(sum|avg|max|min|count) by \(([^)]*)\) \(")


def _values(stamps: list[float], counter: bool, scale: int = 1) -> str:
    """One series' `values` as JSON text, a function of the timestamp alone (a counter grows 0.5/s
    and resets every 2 h): any slicing of a range reads the same series."""
    return json.dumps([[ts, f"{(ts % 7200) * 0.5 if counter else 0.25 * scale:g}"] for ts in stamps])


class FleetPrometheus(_Server):
    def __init__(
        self,
        targets: int,
        *,
        down_every: int = 0,
        targets_body: bytes | Callable[[], bytes] | None = None,
        rules: list[dict[str, Any]] | None = None,
        models: int = 0,
        tritons: int = 1,
        families: bool = False,
        gpus: int = 8,
    ) -> None:
        super().__init__()
        self.models = models
        self.tritons = tritons
        self.families = families
        self.gpus = gpus
        self.targets_body = targets_body
        self.rules = rules or []
        active = []
        for i in range(targets):
            job = c.DEFAULT_TRITON_JOB if i % 2 == 0 else c.DEFAULT_EXPORTER_JOB
            down = bool(down_every) and i % down_every == 0
            active.append(
                {
                    "discoveredLabels": {"__address__": f"host-{i}:8002"},
                    "labels": {"instance": f"host-{i}:8002", c.LABEL_JOB: job},
                    "scrapePool": job,
                    "scrapeUrl": f"http://host-{i}:8002/metrics",
                    "lastError": "connection refused" if down else "",
                    "health": "down" if down else "up",
                }
            )
        self._targets = json.dumps(
            {"status": "success", "data": {"activeTargets": active, "droppedTargets": []}}
        ).encode()

    def _series(self, name: str) -> list[dict[str, str]]:
        """The labels of every series of family `name` (none for a family it does not serve)."""
        if self.families:
            extra = self._family_series(name)
            if extra is not None:
                return extra
        if name in _PER_MODEL or name == c.NV_REQUEST_SUMMARY_US:
            quantiles = c.LATENCY_QUANTILES if name == c.NV_REQUEST_SUMMARY_US else (None,)
            out = []
            for m in range(self.models):
                for t in range(self.tritons):
                    for q in quantiles:
                        labels = {"__name__": name, c.LABEL_MODEL: model_name(m), c.LABEL_VERSION: "1"}
                        labels["instance"] = f"triton-{t}:8002"
                        if q is not None:
                            labels[c.LABEL_QUANTILE] = q
                        if name == c.M_COST_PER_HOUR:
                            labels[c.L_CURRENCY] = "USD"
                        out.append(labels)
            return out
        if name in _PER_INSTANCE:
            return [
                {"__name__": name, "instance": f"exporter-{t}:8003", c.L_CURRENCY: "USD"}
                for t in range(self.tritons)
            ]
        return []

    def _family_series(self, name: str) -> list[dict[str, str]] | None:
        """The series of the histogram, token and capacity families (`families=True`); None for others."""
        if name in _CAPACITY_PER_EXPORTER:
            return [{"__name__": name, "instance": f"exporter-{t}:8003"} for t in range(self.tritons)]
        if name in _CAPACITY_PER_GPU:
            out = []
            for t in range(self.tritons):
                for g in range(self.gpus):
                    labels = {"__name__": name, c.LABEL_GPU_UUID: f"GPU-{t:04d}-{g}"}
                    labels["instance"] = f"exporter-{t}:8003"
                    if name == c.M_ENERGY_COST_PER_HOUR:
                        labels[c.L_CURRENCY] = "USD"
                    out.append(labels)
            return out
        if name not in _CAPACITY_PER_MODEL and name not in _TOKENS and name != _HISTOGRAM:
            return None
        buckets = BUCKETS if name == _HISTOGRAM else (None,)
        out = []
        for m in range(self.models):
            for t in range(self.tritons):
                for le in buckets:
                    labels = {"__name__": name, c.LABEL_MODEL: model_name(m), c.LABEL_VERSION: "1"}
                    if name in _CAPACITY_PER_MODEL:
                        labels["instance"] = f"exporter-{t}:8003"
                    else:
                        labels["instance"] = f"triton-{t}:8002"
                    if name == c.M_MODEL_MEMORY_BYTES:
                        labels[c.L_KIND] = "gpu"
                        labels[c.L_DEVICE] = f"GPU-{t:04d}-{m % self.gpus}"
                    if le is not None:
                        labels[c.LABEL_LE] = le
                    out.append(labels)
        return out

    def _groups(self, query: str) -> tuple[str, list[dict[str, str]], int]:
        """(family, labels of each series, how many raw series each stands for) of a range query:
        a family's name, or an aggregation `OP by (labels) (...)` of it as the report sends."""
        aggregated = _AGGREGATION.match(query)
        name = _NAME.search(query[aggregated.end() :]) if aggregated else _NAME.match(query)
        family = name[1] if name else ""
        series = self._series(family)
        if not aggregated:
            return family, series, 1
        keep = [label.strip() for label in aggregated[2].split(",")]
        groups: dict[tuple[str, ...], dict[str, str]] = {}
        for labels in series:
            key = tuple(labels.get(k, "") for k in keep)
            groups.setdefault(key, {k: labels[k] for k in keep if k in labels})
        return family, list(groups.values()), len(series) // max(1, len(groups))

    def range_answer(self, query: str, stamps: list[float]) -> bytes:
        """`query_range` for the report's queries: each per-model family has `models` x `tritons`
        series (the latency summary x its quantiles), the server cost and idle share one per
        Triton, the throughput chart's `sum by (model)` and the TTFT p99 one per model; an
        aggregation `sum`, `avg` or `max by (labels)` of a family one series per group; anything
        else none."""
        parts: list[str] = []
        ttft = self.families and query.startswith("histogram_quantile(")  # the TTFT p99, per model
        if ttft or query.startswith("(sum by"):
            values = _values(stamps, counter=False)
            parts = [
                f'{{"metric":{{"model":"{model_name(m)}"}},"values":{values}}}' for m in range(self.models)
            ]
        else:
            family, series, each = self._groups(query)
            aggregated = _AGGREGATION.match(query)
            op = aggregated[1] if aggregated else None
            if op in (None, "sum", "avg", "max") and series:
                scale = each if op == "sum" else 1
                values = _values(stamps, counter=family in _COUNTERS, scale=scale)
                parts = [f'{{"metric":{json.dumps(labels)},"values":{values}}}' for labels in series]
        return (
            '{"status":"success","data":{"resultType":"matrix","result":[' + ",".join(parts) + "]}}"
        ).encode()

    def count_answer(self, query: str) -> bytes:
        """An instant `count(...)` of a query's series (`queries.count_expr`): empty when none."""
        inner = query[len("count(") : -1]
        _, series, _ = self._groups(inner.replace("last_over_time(", "", 1))
        result = [{"metric": {}, "value": [0, str(len(series))]}] if series else []
        return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()

    def answer(self, path: str, method: str, query: str = "") -> tuple[int, bytes, str]:
        if path == "/api/v1/query_range":
            params = {k: v[0] for k, v in parse_qs(query).items()}
            start, end, step = (float(params[k]) for k in ("start", "end", "step"))
            stamps = [start + i * step for i in range(int((end - start) // step) + 1)]
            return 200, self.range_answer(params["query"], stamps), "application/json"
        if path == "/api/v1/query":
            params = {k: v[0] for k, v in parse_qs(query).items()}
            if params.get("query", "").startswith("count("):
                return 200, self.count_answer(params["query"]), "application/json"
            return _json({"status": "success", "data": {"resultType": "vector", "result": []}})
        if path == "/api/v1/targets":
            body = self.targets_body() if callable(self.targets_body) else self.targets_body
            return 200, body if body is not None else self._targets, "application/json"
        if path == "/api/v1/rules":
            return _json({"status": "success", "data": {"groups": self.rules}})
        if path == "/api/v1/alertmanagers":
            managers = [{"url": "http://alertmanager:9093/api/v2/alerts"}]
            return _json({"status": "success", "data": {"activeAlertmanagers": managers}})
        if path == "/api/v1/status/config":
            return _json({"status": "success", "data": {"yaml": "global:\n  scrape_interval: 15s\n"}})
        return 404, b'{"status":"error","error":"not found"}', "application/json"
