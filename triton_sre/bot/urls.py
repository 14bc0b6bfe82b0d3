"""Pure: the URLs a message links to, checked as links: what is a link (`is_http`; `link_url` without
credentials), an alert's runbook page, Alertmanager's new-silence form for a group, and the PromQL of a
Prometheus alert's generatorURL. Moved out of enrich.py (its 500 lines).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

from triton_sre import conventions as c
from triton_sre.bot.payload import Alert, AlertGroup
from triton_sre.diagnosis.catalog import runbook_url
from triton_sre.promql import escape

_RUNBOOK_PATH = re.compile(r"(?:^|/)(?P<id>[a-z0-9][a-z0-9-]*)\.md$")
LABEL_RUNBOOK = c.L_RUNBOOK


# Slack mrkdwn link (`<url|text>`). An Alertmanager `externalURL` or annotation holding them (a
# proxy's rewrite, a hostile sender) made a Silence button and an "and N more" link of
# `http://am/\n<!channel>`: such a value is no link.
_NOT_IN_URL: Final = re.compile(r'[\s\x00-\x1f\x7f<>|"`]')


def is_http(url: str | None) -> bool:
    text = str(url or "")
    if not text.startswith(("http://", "https://")) or _NOT_IN_URL.search(text):
        return False
    try:
        return bool(urlsplit(text).hostname)
    except ValueError:  # `http://[::1`
        return False


def link_url(url: str | None) -> str:
    """`url` as a link: '' when it is no URL (`is_http`), else without its `user:password@` part. With
    it, the message's redaction made `http://&lt;redacted&gt;@host` of the link, which leads nowhere;
    without it the browser asks for the credentials the user has."""
    text = str(url or "")
    if not is_http(text):
        return ""
    parts = urlsplit(text)
    if "@" not in parts.netloc:
        return text
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def runbook_id_of(alert: Alert) -> str:
    """The runbook an alert points at: its `runbook` label (TritonModelUnavailable), the shipped
    alert's page (by alert name, conventions.ALERT_RUNBOOKS), or, for an alert triton-sre did not
    generate, the page its runbook_url annotation names (a URL is all such an alert offers)."""
    if alert.name == c.ALERT_MODEL_UNAVAILABLE and alert.labels.get(LABEL_RUNBOOK):
        return alert.labels[LABEL_RUNBOOK]
    if alert.name in c.ALERT_RUNBOOKS:
        return c.ALERT_RUNBOOKS[alert.name]
    found = _RUNBOOK_PATH.search(urlsplit(alert.annotations.get(c.ANNOTATION_RUNBOOK_URL, "")).path)
    return found.group("id") if found else ""


def known_runbook_url(runbook: str, base_url: str | None) -> str:
    """The page of a runbook id triton-sre ships (conventions.RUNBOOK_IDS); "" for any other value: a
    `runbook` label reaches the bot from whoever writes alerts, and only our ids are paths on our host."""
    return runbook_url(runbook, base_url) if runbook in c.RUNBOOK_IDS else ""


def resolve_runbook_url(alert: Alert, runbook: str, base_url: str | None) -> str:
    """Absolute when possible: an absolute annotation is kept (unless the diagnosis names another
    page), a known runbook id is rebased on `base_url`."""
    annotation = alert.annotations.get(c.ANNOTATION_RUNBOOK_URL, "")
    if is_http(annotation) and (not runbook or runbook in annotation):
        return annotation
    return known_runbook_url(runbook, base_url) or annotation


def silence_url(group: AlertGroup, alertmanager_url: str | None) -> str:
    """Alertmanager's new-silence form, pre-filled with the labels every alert of the group shares."""
    base = link_url(alertmanager_url or group.external_url)
    if not base:
        return ""
    labels = group.common_labels or group.group_labels
    if not labels:
        return ""
    matchers = ",".join(f'{k}="{escape(v)}"' for k, v in sorted(labels.items()))
    return f"{base.rstrip('/')}/#/silences/new?{urlencode({'filter': '{' + matchers + '}'}, quote_via=quote)}"


def generator_expr(generator_url: str) -> str:
    """The PromQL expression of a Prometheus alert's generatorURL (``/graph?g0.expr=...``)."""
    values = parse_qs(urlsplit(generator_url).query).get("g0.expr")
    return values[0] if values else ""
