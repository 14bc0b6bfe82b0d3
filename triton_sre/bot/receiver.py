"""The bot's HTTP side: Alertmanager's webhook, health, and Slack's `/triton` slash command.

- ``POST /alertmanager``: ``Authorization: Bearer <token>`` (compared in constant time) or 401;
  a Content-Type that is not JSON 415, no Content-Length 411, a body over the cap 413 (not read),
  not JSON or not a notification 400. Every refusal is counted by status (`BotMetrics.refused`).
  The notification is committed to the outbox before the 200, then the worker is woken: the
  answer never waits for Slack.
- ``GET /healthz``: 200 with the outbox's counts; 503 with the reason when the outbox file vanished
  or was replaced, or the disk refuses writes (delivery state then held in memory); 200 ``degraded`` with
  the reason while Slack refuses the bot's token (notifications are still taken and kept: bot/token_watch.py).
- ``POST /slack/commands``: Slack's v0 request signature (HMAC-SHA256 of ``v0:<ts>:<body>`` with
  the signing secret) and a timestamp within 5 minutes, or 401. ``/triton status`` lists the open
  alert groups, ``/triton diagnose <model> [cluster|instance]`` asks the engine about a live Triton; both
  answer inside Slack's 3-second window (Triton is given at most 2 s).
- Any other method on an endpoint is 405 with ``Allow``; connections and reads are bounded as on
  the exporter (`triton_sre.httpserve`); log lines never carry a query string or credential.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from triton_sre import conventions as c
from triton_sre.bot.config import BotSettings
from triton_sre.bot.metrics import BotMetrics
from triton_sre.bot.outbox import Outbox
from triton_sre.bot.payload import PayloadError, parse_group, valid_unicode
from triton_sre.bot.silences import Silence, SilenceReadError, group_silences, read_silenced
from triton_sre.diagnosis.api import DiagnosisError, diagnose_live
from triton_sre.diagnosis.catalog import runbook_url
from triton_sre.httpmetrics import DescriptorShortages
from triton_sre.httpserve import BoundedHTTPServer, SafeHandler
from triton_sre.prom import PromError, Prometheus
from triton_sre.redact import redact
from triton_sre.rollout.live import model_answer

log = logging.getLogger(__name__)

SIGNATURE_WINDOW_SECONDS = 300
MAX_COMMAND_BODY = 64 * 1024
COMMAND_TRITON_TIMEOUT = 2.0
SLACK_COMMAND_WINDOW_S = 3.0  # Slack drops a slash command's answer that comes later
COMMAND_ALERTMANAGER_TIMEOUT = 2.0  # both reads of the silences together
COMMAND_PROMETHEUS_BUDGET = 2.0  # every Prometheus query of one answer together
GET_PATHS = (c.PATH_HEALTHZ, c.PATH_METRICS)
POST_PATHS = (c.PATH_BOT_ALERTMANAGER, c.PATH_BOT_SLACK_COMMANDS)


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's v0 request signature."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify_slack_request(
    secret: str, timestamp: str | None, signature: str | None, body: bytes, now: float | None = None
) -> bool:
    if not secret or not timestamp or not signature:
        return False
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs((time.time() if now is None else now) - ts) > SIGNATURE_WINDOW_SECONDS:
        return False
    return hmac.compare_digest(slack_signature(secret, timestamp, body).encode(), signature.encode())


def bearer_ok(expected: str, header: str | None) -> bool:
    if not expected or not header:
        return False
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode(), expected.encode())


class BotServer:
    def __init__(
        self,
        settings: BotSettings,
        outbox: Outbox,
        bearer_token: str,
        signing_secret: str = "",
        on_enqueued: Callable[[], None] | None = None,
        titles: dict[str, str] | None = None,
        metrics: BotMetrics | None = None,
        remediations: dict[str, str] | None = None,
        slack_problem: Callable[[], str] | None = None,
    ) -> None:
        self.metrics = metrics or BotMetrics(outbox)
        self.slack_problem = slack_problem or (lambda: "")  # why deliveries wait (bot/token_watch.py)
        self.settings = settings
        self.outbox = outbox
        self._bearer = bearer_token
        self._signing_secret = signing_secret
        self.on_enqueued = on_enqueued or (lambda: None)
        self.titles = titles or {}
        self.remediations = remediations or {}
        host, port = settings.listen_address
        owner = self

        class Handler(_Handler):
            bot = owner

        self.httpd = BoundedHTTPServer((host, port), Handler)
        self.metrics.registry.register(DescriptorShortages(self.httpd))
        self.port = self.httpd.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> BotServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="bot-http", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- slash command ----------------------------------------------------------------------------
    def command(self, text: str) -> str:
        """The slash command's answer, without any credential (the echo of the user's text included)."""
        return redact(self._answer(text), queries=False)

    def _answer(self, text: str) -> str:
        words = text.split()
        if not words or words[0] == "help":
            return (
                f"Usage: `{c.SLASH_COMMAND} status`, `{c.SLASH_COMMAND} diagnose <model> [cluster|instance]` "
                f"or `{c.SLASH_COMMAND} rollout <model> [cluster]`"
            )
        if words[0] == "status":
            return self._status()
        if words[0] == "diagnose" and len(words) >= 2:
            return self._diagnose(words[1], words[2] if len(words) > 2 else None)
        if words[0] == "rollout" and len(words) in (2, 3):
            return self._rollout(words[1], words[2] if len(words) > 2 else None)
        return f"Unknown command `{_esc(text[:100])}`. Try `{c.SLASH_COMMAND} help`."

    def _status(self) -> str:
        open_groups = self.outbox.open_messages()
        counts = self.outbox.counts()
        pending, failed = counts.get(c.BOT_OUTBOX_PENDING, 0), counts.get(c.BOT_OUTBOX_FAILED, 0)
        held, silence_note = self._silenced() if open_groups else ({}, "")
        lines = [f"*{len(open_groups)} alert group(s) firing*; outbox: {pending} pending, {failed} failed."]
        if silence_note:
            lines.append(silence_note)
        for ref in open_groups[:20]:
            firing = [a for a in ref.alerts if a.get("status") == c.AM_STATUS_FIRING]
            count, silences = group_silences(firing, held)
            names = ", ".join(
                sorted(
                    {
                        f"{a.get('name')} ({a.get('model')})" if a.get("model") else str(a.get("name"))
                        for a in firing
                    }
                )
            )
            lines.append(
                f"• {_esc(names or 'resolved alerts')} "
                f"(last change {time.strftime('%H:%M UTC', time.gmtime(ref.updated))})"
                + (_silenced_text(count, len(firing), silences) if count else "")
            )
        return "\n".join(lines)

    def _silenced(self) -> tuple[dict[str, list[Silence]], str]:
        """Alertmanager's silenced alerts, and a line for the answer when they could not be read."""
        url = self.settings.silences_url
        if not url:
            return {}, "_Silences not shown: the bot has no `--alertmanager-url`._"
        try:
            held = read_silenced(url, COMMAND_ALERTMANAGER_TIMEOUT)
        except SilenceReadError as exc:
            self.metrics.alertmanager_reads.labels(exc.outcome).inc()
            log.warning("/triton status: cannot read silences from Alertmanager: %s", exc)
            return (
                {},
                f"_Silences could not be read from Alertmanager ({_esc(str(exc))}): groups may be silenced._",
            )
        self.metrics.alertmanager_reads.labels(c.BOT_OUTCOME_OK).inc()
        return held, ""

    def _diagnose(self, model: str, where: str | None) -> str:
        """`where`: a cluster of the config's `clusters` (its Triton), else an instance (the fleet's)."""
        settings = self.settings
        labels = (
            {settings.cluster_label if where in settings.clusters else c.LABEL_INSTANCE: where}
            if where
            else {}
        )
        url = self.settings.triton_url_for(labels) or (
            self.settings.fleet[0].triton_url if self.settings.fleet else None
        )
        if not url:
            return "No Triton configured: start the bot with `--triton-url` (or a fleet in its config)."
        try:
            live = diagnose_live(url, self.titles, self.remediations, COMMAND_TRITON_TIMEOUT, model=model)
        except DiagnosisError as exc:
            return _esc(str(exc))
        entries, report = live.index, live.report
        if not entries:
            return f"Triton at {_esc(url)} does not know a model `{_esc(model)}`."
        findings = [f for f in report.findings if f.model == model]
        if not findings:
            states = ", ".join(f"v{e.get('version') or '-'} {e.get('state') or 'unknown'}" for e in entries)
            return f"`{_esc(model)}` on {_esc(url)}: {_esc(states)}. No load failure found."
        lines = []
        for f in findings[:3]:
            lines.append(f"*{_esc(model)}*: {_esc(f.title)} (`{f.runbook}`)")
            if f.remediation:
                lines.append(f"Fix: {_esc(f.remediation)}")
            link = runbook_url(f.runbook, self.settings.runbook_base_url)
            lines.append(f"Runbook: <{link}|{f.runbook}>" if link.startswith("http") else f"Runbook: {link}")
        return "\n".join(lines)

    def _rollout(self, model: str, cluster: str | None) -> str:
        """Each candidate version of `model` against its busiest version, now, in `cluster` or in each
        cluster the store holds (rollout/live.py)."""
        url = self.settings.prometheus_url_for({self.settings.cluster_label: cluster} if cluster else {})
        if url != self.settings.prometheus_url:  # the cluster's own Prometheus: no cluster label there
            cluster = None
        if not url:
            return "No Prometheus configured: set `prometheus_url` in the bot's config."
        try:
            prometheus = Prometheus(url, COMMAND_PROMETHEUS_BUDGET, budget=COMMAND_PROMETHEUS_BUDGET)
            lines = model_answer(prometheus, model, self.settings.slo_spec(), cluster)
        except PromError as exc:
            return _esc(str(exc))
        return "\n".join(_esc(line) for line in lines)


