"""Slack: Block Kit rendering from sandboxed jinja2 templates, limits, and delivery with retries.

Rendering: the templates in ``triton_sre/bot/templates`` (``message.json.j2`` -> a JSON list of
blocks, ``text.txt.j2`` -> the notification text, ``update.txt.j2`` -> the thread reply when a
message changes) run in jinja2's `SandboxedEnvironment`; a directory given as ``templates_dir``
overrides any of them by file name. A user template that fails or does not yield a list of blocks
is logged and the built-in one is used, so a broken template never loses an alert. `fit_blocks`
then enforces Slack's limits (50 blocks, 3,000 characters per section text, 150 per header, ...),
cutting text without breaking links, entities or code fences.

Delivery: `SlackDelivery` wraps slack_sdk's WebClient (``base_url`` from ``$SLACK_API_URL``)
and turns every failure into a `DeliveryError` that says whether retrying can help and when
(429 -> Retry-After; 5xx, network and timeouts -> retryable; invalid_blocks, channel_not_found ->
not). The retry schedule itself is the outbox's (`backoff`), so it survives restarts.
"""

from __future__ import annotations

import json
import logging
import math
import random
import re
import time
from collections.abc import Callable, Mapping
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment
from slack_sdk.errors import SlackApiError, SlackClientError

from triton_sre import conventions as c
from triton_sre.bot import slack_limits as limits
from triton_sre.bot.slack_http import DeadlineWebClient, SlackUnreachable
from triton_sre.bot.token_file import TokenFile
from triton_sre.httpclient import describe
from triton_sre.redact import REDACTED, redact
from triton_sre.rfc3339 import parse_rfc3339

log = logging.getLogger(__name__)

