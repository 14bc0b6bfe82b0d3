"""HTTP/1.1 request framing as the shared HTTP server's watcher reads it (pure, bytes in): where a
request's header block ends, how much Content-Length body comes with it, and whether the client waits
for `100 Continue` before sending that body."""

from __future__ import annotations

import re

__all__ = ["CONTINUE", "TOO_LARGE", "request_size", "waits_for_continue"]

_HEADER_END = re.compile(rb"\r?\n\r?\n")
_CONTENT_LENGTH = re.compile(rb"(?im)^content-length[ \t]*:[ \t]*(\d+)[ \t]*\r?$")
_CHUNKED = re.compile(rb"(?im)^transfer-encoding[ \t]*:.*chunked")
_EXPECT_CONTINUE = re.compile(rb"(?im)^expect[ \t]*:[ \t]*100-continue[ \t]*\r?$")
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
TOO_LARGE = b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def request_size(data: bytes | bytearray, max_body: int) -> int | None:
    """How many bytes of `data` make its first request complete enough for a worker: the header
    block plus a Content-Length body of at most `max_body` (a larger or chunked body is the
    handler's to read or refuse); None while the header block has not ended."""
    end = _HEADER_END.search(data)
    if end is None:
        return None
    head = bytes(data[: end.end()])
    length = _CONTENT_LENGTH.search(head)
    if length is None or _CHUNKED.search(head) or int(length.group(1)) > max_body:
        return end.end()
    return end.end() + int(length.group(1))


def waits_for_continue(data: bytes | bytearray, max_body: int) -> bool:
    """Whether `data`, a request whose header block has ended and whose Content-Length body (one
    the watcher buffers) has not all arrived, asks for `100 Continue` (`Expect: 100-continue`, an
    HTTP/1.1 request): such a client sends its body only after it, so the watcher must send it."""
    size = request_size(data, max_body)
    if size is None or len(data) >= size:
        return False
    head = bytes(data[: _HEADER_END.search(data).end()])  # type: ignore[union-attr]
    return (
        size > len(head)
        and head.split(b"\n", 1)[0].rstrip().endswith(b"HTTP/1.1")
        and bool(_EXPECT_CONTINUE.search(head))
    )
