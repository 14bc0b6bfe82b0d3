"""Slack refusing the bot's token while it runs (a token revoked, an app uninstalled, a deactivated account).

Before (tidy37) a refused token showed only as the outcome counter
(`triton_sre_bot_slack_calls_total{outcome="invalid_auth"}`): each pending notification retried on its
own, forever, each retry a warning. Now the first refusal is said once, as an error naming Slack's code
(never the token), `/healthz` answers ``degraded`` with the reason, `triton_sre_bot_slack_token_usable`
reads 0, and the delivery loop pauses: the notifications stay pending in the outbox (a file, kept across
restarts). While paused the loop asks Slack's ``auth.test`` alone, with the retry backoff
(`retry_base_seconds` doubling up to `retry_max_seconds`); once Slack takes the token again (an account
reactivated) it says so and delivers what waited. A token given in the environment (``$SLACK_BOT_TOKEN``)
is read at start: a new one takes a restart, and the restarted bot delivers the outbox's pending
notifications. A token given as a file (``--slack-token-file``, ``$SLACK_BOT_TOKEN_FILE``: a mounted
Kubernetes Secret, a Docker secret) is read again before each ``auth.test`` while Slack refuses the token,
so a rotated secret is taken up without a restart (`token_file.TokenFile`)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone

from triton_sre import conventions as c
from triton_sre.bot.config import BotSettings
from triton_sre.bot.slack import AUTH_ERRORS, DeliveryError, backoff

log = logging.getLogger(__name__)


class TokenWatch:
    """Whether Slack takes the bot's token, as the last call that could tell said."""

    def __init__(
        self,
        check: Callable[[], str],
        pending: Callable[[], int],
        settings: BotSettings,
        clock: Callable[[], float] = time.time,
        renew: Callable[[], str] | None = None,
    ) -> None:
        self._check = check  # auth.test: who the token is, or DeliveryError
        self._renew = renew  # the token file's name when it now holds another token, else ""
        self._pending = pending
        self._base, self._cap = settings.retry_base_seconds, settings.retry_max_seconds
        self._clock = clock
        self._lock = threading.Lock()  # /healthz and /metrics read it from the HTTP threads
        self._refused = ""  # Slack's error code while it refuses the token
        self._since = 0.0
        self._asked = 0  # auth.test calls refused since the refusal

    @property
    def refused(self) -> str:
        return self._refused

    def usable(self) -> bool:
        return not self._refused

    def problem(self) -> str:
        """Why deliveries wait, for /healthz; empty while the token is taken."""
        with self._lock:
            if not self._refused:
                return ""
            since = datetime.fromtimestamp(self._since, timezone.utc).isoformat(timespec="seconds")
            return (
                f"Slack refuses the bot token ({self._refused}) since {since}; notifications wait in the "
                f"outbox until it takes a token: {self._fix()}"
            )

    def _fix(self) -> str:
        if self._renew is not None:
            return "write a valid one to the token file (read again before each retry)"
        return f"set ${c.ENV_SLACK_BOT_TOKEN} to a valid one, restart the bot"

    def refuse(self, error: str, said: str) -> float:
        """Slack refused the token (``error``, one of AUTH_ERRORS; ``said``: the failed call, without the
        token): the pause before asking again."""
        with self._lock:
            first = not self._refused
            if first:
                self._since = self._clock()
            self._refused = error
            pause = backoff(self._asked, self._base, self._cap)
            self._asked += 1
        if first:
            log.error(
                "Slack refuses the bot token (%s): deliveries paused, %d notification(s) kept in the "
                "outbox until Slack takes a token; %s",
                said,
                self._pending(),
                self._fix(),
            )
        return pause

    def pause_for(self, exc: DeliveryError) -> float | None:
        """The pause a failed delivery call gives when Slack refused the token; None for any other failure."""
        return self.refuse(exc.error, str(exc)) if exc.error in AUTH_ERRORS else None

    def ask(self) -> float | None:
        """Ask Slack (auth.test) whether it takes the token now: None when it does (deliveries go on), else
        the pause before asking again."""
        if self._renew is not None and (name := self._renew()):
            log.info("read a new Slack token from %s; asking Slack whether it takes it", name)
        try:
            who = self._check()
        except DeliveryError as exc:
            pause = self.pause_for(exc)
            if pause is not None:
                return pause
            log.warning("Slack auth.test failed: %s; asking again later", exc)
            return backoff(self._asked, self._base, self._cap)
        self.accepted(who)
        return None

    def accepted(self, who: str) -> None:
        with self._lock:
            was, self._refused, self._asked = self._refused, "", 0
        if was:
            log.info(
                "Slack takes the bot token again (posting as %s); delivering the %d pending notification(s)",
                who,
                self._pending(),
            )