BUILTIN_TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE_MESSAGE = "message.json.j2"
TEMPLATE_TEXT = "text.txt.j2"
TEMPLATE_UPDATE = "update.txt.j2"
MAX_FALLBACK_TEXT = 3000
ELLIPSIS = "…"
# Errors retrying cannot fix (the message would fail the same way); anything else is retried.
SLACK_ERROR_CODE = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""What a Slack error code looks like (``channel_not_found``); anything else is `INVALID_RESPONSE`."""
INVALID_RESPONSE = c.BOT_OUTCOME_INVALID_RESPONSE
"""The outcome of an answer that is not Slack's JSON (a proxy's HTML page): one label value for all."""
PERMANENT_ERRORS = frozenset(
    {
        "invalid_blocks",
        "invalid_blocks_format",
        "msg_too_long",
        "no_text",
        "channel_not_found",
        "not_in_channel",
        "is_archived",
        "message_not_found",
        "cant_update_message",
        "edit_window_closed",
        "invalid_arguments",
        "thread_not_found",
        "too_many_attachments",
        "restricted_action",
    }
)


AUTH_ERRORS = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked"})
"""Slack refusing the token itself: no call can succeed until it takes one (bot/token_watch.py)."""

DEFAULT_RETRY_AFTER_SECONDS = 1.0
"""The pause after a 429 without a usable Retry-After."""
MAX_RETRY_AFTER_SECONDS = 900.0
"""The longest pause a Retry-After buys (Slack's are seconds): past it, the worker tries again."""


class DeliveryError(Exception):
    def __init__(
        self, message: str, *, retryable: bool, retry_after: float | None = None, error: str = ""
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.error = error


def backoff(attempts: int, base: float, cap: float, retry_after: float | None = None) -> float:
    """Seconds to wait before the next attempt: Retry-After when Slack gave one, else exponential
    (base * 2^attempts, capped) with +-20% jitter so a fleet of bots does not retry in step."""
    if retry_after is not None:
        return max(0.0, retry_after)
    delay = min(cap, base * (2 ** min(attempts, 30)))
    return delay * random.uniform(0.8, 1.2)


def retry_after_seconds(raw: Any, now: float | None = None) -> float:
    """A Retry-After header (seconds or an HTTP date) as a pause the worker can take: a value that is
    no time (`inf`, `nan`, negative, garbage) is Slack's default second, a later one is capped at
    MAX_RETRY_AFTER_SECONDS (`inf` or `1e12` killed the delivery thread or paused it for years)."""
    text = str(raw).strip() if raw is not None else ""
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - (time.time() if now is None else now)
        except (TypeError, ValueError, IndexError, OverflowError):
            return DEFAULT_RETRY_AFTER_SECONDS
        seconds = max(0.0, seconds)  # a date in the past: go now
    if not math.isfinite(seconds) or seconds < 0:
        return DEFAULT_RETRY_AFTER_SECONDS
    return min(seconds, MAX_RETRY_AFTER_SECONDS)


# ----------------------------------------------------------------------------- rendering
def escape_mrkdwn(text: Any) -> str:
    return str("" if text is None else text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn_link(url: str, text: str) -> str:
    if not url.startswith(("http://", "https://")):
        return escape_mrkdwn(f"{text} ({url})" if url else text)
    label = escape_mrkdwn(text).replace("|", "¦")
    # `<` too: `<http://x/<@U1|runbook>` would be read as a mention of U1 labelled "runbook"
    return f"<{url.replace('<', '%3C').replace('>', '%3E').replace('|', '%7C')}|{label}>"


def _pct(value: Any) -> str:
    try:
        share = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return f"{share * 100:.1f}%" if share >= 0 else f"none, overspent ({share * 100:.1f}%)"


def _since(iso: Any) -> str:
    """An RFC 3339 time as UTC: 2026-11-29T17:25:52.123456789Z -> 2026-11-29 17:25:52 UTC. A time
    with an offset (an alert posted to Alertmanager from another zone keeps it) is converted, not
    relabelled: `…17:25:52+13:45` is 03:40:52 UTC."""
    text = str(iso or "")
    try:
        return parse_rfc3339(text).strftime("%Y-%m-%d %H:%M:%S UTC")
    except ValueError:  # not a time, or a year 1 or 9999 that an offset moves out of range
        return escape_mrkdwn(text)


class Renderer:
    def __init__(self, templates_dir: str | None = None) -> None:
        self.user_dir = Path(templates_dir) if templates_dir else None
        self._builtin = self._env(jinja2.FileSystemLoader(str(BUILTIN_TEMPLATES)))
        self._user = self._env(jinja2.FileSystemLoader(str(self.user_dir))) if self.user_dir else None

    @staticmethod
    def _env(loader: jinja2.BaseLoader) -> SandboxedEnvironment:
        env = SandboxedEnvironment(
            loader=loader,
            autoescape=False,
            undefined=jinja2.StrictUndefined,
            extensions=["jinja2.ext.do"],
            keep_trailing_newline=False,
        )
        env.filters["mrkdwn"] = escape_mrkdwn
        env.filters["pct"] = _pct
        env.filters["since"] = _since
        env.globals["link"] = mrkdwn_link
        return env

    def _render(self, name: str, context: Mapping[str, Any]) -> str:
        if self._user is not None and self.user_dir is not None and (self.user_dir / name).is_file():
            try:
                return self._user.get_template(name).render(**context)
            except Exception as exc:  # a user's template must never lose an alert
                log.error(
                    "template %s in %s failed (%s: %s); using the built-in one",
                    name,
                    self.user_dir,
                    type(exc).__name__,
                    exc,
                )
        return self._builtin.get_template(name).render(**context)

    def blocks(self, context: Mapping[str, Any]) -> list[dict[str, Any]]:
        text = self._render(TEMPLATE_MESSAGE, context)
        try:
            blocks = json.loads(text)
            if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
                raise ValueError("the template must produce a JSON list of block objects")
        except ValueError as exc:
            log.error(
                "template %s produced invalid blocks (%s); using the built-in one", TEMPLATE_MESSAGE, exc
            )
            blocks = json.loads(self._builtin.get_template(TEMPLATE_MESSAGE).render(**context))
        return fit_blocks(blocks)

    def text(self, context: Mapping[str, Any]) -> str:
        return cut_text(self._render(TEMPLATE_TEXT, context).strip(), MAX_FALLBACK_TEXT) or "alert"

    def update(self, context: Mapping[str, Any]) -> str:
        return cut_text(self._render(TEMPLATE_UPDATE, context).strip(), MAX_FALLBACK_TEXT) or "updated"


# ----------------------------------------------------------------------------- limits
_OPEN_LINK = re.compile(r"<[^>]*$")
_OPEN_ENTITY = re.compile(r"&[a-z#0-9]{0,6}$")


def cut_text(text: str, limit: int) -> str:
    """`text` in at most `limit` characters; a cut never leaves half a link, entity or code fence."""
    if len(text) <= limit:
        return text
    room = limit - len(ELLIPSIS) - 3  # room for the ellipsis and a closing code fence
    cut = text[: max(room, 0)]
    cut = _OPEN_LINK.sub("", cut)
    cut = _OPEN_ENTITY.sub("", cut)
    cut += ELLIPSIS
    if cut.count("```") % 2 == 1:
        cut += "```"
    return cut


def _fit_text_obj(obj: Any, limit: int) -> Any:
    if isinstance(obj, dict) and isinstance(obj.get("text"), str):
        return {**obj, "text": cut_text(obj["text"], limit) or " "}
    return obj


def fit_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Blocks that Slack accepts: every text within its limit, at most 50 blocks (the last one
    says how many were left out), buttons with http(s) URLs only."""
    fitted: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        block = dict(block)
        if kind == "section":
            if "text" in block:
                block["text"] = _fit_text_obj(block["text"], limits.MAX_SECTION_TEXT)
            if "fields" in block:
                block["fields"] = [
                    _fit_text_obj(f, limits.MAX_FIELD_TEXT) for f in block["fields"][: limits.MAX_FIELDS]
                ]
                if not block["fields"]:
                    del block["fields"]
            if not block.get("text") and not block.get("fields"):
                continue
        elif kind == "header":
            block["text"] = _fit_text_obj(
                block.get("text") or {"type": "plain_text", "text": " "}, limits.MAX_HEADER_TEXT
            )
        elif kind == "actions":
            elements = []
            for element in block.get("elements") or []:
                url = element.get("url")
                if url is not None and (
                    not str(url).startswith(("http://", "https://")) or len(url) > limits.MAX_URL
                ):
                    continue
                elements.append(
                    {**element, "text": _fit_text_obj(element.get("text"), limits.MAX_BUTTON_TEXT)}
                )
            if not elements:
                continue
            block["elements"] = elements[: limits.MAX_ACTIONS]
        elif kind == "context":
            elements = [_fit_text_obj(e, limits.MAX_SECTION_TEXT) for e in (block.get("elements") or [])]
            if not elements:
                continue
            block["elements"] = elements[: limits.MAX_CONTEXT_ELEMENTS]
        fitted.append(block)
    if len(fitted) > limits.MAX_BLOCKS:
        # Keep the head and the last block (the buttons), say what was left out in between.
        keep_tail = [fitted[-1]] if fitted[-1].get("type") == "actions" else []
        room = limits.MAX_BLOCKS - 1 - len(keep_tail)
        dropped = len(fitted) - room - len(keep_tail)
        note = {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": f"{ELLIPSIS} {dropped} more block(s) not shown "
                    f"(Slack allows {limits.MAX_BLOCKS}).",
                }
            ],
        }
        fitted = [*fitted[:room], note, *keep_tail]
    return fitted


# ----------------------------------------------------------------------------- delivery
class SlackDelivery:
    def __init__(
        self,
        token: str,
        api_url: str | None = None,
        timeout: float = 10.0,
        on_call: Callable[[str, str], None] | None = None,
        token_file: TokenFile | None = None,
    ) -> None:
        self.token_file = token_file  # where the token came from, read again while Slack refuses it
        self.renew_token: Callable[[], str] | None = self._renew if token_file is not None else None
        """Take the token file's token when it changed (a rotated secret): the file's name, else ""; None
        when the token came from the environment (nothing to read again)."""
        self.on_call = on_call or (lambda method, outcome: None)
        """Called after every call with (Slack method, outcome): ``ok``, Slack's error, ``http_5xx``
        or ``network``."""
        base = api_url or c.DEFAULT_SLACK_API_URL
        self.client = DeadlineWebClient(
            token=token, base_url=base if base.endswith("/") else base + "/", timeout=int(timeout)
        )
        # The outbox owns the retry schedule (it survives restarts); no hidden retries in the client.
        self.client.retry_handlers = []

    def _call(self, method: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = getattr(self.client, method)(**kwargs)
        except SlackApiError as exc:
            error = _api_error(method, exc)
        except SlackClientError as exc:
            error = DeliveryError(
                f"{method}: {type(exc).__name__}: {exc}", retryable=True, error=c.BOT_OUTCOME_NETWORK
            )
        except SlackUnreachable as exc:
            error = DeliveryError(
                f"{method}: no answer from the Slack API at {exc.host}: {exc.reason}",
                retryable=True,
                error=c.BOT_OUTCOME_NETWORK,
            )
        except (OSError, TimeoutError) as exc:  # anything else below the transport
            error = DeliveryError(
                f"{method}: network error: {describe(exc)}", retryable=True, error=c.BOT_OUTCOME_NETWORK
            )
        else:
            self.on_call(method.replace("_", ".", 1), c.BOT_OUTCOME_OK)
            return dict(response.data) if isinstance(response.data, dict) else {}
        self.on_call(method.replace("_", ".", 1), error.error or "error")
        raise error

    def _renew(self) -> str:
        if self.token_file is None or (token := self.token_file.fresh(self.client.token or "")) is None:
            return ""
        self.client.token = token
        return self.token_file.path

    def check_auth(self) -> str:
        """Who the token is (auth.test); raises DeliveryError when Slack refuses it."""
        data = self._call("auth_test")
        return f"{data.get('user', '?')} in {data.get('team', '?')}"

    def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
    ) -> str:
        text = _slack_redact(text)
        kwargs: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False}
        if blocks is not None:
            kwargs["blocks"] = redacted(blocks)
        if thread_ts:
            kwargs["thread_ts"] = thread_ts
        data = self._call("chat_postMessage", **kwargs)
        return str(data.get("ts", ""))

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        text = _slack_redact(text)
        self._call("chat_update", channel=channel, ts=ts, text=text, blocks=redacted(blocks))

    def upload_png(self, channel: str, thread_ts: str, png: bytes, filename: str, title: str) -> None:
        self._call(
            "files_upload_v2",
            channel=channel,
            thread_ts=thread_ts,
            content=png,
            filename=filename,
            title=title,
        )


SLACK_REDACTED = REDACTED.replace("<", "&lt;").replace(">", "&gt;")


def _slack_redact(text: str) -> str:
    """`redact` for Slack text: its marker escaped as Slack wants ``<`` and ``>`` written, so a marker
    already escaped stays as it was and a new one is not read as a link."""
    out = redact(text, queries=False)
    return text if out == text else out.replace(REDACTED, SLACK_REDACTED)


def redacted(blocks: Any) -> Any:
    """``blocks`` with every string passed through `redact` (credentials and token-like query values out,
    other query strings kept for dashboard and Prometheus links): an alert's generatorURL or annotation may
    carry ``user:password@`` or ``?token=`` from the sender's configuration."""
    if isinstance(blocks, str):
        return _slack_redact(blocks)
    if isinstance(blocks, list):
        return [redacted(item) for item in blocks]
    if isinstance(blocks, dict):
        return {key: redacted(value) for key, value in blocks.items()}
    return blocks


def _api_error(method: str, exc: SlackApiError) -> DeliveryError:
    response = exc.response
    status = getattr(response, "status_code", 0) or 0
    error = ""
    try:
        error = str(response.get("error", "")) if response is not None else ""
    except Exception:  # a non-JSON body (a proxy's HTML error page)
        error = ""
    headers = {str(k).lower(): v for k, v in (getattr(response, "headers", None) or {}).items()}
    if status == 429 or error == "ratelimited":
        raw = headers.get("retry-after")
        retry_after = retry_after_seconds(raw[0] if isinstance(raw, list) and raw else raw)
        return DeliveryError(
            f"{method}: rate limited (Retry-After {retry_after:g}s)",
            retryable=True,
            retry_after=retry_after,
            error="ratelimited",
        )
    if status >= 500:
        return DeliveryError(f"{method}: Slack answered HTTP {status}", retryable=True, error="http_5xx")
    if error and not SLACK_ERROR_CODE.fullmatch(error):
        # slack_sdk puts "Received a response in a non-JSON format: <the page's start>" here: a label
        # value per page if it reached the metric. The page's start stays in the message.
        return DeliveryError(f"{method}: {error[:200]}", retryable=True, error=INVALID_RESPONSE)
    return DeliveryError(
        f"{method}: {error or f'HTTP {status}'}", retryable=error not in PERMANENT_ERRORS, error=error
    )
