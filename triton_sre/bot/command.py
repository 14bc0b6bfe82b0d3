"""`triton-sre bot`: receive Alertmanager's webhooks, keep one Slack message per alert group.

Secrets come from the environment or a file, never from flags (they would show in `ps`), and are
never logged: the webhook bearer token from ``--token-file`` or ``$TRITON_SRE_BOT_TOKEN``, the
Slack bot token from ``$SLACK_BOT_TOKEN``, the signing secret from ``$SLACK_SIGNING_SECRET``.
"""

from __future__ import annotations

import argparse
import logging
import os
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from triton_sre import conventions as c
from triton_sre.bot.config import DEFAULT_OUTBOX, BotSettings, flag_settings, load_bot_config, with_spec
from triton_sre.bot.metrics import BotMetrics
from triton_sre.bot.outbox import Outbox, OutboxError
from triton_sre.checks import ConfigError, check_base_url, path_text_arg
from triton_sre.httpserve import listening_on
from triton_sre.inputs import InputFileError, not_regular, read_bounded
from triton_sre.redact import shown_path
from triton_sre.shutdown import stop_on_signals, wait_until_set

log = logging.getLogger(__name__)


def add_bot_parser(commands: Any, epilog: str) -> None:
    bot = commands.add_parser(
        "bot",
        help="Slack incident bot fed by Alertmanager's webhook",
        description=(
            "Receive Alertmanager notifications (webhook receiver, bearer token) at POST /alertmanager "
            "and keep one Slack message per alert group: severity, model, summary, burn rate and budget, "
            "the diagnosed cause of an UNAVAILABLE model with its fix, runbook/Grafana/silence buttons; "
            "edited in place with a "
            "thread reply on every change and on resolution. Notifications wait in an on-disk outbox until "
            f"Slack takes them. Environment: {c.ENV_SLACK_BOT_TOKEN} (required, or "
            f"{c.ENV_SLACK_BOT_TOKEN_FILE} / --slack-token-file), {c.ENV_BOT_TOKEN} (or "
            f"--token-file), {c.ENV_SLACK_SIGNING_SECRET} (for the {c.SLASH_COMMAND} slash command), "
            f"{c.ENV_SLACK_API_URL} (default {c.DEFAULT_SLACK_API_URL})."
        ),
        epilog=epilog,
    )
    bot.add_argument("--listen", help=f"HOST:PORT to serve on (default {c.DEFAULT_BOT_LISTEN})")
    bot.add_argument("--channel", help="default Slack channel (routes in --config may pick others)")
    bot.add_argument(
        "--config", type=path_text_arg, help="YAML config: routes, fleet, templates, links (see docs/bot.md)"
    )
    bot.add_argument(
        "--token-file",
        type=path_text_arg,
        help=f"file holding the webhook bearer token (else ${c.ENV_BOT_TOKEN})",
    )
    bot.add_argument(
        SLACK_TOKEN_FILE_FLAG,
        type=path_text_arg,
        help=f"file holding the Slack bot token (else ${c.ENV_SLACK_BOT_TOKEN_FILE}, else "
        f"${c.ENV_SLACK_BOT_TOKEN}); read again before each retry while Slack refuses the token, so a "
        "rotated secret needs no restart",
    )
    bot.add_argument(
        "--outbox",
        type=path_text_arg,
        help=f"SQLite file of the outbox and message map (default ./{DEFAULT_OUTBOX})",
    )
    bot.add_argument("--triton-url", help="Triton HTTP endpoint for live diagnosis of UNAVAILABLE models")
    bot.add_argument("--runbook-base-url", help="make runbook links absolute: <URL><id>.md")
    bot.add_argument("--prometheus-url", help="Prometheus for burn rate, budget left and the chart")
    bot.add_argument("--grafana-url", help="Grafana base URL for the dashboard button")
    bot.add_argument(
        "--alertmanager-url", help="Alertmanager URL for the silence button (default: its externalURL)"
    )
    bot.add_argument(
        "--alertmanager-api-url",
        help="Alertmanager the bot reads silences from, when the silence button's URL is not reachable "
        "from the bot (default: --alertmanager-url)",
    )
    bot.add_argument("--templates-dir", help="directory of message templates overriding the built-in ones")
    bot.add_argument(
        "--log-file", help="diagnose UNAVAILABLE models from this Triton log (when no Triton URL)"
    )
    bot.add_argument(
        "--slo-file",
        "--spec",  # empty: a ConfigError of the bot's settings (`--slo-file: …`), exit 2 as well
        help="the slos.yaml the rules were generated from: its cluster_label names the alert's cluster, "
        "its rollout section answers rollouts (default: label cluster, the shipped slos.yaml)",
    )
    bot.add_argument(
        "--rollout-window",
        help="the window the rollout verdicts judge over, a duration (default: the spec's rollout.window; "
        "a gameday's stack gives the one its time-scaled rules read)",
    )
    bot.set_defaults(handler=run_bot)


