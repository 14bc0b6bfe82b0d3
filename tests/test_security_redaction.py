"""The shared redactor covers every form a credential takes in the bot's and the clients' text.

Before this file, `redact` missed a Slack token standing alone (`xoxb-...` in an error or a log
line), an Authorization header without a bearer/basic scheme, a quoted key (`"password": "x"`, a
dict's repr in a library's debug line) and a prefixed key (`SLACK_BOT_TOKEN=`, `client_secret=`).
"""

from __future__ import annotations

import io
import logging
import os
import stat
from pathlib import Path

import pytest

from triton_sre.redact import REDACTED, install_redaction, redact

SECRET = "Sq7Lw2pZ9x-recognisable"  # fixed: test ids must be the same in every xdist worker
SLACK = f"xoxb-123456789012-123456789012-{SECRET}"


@pytest.mark.parametrize(
    "text",
    [
        f"invalid_auth for token {SLACK}",
        f"user token xoxp-1234-5678-{SECRET} refused",
        f"app token xapp-1-A0123-{SECRET}",
        f"Authorization: {SECRET}",
        f"{{'Content-Type': 'application/json', 'Authorization': '{SECRET}'}}",
        f'{{"Authorization": "token {SECRET}"}}',
        f'{{"password": "{SECRET}"}}',
        f"{{'api_key': '{SECRET}'}}",
        f'token="{SECRET}"',
        f"X-Api-Key: {SECRET}",
        f"SLACK_BOT_TOKEN={SECRET}",
        f"TRITON_SRE_BOT_TOKEN={SECRET}",
        f"client_secret: {SECRET}",
        f"signing-secret={SECRET}",
        # a command line's flags (`ps`, a launcher's log): redacted before prefixed keys were added
        f"tritonserver --token={SECRET}",
        f"--password={SECRET}",
        f"vllm serve m --api-key={SECRET}",
        f"--hf-token={SECRET}",
        f"-secret={SECRET}",
    ],
)
def test_every_form_of_a_credential_is_redacted(text: str) -> None:
    for queries in (True, False):
        clean = redact(text, queries=queries)
        assert SECRET not in clean, clean
        assert REDACTED in clean


@pytest.mark.parametrize(
    "text",
    [
        "/run/secrets/slack_token: cannot read",  # a file's name, not a key
        "/run/secrets/bot.token: cannot read",
        "output_token: 0.05",  # a figure of a prefixed name
        "max_tokens=100",
        'vllm:time_per_output_token_seconds_bucket{le="0.1"} 3',
        "webhook from 10.0.0.1 rejected: missing or wrong bearer token",
        "xoxb- is how a bot token starts",
    ],
)
def test_text_that_only_looks_like_a_credential_is_kept(text: str) -> None:
    assert redact(text) == text


def test_redaction_is_idempotent_on_headers() -> None:
    once = redact(f"Authorization: Bearer {SECRET}")
    assert once == f"Authorization: Bearer {REDACTED}"
    assert redact(once) == once


def test_a_debug_log_of_a_client_exception_carries_no_slack_token() -> None:
    """What a library raises or logs at debug level (the token in a header dict or in its message)
    goes through the filter every CLI handler has."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    install_redaction([handler])
    logger = logging.getLogger("test.security.redaction")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        logger.debug("Sending a request - headers: %s", {"Authorization": f"Bearer {SLACK}"})
        try:
            raise RuntimeError(f"The server responded with: invalid_auth (token {SLACK})")
        except RuntimeError:
            logger.exception("delivery failed")
    finally:
        logger.removeHandler(handler)
    said = stream.getvalue()
    assert "delivery failed" in said and "invalid_auth" in said
    assert SECRET not in said, said


def test_a_new_outbox_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """The outbox holds webhook payloads as received (an annotation may carry a secret): a new file
    and the WAL files SQLite makes beside it are 0600 whatever the umask; an existing file keeps its mode."""
    from triton_sre.bot.outbox import Outbox

    old = os.umask(0o022)
    try:
        box = Outbox(tmp_path / "state" / "outbox.sqlite3")
        box.close()
        made = sorted(p for p in (tmp_path / "state").iterdir())
        assert made and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in made), made
        shared = tmp_path / "shared.sqlite3"
        shared.touch(mode=0o640)
        shared.chmod(0o640)
        Outbox(shared).close()
        assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    finally:
        os.umask(old)
