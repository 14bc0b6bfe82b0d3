"""slack_sdk's WebClient over `httpclient`: a deadline for the whole answer, no redirect to another host.

slack_sdk sends with urllib, whose timeout is per socket operation (a proxy trickling an answer
holds the delivery thread for good) and whose redirect handler follows any host with the
Authorization header (the bot token) attached. `DeadlineWebClient` keeps slack_sdk's request
building, response parsing and errors, and replaces only the transport of one call: a
`httpclient.new_session()` request under `httpclient.deadline`. A non-2xx answer is raised as
urllib's HTTPError, the shape slack_sdk handles (429 Retry-After, its error bodies); no answer as
`SlackUnreachable`: the host and the reason in a few words (`httpclient.describe`), not urllib3's
pool and retry text. slack_sdk's own ERROR line for it is dropped: the bot's caller logs the
failure once, saying what becomes of the notification.
"""

from __future__ import annotations

import io
import logging
from http.client import HTTPMessage
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request

import requests
from slack_sdk import WebClient

from triton_sre.httpclient import deadline, describe, new_session

SDK_SEND_FAILED = "Failed to send a request to Slack API server"
"""How slack_sdk's base client starts the ERROR line it logs before raising a transport error."""


class SlackUnreachable(URLError):
    """No (complete) answer from the Slack API: `host` (no credentials) and `reason`
    (`Connection refused`, `Name or service not known`, `no complete answer within 10s`)."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(reason)
        self.host = host

    def __str__(self) -> str:
        return f"{self.host}: {self.reason}"


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "?"
    host = f"[{host}]" if ":" in host else host
    try:
        return f"{host}:{parts.port}" if parts.port else host
    except ValueError:  # a port that is no number: the request failed on it
        return host


def _drop_sdk_send_failed(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith(SDK_SEND_FAILED)


_SDK_LOG = logging.getLogger("slack_sdk.web.base_client.deadline")  # slack_sdk's level and handlers apply
_SDK_LOG.addFilter(_drop_sdk_send_failed)


class DeadlineWebClient(WebClient):
    """A WebClient whose every call ends within `timeout` seconds, whole answer included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("logger", _SDK_LOG)
        super().__init__(*args, **kwargs)
        self._http = new_session()

    def _perform_urllib_http_request_internal(self, url: str, req: Request) -> dict[str, Any]:
        if not url.lower().startswith(("http://", "https://")):
            return super()._perform_urllib_http_request_internal(url, req)  # slack_sdk refuses it
        limit = float(self.timeout)
        try:
            with deadline(limit) as armed:
                response = self._http.request(
                    req.get_method(),
                    url,
                    data=req.data,  # type: ignore[arg-type]
                    headers=dict(req.header_items()),
                    timeout=limit,
                    allow_redirects=True,  # same host only (httpclient)
                )
                body = response.content
        except requests.RequestException as exc:
            late = f"no complete answer within {limit:g}s"
            raise SlackUnreachable(_host(url), late if armed.expired else describe(exc)) from None
        if armed.expired:
            raise SlackUnreachable(_host(url), f"no complete answer within {limit:g}s")
        headers = HTTPMessage()
        for key, value in response.headers.items():
            headers[key] = value
        if not 200 <= response.status_code < 300:
            raise HTTPError(url, response.status_code, response.reason or "", headers, io.BytesIO(body))
        charset = headers.get_content_charset() or "utf-8"
        return {"status": response.status_code, "headers": headers, "body": body.decode(charset, "replace")}