def resolve_bot_settings(args: argparse.Namespace) -> BotSettings:
    settings = load_bot_config(args.config) if args.config else BotSettings()
    overrides = flag_settings(vars(args))
    for key in ("templates_dir", "log_file"):
        if getattr(args, key, None):
            overrides[key] = getattr(args, key)
    settings = replace(settings, **overrides)
    if settings.templates_dir and not Path(settings.templates_dir).is_dir():
        raise ConfigError(f"templates_dir: {settings.templates_dir} is not a directory")
    if settings.log_file and (kind := not_regular(settings.log_file)):  # a FIFO held the delivery thread
        raise ConfigError(f"log_file: {settings.log_file}: {kind}")
    settings.listen_address  # noqa: B018 - validates HOST:PORT
    return with_spec(settings)


MAX_TOKEN_FILE_BYTES = 64 * 1024
SLACK_TOKEN_FILE_FLAG = "--slack-token-file"


def one_word_secret(where: str, secret: str) -> str:
    """A token as given (blanks around it already stripped), refused, never quoted, when it holds a
    blank or a control character: no header can carry it (Alertmanager trims its credentials, Slack
    tokens are one word), and the HTTP client's error about it quoted what followed a line break."""
    if any(ch.isspace() or not ch.isprintable() for ch in secret):
        raise ConfigError(
            f"{where} holds a blank, a line break or a control character inside it: a token is one word "
            "(a file or secret holding two lines?); its value is not shown"
        )
    return secret


def slack_api_url(url: str) -> str:
    """`$SLACK_API_URL` checked before the bot starts (slack_sdk took any text as its base URL and
    failed in the first call's thread, a traceback holding the value). A value that is no http(s)
    URL at all is not quoted: beside the Slack secrets in the environment, it may be one of them."""
    if not url.lower().startswith(("http://", "https://")):
        raise ConfigError(
            f"${c.ENV_SLACK_API_URL}: must be an http(s) URL such as {c.DEFAULT_SLACK_API_URL}; its value "
            "is not shown (it may be a token set there by mistake)"
        )
    return check_base_url(f"${c.ENV_SLACK_API_URL}", url)


def read_token_file(where: str, path: str) -> str:
    """The one-word token a file holds (blanks around it stripped); ConfigError names ``where`` and the file,
    never the token."""
    try:
        token = read_bounded(path, MAX_TOKEN_FILE_BYTES).decode("utf-8").strip()
    except InputFileError as exc:
        raise ConfigError(f"{where} {shown_path(path)}: cannot read: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where} {shown_path(path)}: not UTF-8 text") from None
    if not token:
        raise ConfigError(f"{where} {shown_path(path)}: the file is empty")
    return one_word_secret(f"{where} {shown_path(path)}", token)


def read_bearer_token(token_file: str | None, environ: Mapping[str, str]) -> str:
    if token_file:
        return read_token_file("--token-file", token_file)
    token = environ.get(c.ENV_BOT_TOKEN, "").strip()
    if not token:
        raise ConfigError(
            # not "token: set ...": the redaction of every stderr line reads `token: <word>` as a secret
            f"no webhook token; set ${c.ENV_BOT_TOKEN} or --token-file (Alertmanager sends it with "
            "http_config.authorization); the bot refuses unauthenticated webhooks"
        )
    return one_word_secret(f"${c.ENV_BOT_TOKEN}", token)


