"""`/v2/models/stats` read as a stream: entries decoded as their bytes arrive, `max_bytes` capping
one entry instead of the body (10,000 models × 3 versions answer 39 MB), the fetch's faults kept.

The decoder (`triton/statsbody.py`) on its own, then the client against a loopback server."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise

import pytest

from triton_sre import conventions as c
from triton_sre import httpclient
from triton_sre.triton.client import STATS_BODY_SHARES, FetchError, TritonClient
from triton_sre.triton.statsbody import StatsBodyError, StatsDecoder

SMALL_CAP = 4096


def entry(i: int, pad: int = 40) -> dict:
    return {
        "name": f"model_{i:04d}",
        "version": str(1 + i % 3),
        "inference_count": i * 7,
        c.STATS_INFERENCE_STATS: {"success": {"count": i, "ns": i * 1000}},
        "note": "é" * (i % 3) + "x" * pad,
    }


def stats_body(entries: list[dict], indent: int | None = None) -> bytes:
    return json.dumps({"model_stats": entries}, indent=indent, ensure_ascii=False).encode()


def decode_in_pieces(body: bytes, cuts: list[int], max_bytes: int | None = None) -> list:
    decoder = StatsDecoder(max_bytes)
    bounds = [0, *cuts, len(body)]
    return list(decoder.entries(body[a:b] for a, b in pairwise(bounds)))


# -- the decoder, without HTTP -------------------------------------------------------------------
SMALL_BODIES = [
    stats_body([entry(1, 2), entry(2, 0), [1, 2], 17, "s", None]),
    stats_body([entry(3, 1)], indent=2),  # newlines and indentation between every token
    b' \r\n{ "model_stats" :\t[ ] }\n',
    b'{"other": {"model_stats": [1]}, "model_stats": [{"name": "a"}]}',  # another key first: whole
    '{"model_stats": [{"name": "\u00e9\u4e2d\U0001f600", "n": -1.5e-3}, 12345],"extra":{"k":[1]}}'.encode(),
    b'{"model_stats": [1.5, 2e+3, -0.25E-2, {"name": "a"}, 7.0]}',  # a cut after `1.` or `2e+` is no end
]


@pytest.mark.parametrize("body", SMALL_BODIES)
def test_a_cut_at_every_byte_offset_decodes_the_same_entries(body):
    want = json.loads(body)["model_stats"]
    for cut in range(len(body) + 1):
        assert decode_in_pieces(body, [cut]) == want, cut
    assert decode_in_pieces(body, list(range(1, len(body)))) == want  # one byte at a time


def test_entries_come_out_as_soon_as_their_bytes_are_in():
    body = stats_body([entry(i) for i in range(3)])
    second = body.index(b'{"name": "model_0001"')
    decoder = StatsDecoder(SMALL_CAP)
    assert [e["name"] for e in decoder.feed(body[: second + 5])] == ["model_0000"]
    assert [e["name"] for e in decoder.feed(body[second + 5 :])] == ["model_0001", "model_0002"]
    assert list(decoder.finish()) == []


@pytest.mark.parametrize(
    "body",
    [
        b'{"model_stats": [{"name": "a"}, {"na',  # cut inside an entry
        b'{"model_stats": [{"name": "a"}, ',  # cut between entries
        b'{"model_stats": [{"name": "a"}]',  # the object not closed
        b'{"model_stats": [{"name": "a"}],}',
        b'{"model_stats": [{"name": "a"},]}',
        b'{"model_stats": [{"name": "a"} {"name": "b"}]}',
        b'{"model_stats": [{"name": "a", "n": 1x}, {"name": "b"}]}',  # bad inside an entry
        b'{"model_stats": [{"name": "\xff"}]}',  # not UTF-8
        b'{"model_stats": [{"name": "\xc3',  # cut inside a UTF-8 sequence
        b"",
        b"<html>",
        b"[]",
    ],
)
def test_malformed_or_truncated_bodies_are_parse_faults_at_any_cut(body):
    for cut in range(len(body) + 1):
        with pytest.raises(StatsBodyError) as err:
            decode_in_pieces(body, [cut])
        assert err.value.kind == c.FAULT_PARSE, cut


def test_a_bad_entry_fails_when_read_not_at_the_end_of_the_body():
    decoder = StatsDecoder(SMALL_CAP)
    with pytest.raises(StatsBodyError) as err:
        list(decoder.feed(b'{"model_stats": [{"name": "a", "n": 1x, "pad": "' + b"y" * 50))
    assert err.value.kind == c.FAULT_PARSE


def test_the_cap_is_on_one_entry_not_on_the_body():
    entries = [entry(i) for i in range(400)]
    body = stats_body(entries)
    assert len(body) > 10 * SMALL_CAP
    assert decode_in_pieces(body, list(range(1000, len(body), 1000)), SMALL_CAP) == entries
    big = [entry(0), entry(1, pad=SMALL_CAP + 10), entry(2)]
    decoder = StatsDecoder(SMALL_CAP)
    seen: list = []
    with pytest.raises(StatsBodyError) as err:
        for piece in (stats_body(big)[i : i + 512] for i in range(0, len(stats_body(big)), 512)):
            seen.extend(decoder.feed(piece))
    assert err.value.kind == c.FAULT_TOO_LARGE
    assert seen == [entry(0)]


def test_a_body_decoded_whole_is_capped_whole():
    body = b'{"other": 1, "model_stats": ' + stats_body([entry(i) for i in range(100)])[16:]
    assert len(json.loads(body)["model_stats"]) == 100 and len(body) > SMALL_CAP
    with pytest.raises(StatsBodyError) as err:
        decode_in_pieces(body, list(range(1000, len(body), 1000)), SMALL_CAP)
    assert err.value.kind == c.FAULT_TOO_LARGE


# -- the client against a loopback server ---------------------------------------------------------
Answer = Callable[[BaseHTTPRequestHandler], None]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # Triton's: the body is read from a kept-alive connection

    def do_GET(self) -> None:
        with contextlib.suppress(OSError):  # the client cut the connection (deadline, cap)
            self.server.answer(self)  # type: ignore[attr-defined]

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def serve() -> Iterator[Callable[[Answer], str]]:
    """`serve(answer)`: the URL of a loopback server answering every GET with `answer(handler)`."""
    servers: list[ThreadingHTTPServer] = []

    def start(answer: Answer) -> str:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.answer = answer  # type: ignore[attr-defined]
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def send(body: bytes, status: int = 200, pieces: int = 1, pause: float = 0.0, length: int | None = None):
    def answer(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body) if length is None else length))
        h.end_headers()
        step = max(1, -(-len(body) // pieces))
        for at in range(0, len(body), step):
            h.wfile.write(body[at : at + step])
            h.wfile.flush()
            time.sleep(pause)

    return answer


def client(url: str, timeout: float = 5.0) -> TritonClient:
    return TritonClient(url, f"{url}/metrics", timeout=timeout, max_bytes=SMALL_CAP)


def test_a_body_larger_than_the_cap_is_read_whole_when_each_entry_is_small(serve):
    entries = [entry(i) for i in range(300)]
    body = stats_body(entries)
    assert len(body) > 5 * SMALL_CAP
    url = serve(send(body, pieces=40))
    stats = client(url).all_stats()
    assert getattr(httpclient._current, "deadline", None) is None  # nothing armed left on this thread
    assert list(stats) == entries
    with pytest.raises(FetchError) as err:  # the other endpoints keep the cap on the body
        client(url).server_metadata()
    assert err.value.kind == c.FAULT_TOO_LARGE


def test_a_runaway_body_of_small_entries_is_cut_at_its_bound(serve):
    """Each entry is under the cap, but the poll keeps every entry's figures: the whole body is bounded too
    (`STATS_BODY_SHARES` times the cap), and reading stops there."""
    per_entry = len(stats_body([entry(0), entry(1)])) - len(stats_body([entry(0)]))
    count = 2 * STATS_BODY_SHARES * SMALL_CAP // per_entry
    url = serve(send(stats_body([entry(i) for i in range(count)]), pieces=64))
    read = []
    with pytest.raises(FetchError) as err:
        read.extend(client(url).all_stats())
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_TOO_LARGE)
    assert 0 < len(read) < count
    within = stats_body([entry(i) for i in range(count // 4)])
    assert len(within) < STATS_BODY_SHARES * SMALL_CAP
    assert len(list(client(serve(send(within, pieces=16))).all_stats())) == count // 4


def test_an_entry_larger_than_the_cap_is_too_large(serve):
    url = serve(send(stats_body([entry(0), entry(1, pad=2 * SMALL_CAP)]), pieces=8))
    stats = client(url).all_stats()
    assert next(stats) == entry(0)
    with pytest.raises(FetchError) as err:
        next(stats)
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_TOO_LARGE)


def test_a_truncated_body_is_a_parse_fault(serve):
    body = stats_body([entry(i) for i in range(50)])
    url = serve(send(body[: len(body) // 2]))  # a complete HTTP answer of half the JSON
    with pytest.raises(FetchError) as err:
        list(client(url).all_stats())
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_PARSE)


def test_a_trickle_past_the_deadline_is_a_timeout(serve):
    body = stats_body([entry(i) for i in range(1000)])  # ~150 KB: the first 64 KiB chunk in ~1.7 s
    url = serve(send(body, pieces=40, pause=0.1))  # 4 s of body, each piece well inside a read timeout
    started = time.monotonic()
    read: list = []
    with pytest.raises(FetchError) as err:
        for item in client(url, timeout=2.5).all_stats():
            read.append(item)
    elapsed = time.monotonic() - started
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_TIMEOUT)
    assert 2.4 < elapsed < 3.5, elapsed
    assert 0 < len(read) < 1000


def test_the_deadline_covers_a_caller_that_iterates_slowly(serve):
    body = stats_body([entry(i) for i in range(300)])
    url = serve(send(body, pieces=30))
    with pytest.raises(FetchError) as err:
        for _ in client(url, timeout=0.5).all_stats():
            time.sleep(0.01)
    assert err.value.kind == c.FAULT_TIMEOUT


def test_an_http_500_is_a_status_fault_quoting_the_page_before_any_entry(serve):
    page = b"<html>\n<h1>Internal error</h1>\n" + b"trace line\n" * 5000
    url = serve(send(page, status=500))
    with pytest.raises(FetchError) as err:
        client(url).all_stats()  # raised by the call: the status is known before the body is read
    message = str(err.value)
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_HTTP_STATUS)
    assert "answered HTTP 500: <html> <h1>Internal error</h1> trace line" in message and "\n" not in message
    assert len(message) < 400
