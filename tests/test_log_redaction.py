"""Log lines never carry query strings or credentials, at any level (issue #12, defect 7)."""

from __future__ import annotations

import io
import logging

import pytest

from triton_sre.redact import RedactingFilter, install_redaction, redact

SECRET = "s3cr3t-token-value"


@pytest.mark.parametrize(
    "text",
    [
        f"POST /alertmanager?token={SECRET} HTTP/1.1",
        f"'GET /x?a=1&token={SECRET} HTTP/1.1'",
        f"cannot reach http://admin:{SECRET}@triton:8000/v2",
        f"Authorization: Bearer {SECRET}",
        f"header token={SECRET}",
        f"url=https://hooks.example.com/services?key={SECRET}\nnext line",
    ],
)
def test_redact_removes_the_secret_and_keeps_the_rest(text: str) -> None:
    clean = redact(text)
    assert SECRET not in clean
    assert "<redacted>" in clean
    assert clean.split()[0] == text.split()[0] or clean.startswith(text[:5])


@pytest.mark.parametrize(
    "text",
    [
        "GET /metrics HTTP/1.1 200",
        "webhook from 10.0.0.1 rejected: missing or wrong bearer token",
        "the token is wrong; Basic auth is off",
    ],
)
def test_lines_without_secrets_are_unchanged(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR])
def test_filter_redacts_messages_arguments_and_tracebacks(level: int) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    install_redaction([handler])
    install_redaction([handler])  # idempotent
    assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    logger = logging.getLogger(f"test.redaction.{level}")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        logger.log(level, "request %s from %s", f"/hook?token={SECRET}", "10.0.0.1")
        try:
            raise ValueError(f"bad url http://u:{SECRET}@h/")
        except ValueError:
            logger.log(level, "failed", exc_info=True)
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert "/hook?<redacted>" in out and "10.0.0.1" in out and "ValueError" in out
    assert SECRET not in out