class Bot:
    """Outbox + delivery worker + HTTP server, started and stopped together."""

    def __init__(
        self,
        settings: BotSettings,
        outbox_path: str | Path,
        bearer_token: str,
        slack_token: str,
        slack_api_url: str | None = None,
        signing_secret: str = "",
        slack_token_file: str | None = None,
    ) -> None:
        from triton_sre.bot.receiver import BotServer
        from triton_sre.bot.slack import SlackDelivery
        from triton_sre.bot.token_file import TokenFile
        from triton_sre.bot.worker import Worker
        from triton_sre.diagnosis.catalog import CatalogError, load_catalog

        try:
            catalog = load_catalog()
            titles, remediations = catalog.titles, catalog.remediations
        except CatalogError as exc:
            log.warning("runbook catalog unavailable (%s): findings show runbook ids only, no fixes", exc)
            titles, remediations = {}, {}
        self.settings = settings
        self.outbox = Outbox(outbox_path)
        self.metrics = BotMetrics(self.outbox)
        self.delivery = SlackDelivery(
            slack_token,
            slack_api_url,
            on_call=lambda method, outcome: self.metrics.slack_calls.labels(method, outcome).inc(),
            token_file=(
                TokenFile(slack_token_file, lambda path: read_token_file(SLACK_TOKEN_FILE_FLAG, path))
                if slack_token_file
                else None
            ),
        )
        self.worker = Worker(
            settings, self.outbox, self.delivery, titles, metrics=self.metrics, remediations=remediations
        )
        self.server = BotServer(
            settings,
            self.outbox,
            bearer_token,
            signing_secret,
            self.worker.wake,
            titles,
            self.metrics,
            remediations=remediations,
            slack_problem=self.worker.token.problem,
        )

    @property
    def url(self) -> str:
        return self.server.httpd.local_url

    def start(self) -> Bot:
        self.worker.start()
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()
        self.worker.stop()
        self.outbox.close()

    def __enter__(self) -> Bot:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _check_slack_auth(bot: Bot) -> None:
    """Say early whether Slack takes the token (a refusal pauses deliveries: bot/token_watch.py); Slack being
    down is fine (the outbox waits)."""
    from triton_sre.bot.slack import AUTH_ERRORS, DeliveryError

    try:
        log.info("Slack: posting as %s", bot.delivery.check_auth())
    except DeliveryError as exc:
        if exc.error in AUTH_ERRORS:
            bot.worker.token.refuse(exc.error, str(exc))
            bot.worker.wake()
        else:
            log.warning("Slack auth.test failed: %s (notifications wait in the outbox)", exc)


def run_bot(args: argparse.Namespace) -> int:
    env = os.environ
    settings = resolve_bot_settings(args)
    bearer = read_bearer_token(args.token_file, env)
    slack_token_file = args.slack_token_file or env.get(c.ENV_SLACK_BOT_TOKEN_FILE, "").strip() or None
    if slack_token_file:
        slack_token = read_token_file(SLACK_TOKEN_FILE_FLAG, slack_token_file)
    else:
        slack_token = env.get(c.ENV_SLACK_BOT_TOKEN, "").strip()
        if not slack_token:
            raise ConfigError(
                f"${c.ENV_SLACK_BOT_TOKEN} is not set (the Slack bot token, xoxb-...; or give a file holding "
                f"it: {SLACK_TOKEN_FILE_FLAG} or ${c.ENV_SLACK_BOT_TOKEN_FILE})"
            )
        one_word_secret(f"${c.ENV_SLACK_BOT_TOKEN}", slack_token)
    if not settings.channel and not settings.routes:
        raise ConfigError("no channel: give --channel (or bot.channel / bot.routes in --config)")
    signing_secret = env.get(c.ENV_SLACK_SIGNING_SECRET, "").strip()
    api_url = slack_api_url(env.get(c.ENV_SLACK_API_URL, "").strip() or c.DEFAULT_SLACK_API_URL)
    try:
        bot = Bot(
            settings,
            args.outbox or DEFAULT_OUTBOX,
            bearer,
            slack_token,
            api_url,
            signing_secret,
            slack_token_file,
        )
    except OutboxError as exc:
        print(f"triton-sre bot: {exc}", file=sys.stderr)
        return c.EXIT_USAGE
    except socket.gaierror as exc:  # the flag's host does not resolve: the input, not the machine (exit 2)
        reason = exc.strerror or exc
        raise ConfigError(f"--listen {settings.listen}: its host does not resolve ({reason})") from None
    except OSError as exc:
        print(f"triton-sre bot: cannot listen on {settings.listen}: {exc.strerror or exc}", file=sys.stderr)
        return c.EXIT_FAILURE
    stop = stop_on_signals()
    pending = bot.outbox.pending()
    log.info(
        "bot listening on %s (webhook %s%s, slash commands %s); Slack API %s, default channel %s; "
        "outbox %s (%d pending)",
        listening_on(settings.listen_address[0], bot.server.port),
        bot.url,
        c.PATH_BOT_ALERTMANAGER,
        "on" if signing_secret else "off (no signing secret)",
        api_url,
        settings.channel or "-",
        args.outbox or DEFAULT_OUTBOX,
        pending,
    )
    threading.Thread(target=_check_slack_auth, args=(bot,), name="slack-auth", daemon=True).start()
    with bot:
        wait_until_set(stop)
    log.info("bot stopped by %s", stop.by)
    return c.EXIT_OK
