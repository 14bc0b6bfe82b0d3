"""A Triton stand-in on loopback that serves one scraped `/metrics` body (tests/data/scrapes/).

The scraped files are bodies real users posted (issues, docs, READMEs); no real Triton here can
produce them (old releases, GPUs, TensorRT-LLM). Each file starts with a header (source URL,
release, notes) that ends at the first empty line; only what follows is served, byte for byte.

The HTTP API around the body is either derived from it (`api="derived"`: the repository index
lists every model/version the body names as READY, `/v2/models/stats` carries the body's
inference and execution counts and its compute durations as one batch-size-1 entry, or the
statistics the same source posted when a test passes them, configs
answer `max_batch_size: 0` plus what a test passes from the source's own config files) or
absent (`api="404"`: every API path answers 404, as behind a proxy that only forwards the
metrics port).
`advance(factor)` multiplies every counter value in the body (families typed counter,
histogram or summary `_count`/`_sum`/`_bucket`, and Triton's per-model counters when a docs
excerpt leaves out TYPE) so a second poll sees counters that moved.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from faultproxy import reply

from triton_sre import conventions as c

SCRAPES = Path(__file__).parent / "data" / "scrapes"
_SAMPLE = re.compile(rb"^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?[ \t]+(\S+)(.*)$")
_LABEL = re.compile(rb'(\w+)="((?:[^"\\]|\\.)*)"')
_TYPE = re.compile(rb"^#[ \t]+TYPE[ \t]+(\S+)[ \t]+(\w+)")


def scrape_files() -> list[Path]:
    return sorted(SCRAPES.glob("*.txt"))


def split_scrape(path: Path) -> tuple[str, bytes]:
    """(header text, body bytes): the header ends at the first empty line."""
    raw = path.read_bytes()
    header, sep, body = raw.partition(b"\n\n")
    assert sep, f"{path.name}: no empty line after the source header"
    assert header.startswith(b"# source: http"), f"{path.name}: the header must name its source first"
    return header.decode(), body


def _counter_names(body: bytes) -> set[bytes]:
    names = {name.encode() for name in c.PER_MODEL_COUNTERS}
    for line in body.splitlines():
        found = _TYPE.match(line)
        if found and found[2] == b"counter":
            names.add(found[1])
        elif found and found[2] in (b"histogram", b"summary"):
            names.update(found[1] + suffix for suffix in (b"_count", b"_sum", b"_bucket"))
    return names


def scaled(body: bytes, factor: float) -> bytes:
    """`body` with every counter value multiplied by `factor` (line endings kept)."""
    counters = _counter_names(body)
    out = []
    for line in body.split(b"\n"):
        end = b"\r" if line.endswith(b"\r") else b""
        found = _SAMPLE.match(line[: len(line) - len(end)])
        if found and found[1] in counters:
            try:
                value = float(found[3])
            except ValueError:
                out.append(line)
                continue
            line = found[1] + (found[2] or b"") + b" " + repr(value * factor).encode() + found[4] + end
        out.append(line)
    return b"\n".join(out)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], text)


def series(body: bytes) -> dict[tuple[str, str], dict[str, float]]:
    """(model, version) -> {per-model family: value} for the body's complete sample lines."""
    found: dict[tuple[str, str], dict[str, float]] = {}
    for line in body.splitlines():
        match = _SAMPLE.match(line.rstrip(b"\r"))
        if not match or not match[2]:
            continue
        labels = {k.decode(): _unescape(v.decode()) for k, v in _LABEL.findall(match[2])}
        if c.LABEL_MODEL not in labels:
            continue
        key = (labels[c.LABEL_MODEL], labels.get(c.LABEL_VERSION, ""))
        row = found.setdefault(key, {})
        with contextlib.suppress(ValueError):  # a value such as NaN written oddly: not a count
            row[match[1].decode()] = row.get(match[1].decode(), 0.0) + float(match[3])
    return found


def _batch_stats(row: dict[str, float]) -> list[dict]:
    """One batch-size-1 entry carrying the body's compute durations (µs → ns), when it has any."""
    stages = {
        "compute_input": c.NV_COMPUTE_INPUT_DURATION_US,
        "compute_infer": c.NV_COMPUTE_INFER_DURATION_US,
        "compute_output": c.NV_COMPUTE_OUTPUT_DURATION_US,
    }
    if not any(family in row for family in stages.values()):
        return []
    count = int(row.get(c.NV_EXEC_COUNT, 0))
    entry: dict = {"batch_size": 1}
    for stage, family in stages.items():
        entry[stage] = {"count": count, "ns": int(row.get(family, 0) * 1000)}
    return [entry]


class ScrapeTriton:
    """Serves `body` as Triton's /metrics; the API derived from it or answering 404."""

    def __init__(
        self,
        body: bytes,
        api: str = "derived",
        configs: dict[str, dict] | None = None,
        stats: dict | None = None,
    ) -> None:
        self.body = body
        self.api = api
        self.configs = configs or {}  # model -> config fields the body cannot tell (platform, ...)
        self.stats = stats  # the source's own /v2/models/stats answer, served instead of one derived
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner._answer(self)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                owner._answer(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def advance(self, factor: float) -> None:
        self.body = scaled(self.body, factor)

    def _api(self, path: str) -> object | None:
        models = series(self.body)
        if path == "/v2/repository/index":
            return [{"name": m, "version": v, "state": "READY"} for m, v in sorted(models)]
        if path == "/v2/models/stats" and self.stats is not None:
            return self.stats
        if path == "/v2/models/stats":
            return {
                "model_stats": [
                    {
                        "name": m,
                        "version": v,
                        "inference_count": int(row.get(c.NV_INFERENCE_COUNT, 0)),
                        "execution_count": int(row.get(c.NV_EXEC_COUNT, 0)),
                        "batch_stats": _batch_stats(row),
                    }
                    for (m, v), row in sorted(models.items())
                ]
            }
        match = re.fullmatch(r"/v2/models/([^/]+)(?:/versions/[^/]+)?/config", path)
        if match:
            return {"name": match[1], "max_batch_size": 0, **self.configs.get(match[1], {})}
        return None

    def _answer(self, h: BaseHTTPRequestHandler) -> None:
        if h.path == c.PATH_METRICS:
            status, body, ctype = 200, self.body, "text/plain; version=0.0.4"
        else:
            data = self._api(h.path) if self.api == "derived" else None
            status = 404 if data is None else 200
            body = json.dumps(data if data is not None else {"error": "not found"}).encode()
            ctype = "application/json"
        reply(h, status, body, ctype)

    def __enter__(self) -> ScrapeTriton:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