def _silenced_text(count: int, firing: int, silences: list[Silence]) -> str:
    which = "silenced" if count == firing else f"{count} of {firing} alerts silenced"
    return f" — :no_bell: *{which}* " + "; ".join(_esc(s.describe()) for s in silences)


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class _Handler(SafeHandler):
    """GET/HEAD on GET_PATHS, POST on POST_PATHS; any other method is 405 (SafeHandler)."""

    bot: BotServer
    protocol_version = "HTTP/1.1"
    server_version = "triton-sre-bot"
    logger = log

    def _send(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None, close: bool = False
    ) -> None:
        if status >= 400:  # a refused request is a fault a dashboard can see, not only a log line
            self.bot.metrics.refused.labels(str(status)).inc()
        self.send_json(status, body, headers, close=close)

    def _body(self, limit: int) -> bytes | None:
        length_header = self.headers.get("Content-Length")
        # any Transfer-Encoding (`gzip, chunked` too): its body is not read by Content-Length
        if self.headers.get_all("Transfer-Encoding") or length_header is None:
            self._send(411, {"error": "Content-Length required"}, close=True)
            return None
        if len(set(self.headers.get_all("Content-Length") or [])) > 1:
            self._send(400, {"error": "bad Content-Length"}, close=True)
            return None
        try:
            length = int(length_header)
        except ValueError:
            self._send(400, {"error": "bad Content-Length"}, close=True)
            return None
        if length < 0:
            self._send(400, {"error": "bad Content-Length"}, close=True)
            return None
        if length > limit:
            self._send(413, {"error": f"body larger than {limit} bytes"}, close=True)
            return None
        try:
            return self.read_body(length)
        except OSError:
            self.close_connection = True
            return None

    def _wrong_method(self, allow: str) -> None:
        self._send(405, {"error": "method not allowed"}, {"Allow": allow}, close=True)

    def do_GET(self) -> None:
        path = self.bare_path
        if path == c.PATH_HEALTHZ:
            problem = self.bot.outbox.problem()
            degraded = "" if problem else self.bot.slack_problem()  # still taking notifications: 200
            status = "unhealthy" if problem else "degraded" if degraded else "ok"
            body = {"status": status, "outbox": self.bot.outbox.counts()}
            if problem or degraded:
                body["problem"] = problem or degraded
            self._send(503 if problem else 200, body)
        elif path == c.PATH_METRICS:
            data = generate_latest(self.bot.metrics.registry)
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
        elif path in POST_PATHS:
            self._wrong_method("POST")
        else:
            self._send(404, {"error": "not found"})

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        path = self.bare_path
        if path == c.PATH_BOT_ALERTMANAGER:
            self._alertmanager()
        elif path == c.PATH_BOT_SLACK_COMMANDS:
            self._slack_command()
        elif path in GET_PATHS:
            self._wrong_method("GET, HEAD")
        else:
            self._send(404, {"error": "not found"}, close=True)

    def _alertmanager(self) -> None:
        if not bearer_ok(self.bot._bearer, self.headers.get("Authorization")):
            log.warning("webhook from %s rejected: missing or wrong bearer token", self.address_string())
            self._send(401, {"error": "unauthorized"}, {"WWW-Authenticate": "Bearer"}, close=True)
            return
        if not _json_or_unset(self.headers.get("Content-Type")):  # a form, a text page: not Alertmanager
            self._send(415, {"error": "Content-Type must be application/json"}, close=True)
            return
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity"):  # a gzip body was refused as `not valid JSON`
            self._send(
                415, {"error": f"Content-Encoding {encoding[:40]!r} is not accepted: send JSON"}, close=True
            )
            return
        raw = self._body(self.bot.settings.max_body_bytes)
        if raw is None:
            return
        try:
            payload, mended = valid_unicode(raw, json.loads(raw))
            group = parse_group(payload)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            reason = str(exc) if isinstance(exc, PayloadError) else "body is not valid JSON"
            self._send(400, {"error": reason})
            return
        if not group.alerts:  # Alertmanager never sends one: a hand-made test would post "FIRING" of nothing
            self._send(400, {"error": "the notification carries no alert"})
            return
        if mended:
            log.warning("webhook text that is not valid Unicode (a lone surrogate escape): shown with '?'")
        version = str(payload.get("version", ""))
        if version and version != c.AM_WEBHOOK_VERSION:
            log.info(
                "webhook payload version %s (expected %s): reading it leniently",
                version,
                c.AM_WEBHOOK_VERSION,
            )
        lost = self.bot.outbox.file_problem()
        if lost:  # accepting now would lose the notification at the next start: Alertmanager retries
            log.error("webhook refused: %s", lost)
            self._send(503, {"error": "outbox unavailable"})
            return
        try:
            notification_id = self.bot.outbox.enqueue(group.group_key, payload)
        except Exception as exc:  # disk full, locked database: Alertmanager will retry
            log.error("outbox write failed: %s", exc)
            self._send(503, {"error": "outbox unavailable"})
            return
        self.bot.metrics.received.inc()
        self._send(200, {"status": "queued", "id": notification_id})
        self.bot.on_enqueued()

    def _slack_command(self) -> None:
        raw = self._body(MAX_COMMAND_BODY)
        if raw is None:
            return
        if not verify_slack_request(
            self.bot._signing_secret,
            self.headers.get("X-Slack-Request-Timestamp"),
            self.headers.get("X-Slack-Signature"),
            raw,
        ):
            log.warning(
                "slash command from %s rejected: bad, stale or missing signature", self.address_string()
            )
            self._send(401, {"error": "invalid signature"})
            return
        form = parse_qs(raw.decode("utf-8", "replace"))
        text = (form.get("text") or [""])[0]
        try:
            answer = self.bot.command(text)
        except Exception as exc:
            log.exception("slash command failed")
            answer = f"Sorry, that failed: {type(exc).__name__}"
        self._send(200, {"response_type": "ephemeral", "text": answer})


def _json_or_unset(content_type: str | None) -> bool:
    """Alertmanager sends `application/json`; a client that sends no type at all is given the benefit."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
