"""Diagnosis as a library: a log (file, .gz or stream) or a live Triton -> a `Report`.

The one place the CLI (`triage`), the bot (alert facts, the slash command) and the demo get a
diagnosis from. Failures are `DiagnosisError` with a message fit for a user: it names the input,
says why, and carries no credential (URLs pass through `redact`).
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import dataclasses
import gzip
import io
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from triton_sre.config import default_metrics_url
from triton_sre.diagnosis.engine import Diagnoser, Report, diagnose_index
from triton_sre.diagnosis.holes import only_nuls_message, sparse_data_start
from triton_sre.diagnosis.logparse import parse
from triton_sre.diagnosis.report import CutShort
from triton_sre.diagnosis.scan import LogInputError, scan_lines
from triton_sre.redact import redact, shown_path

__all__ = ["DiagnosisError", "LiveDiagnosis", "diagnose_live", "diagnose_log", "diagnose_stream", "open_log"]

GZIP_MAGIC = b"\x1f\x8b"
_DECOMPRESSORS: dict[bytes, tuple[str, Callable[[BinaryIO], BinaryIO]]] = {
    GZIP_MAGIC: ("gzip", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")),
    b"BZh": ("bzip2", lambda raw: bz2.BZ2File(raw, mode="rb")),  # type: ignore[dict-item]
    b"\xfd7zXZ\x00": ("xz", lambda raw: lzma.LZMAFile(raw, mode="rb")),  # type: ignore[dict-item] # noqa: SIM115
}
"""Compressed logs read as their text, known by their magic bytes (a CI artifact, logrotate's .gz/.xz); the
caller enters each in its exit stack."""
_CORRUPT = (gzip.BadGzipFile, EOFError, zlib.error, lzma.LZMAError, OSError)
"""What reading a damaged compressed stream raises (bz2 says OSError: Invalid data stream)."""
_ARCHIVES = {
    b"\x28\xb5\x2f\xfd": "zstd-compressed: decompress it first (zstd -dc FILE | triton-sre triage -)",
    b"PK\x03\x04": "a zip archive: unpack it and pass the log file inside",
    b"7z\xbc\xaf\x27\x1c": "a 7-Zip archive: unpack it and pass the log file inside",
}
"""Containers the standard library cannot stream as one log: refused with what to do instead."""
UTF16_SNIFF_BYTES = 64
LIVE_TIMEOUT_SECONDS = 5.0


class DiagnosisError(Exception):
    """The log or the server could not be read; the message names it and says why (redacted)."""


@dataclass(frozen=True)
class LiveDiagnosis:
    """A live server's diagnosis and the repository index it came from."""

    report: Report
    index: list[dict[str, Any]]


class _Counted:
    """A binary stream that counts the bytes read from it (a decompressor's input: where a cut falls)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        return data


class _UntilCut(io.RawIOBase):
    """A decompressed stream that ends where its compressed input was cut short (EOFError: the data ends
    before the end-of-stream marker) and tells `on_cut` so, instead of failing the whole read."""

    def __init__(
        self, inner: BinaryIO, compression: str, counted: _Counted, on_cut: Callable[[CutShort], None]
    ):
        self._inner, self._compression, self._counted, self._on_cut = inner, compression, counted, on_cut
        self.cut = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.cut:
            return 0
        try:  # read1: one decompressor step, so the text decoded before the cut is not lost with the EOFError
            data = self._inner.read1(len(buffer))  # type: ignore[attr-defined]
            buffer[: len(data)] = data
            return len(data)
        except EOFError:
            self.cut = True
            self._on_cut(CutShort(self._compression, self._counted.count))
            return 0


@contextlib.contextmanager
def open_log(name: str, on_cut: Callable[[CutShort], None] | None = None) -> Iterator[BinaryIO]:
    """The log as a binary stream ('-' is stdin); gzip, bzip2 and xz are recognised by their magic bytes,
    not the file name. A directory or a device other than a pipe is refused before reading (a log is
    streamed, so a pipe and any size are fine), and so is an empty log. A compressed log cut short ends
    where it was cut and `on_cut` is told (without it, the cut is a corrupt-data `LogInputError`)."""
    with contextlib.ExitStack() as stack:
        if name == "-":
            if sys.stdin is None:  # `<&-`: Python has no stream for a descriptor that was closed
                raise LogInputError("standard input is closed: pipe the log in or give its file")
            raw: BinaryIO = sys.stdin.buffer
        else:
            raw = stack.enter_context(open(name, "rb"))
            mode = os.fstat(raw.fileno()).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
                kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file or a pipe"
                raise LogInputError(kind)
            # A leading hole (copytruncate rotation, `holes`) the file system keeps sparse: skipped unread.
            size = os.fstat(raw.fileno()).st_size
            start = sparse_data_start(raw.fileno(), size) if stat.S_ISREG(mode) else 0
            if start is None:
                raise LogInputError(only_nuls_message(size, ended=True))
            if start:  # a pipe (`triage <(kubectl logs ...)`, a FIFO) cannot seek, even to where it is
                raw.seek(start)
        peek = raw.peek(6)[:6] if hasattr(raw, "peek") else b""
        if hasattr(raw, "peek") and not peek:  # "no failure found" would read as a healthy server
            raise LogInputError("the log is empty (0 bytes): nothing to diagnose")
        stream = raw
        for magic, refusal in _ARCHIVES.items():
            if peek.startswith(magic):
                raise LogInputError(refusal)
        packed = next((known for magic, known in _DECOMPRESSORS.items() if peek.startswith(magic)), None)
        try:
            if packed is not None:
                counted = _Counted(raw)
                stream = stack.enter_context(packed[1](counted))  # type: ignore[arg-type]
                if on_cut is not None:
                    until_cut = _UntilCut(stream, packed[0], counted, on_cut)
                    stream = io.BufferedReader(until_cut)  # type: ignore[assignment]
                if not stream.peek(1):  # type: ignore[attr-defined]
                    if on_cut is not None and until_cut.cut:
                        raise LogInputError(
                            f"{packed[0]} data cut short at byte {counted.count:,} of the compressed stream, "
                            "before any text decoded: nothing to diagnose"
                        )
                    raise LogInputError(f"the log is empty once decompressed ({packed[0]} data of 0 bytes)")
            head = stream.peek(UTF16_SNIFF_BYTES)[:UTF16_SNIFF_BYTES] if hasattr(stream, "peek") else b""
            encoding = utf16_encoding(head)
            if encoding:
                stream = io.BufferedReader(_Utf16AsUtf8(stream, encoding))  # type: ignore[assignment]
            yield stream
        except _CORRUPT as exc:  # (also while the caller reads): the data is damaged, not the file
            if packed is None:
                raise
            raise LogInputError(f"corrupt {packed[0]} data: {exc or 'unexpected end of file'}") from None


def utf16_encoding(head: bytes) -> str | None:
    """'utf-16' (with a byte-order mark), 'utf-16-le' or 'utf-16-be' when the first bytes of a log
    are UTF-16 text, else None. Windows PowerShell 5 writes `docker logs triton > triton.log` so."""
    if head[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return "utf-16"
    pairs = len(head) // 2
    if pairs < 4:
        return None
    even, odd = head[0 : 2 * pairs : 2], head[1 : 2 * pairs : 2]
    if odd.count(0) == pairs and 0 not in even:
        return "utf-16-le"
    if even.count(0) == pairs and 0 not in odd:
        return "utf-16-be"
    return None


class _Utf16AsUtf8(io.RawIOBase):
    """A UTF-16 byte stream read as UTF-8 bytes (undecodable units become U+FFFD), chunk by chunk."""

    def __init__(self, stream: BinaryIO, encoding: str) -> None:
        self._reader = codecs.getreader(encoding)(stream, errors="replace")
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = len(buffer)
        while len(self._pending) < want:
            text = self._reader.read(max(2 * want, 2), max(want // 4, 1))
            if not text:
                break
            self._pending += text.encode("utf-8")
        got = min(want, len(self._pending))
        buffer[:got] = self._pending[:got]
        self._pending = self._pending[got:]
        return got


def diagnose_stream(
    stream: BinaryIO,
    titles: Mapping[str, str],
    remediations: Mapping[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
    refuse_blank: bool = False,
) -> Report:
    """The findings of a log read from a binary stream, in constant memory; ``refuse_blank``: a stream of
    blank lines is a `LogInputError` (a user's log, where "no failure found" would read as healthy)."""
    diagnoser = Diagnoser(titles, remediations)
    for event in parse(scan_lines(stream, progress=progress, refuse_blank=refuse_blank)):
        diagnoser.feed(event)
    return diagnoser.finish()


def diagnose_log(
    name: str,
    titles: Mapping[str, str],
    remediations: Mapping[str, str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Report:
    """The findings of a log file, a .gz or '-' (stdin); DiagnosisError when it cannot be read. A compressed
    log cut short is diagnosed as far as it decodes, the report's `cut_short` saying where it was cut."""
    cuts: list[CutShort] = []
    try:
        with open_log(name, cuts.append) as stream:
            report = diagnose_stream(stream, titles, remediations, progress, refuse_blank=True)
        return dataclasses.replace(report, cut_short=cuts[0]) if cuts else report
    except LogInputError as exc:
        raise DiagnosisError(f"{shown_path(name)}: {exc}") from None
    except OSError as exc:
        raise DiagnosisError(f"{shown_path(name)}: cannot read: {exc.strerror or exc}") from None


def diagnose_live(
    triton_url: str,
    titles: Mapping[str, str],
    remediations: Mapping[str, str] | None = None,
    timeout: float = LIVE_TIMEOUT_SECONDS,
    model: str | None = None,
) -> LiveDiagnosis:
    """The findings of a live Triton from its repository index (only `model`'s entries when given);
    DiagnosisError when the index cannot be read."""
    # (here, not at the top: a log's triage loads no HTTP client, requests and urllib3 included)
    from triton_sre.triton.client import FetchError, TritonClient

    client = TritonClient(triton_url, default_metrics_url(triton_url), timeout=timeout)
    try:
        index = client.repository_index()
    except FetchError as exc:
        raise DiagnosisError(
            f"cannot read the repository index of {redact(triton_url)}: {redact(exc.message)}"
        ) from None
    if model is not None:
        index = [e for e in index if e.get("name") == model]
    try:  # the release, for advice tied to it; a server that will not say is still diagnosed
        version = client.server_metadata().get("version")
    except FetchError:
        version = None
    server_version = version if isinstance(version, str) else None
    return LiveDiagnosis(diagnose_index(index, titles, remediations, server_version), index)
