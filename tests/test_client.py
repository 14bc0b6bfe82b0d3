"""The Triton client's statistics decoding, on the real server's answer and on odd shapes."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from triton_sre import conventions as c
from triton_sre.triton.client import FetchError, TritonClient, iter_model_stats


def test_entries_decoded_one_by_one_equal_the_whole_document(triton):
    text = requests.get(f"{triton.http_url}/v2/models/stats", timeout=10).text
    assert list(iter_model_stats(text)) == json.loads(text)["model_stats"]
    client = TritonClient(triton.http_url, triton.metrics_url)
    assert {e["name"] for e in client.all_stats()} >= {"vector_scale", "slow_model", "text_echo"}


@pytest.mark.parametrize(
    "text",
    [
        '{"model_stats": []}',
        ' { "model_stats" : [ {"name": "a"} , {"name": "b"} ] } ',
        '{"other": 1, "model_stats": [{"name": "a"}, {"name": "b"}]}',  # another key first
    ],
)
def test_shapes(text):
    assert list(iter_model_stats(text)) == json.loads(text)["model_stats"]


@pytest.mark.parametrize(
    "text",
    [
        '{"model_stats": [{"name": "a"}, {"na',
        '{"model_stats": [{"name": "a"} {"name": "b"}]}',
        "<html>",
        "[]",
    ],
)
def test_malformed_statistics_raise_a_parse_fault(text):
    with pytest.raises(FetchError) as err:
        list(iter_model_stats(text))
    assert (err.value.target, err.value.kind) == (c.TARGET_STATS, c.FAULT_PARSE)


def test_an_html_error_page_is_quoted_on_one_bounded_line():
    """An HTTP 500 with an HTML page was printed over several lines by `triage --triton-url` and
    `doctor` (the first 200 bytes, newlines kept)."""
    page = b"<html>\n<body>\n<h1>Internal error</h1>\n" + b"line\n" * 200 + b"</body></html>"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(500)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        with pytest.raises(FetchError) as err:
            TritonClient(url, f"{url}/metrics", timeout=5).repository_index()
    finally:
        httpd.shutdown()
        httpd.server_close()
    message = str(err.value)
    assert err.value.kind == c.FAULT_HTTP_STATUS and "\n" not in message and len(message) < 400, message
    assert "answered HTTP 500: <html> <body> <h1>Internal error</h1> line line" in message
