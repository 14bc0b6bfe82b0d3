"""slack_sdk's WebClient over `httpclient`: a deadline for the whole answer, no redirect to another host.

slack_sdk sends with urllib, whose timeout is per socket operation (a proxy trickling an answer
holds the delivery thread for good) and whose redirect handler follows any host with the
Authorization header (the bot token) attached. `DeadlineWebClient` keeps slack_sdk's request
building, response parsing and errors, and replaces only the transport of one call: a
`httpclient.new_session()` request under `httpclient.deadline`. A non-2xx answer is raised as
urllib's HTTPError, the shape slack_sdk handles (429 Retry-After, its error bodies).
"""

from __future__ import annotations

import io
from http.client import HTTPMessage
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import Request

import requests
from slack_sdk import WebClient

from triton_sre.httpclient import deadline, new_session


class DeadlineWebClient(WebClient):
    """A WebClient whose every call ends within `timeout` seconds, whole answer included."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
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
            raise URLError(f"no complete answer within {limit:g}s" if armed.expired else str(exc)) from None
        if armed.expired:
            raise URLError(f"no complete answer within {limit:g}s")
        headers = HTTPMessage()
        for key, value in response.headers.items():
            headers[key] = value
        if not 200 <= response.status_code < 300:
            raise HTTPError(url, response.status_code, response.reason or "", headers, io.BytesIO(body))
        charset = headers.get_content_charset() or "utf-8"
        return {"status": response.status_code, "headers": headers, "body": body.decode(charset, "replace")}
