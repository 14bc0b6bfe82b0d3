"""The Slack bot token kept in a file (``--slack-token-file``, ``$SLACK_BOT_TOKEN_FILE``): a mounted
Kubernetes Secret or a Docker secret, which its owner rotates in place. `token_watch` reads it again before
each ``auth.test`` while Slack refuses the token, so the new token is taken up without a restart."""

from __future__ import annotations

import logging
from collections.abc import Callable

from triton_sre.checks import ConfigError

log = logging.getLogger(__name__)


class TokenFile:
    """The Slack token kept in a file; ``read`` gives the file's token or raises ConfigError (unreadable,
    empty, two words), never quoting it."""

    def __init__(self, path: str, read: Callable[[str], str]) -> None:
        self.path, self._read = path, read
        self._said = ""  # the last problem said, so a file that stays broken is said once

    def fresh(self, current: str) -> str | None:
        """The file's token when it differs from ``current``; None when it is the same or cannot be read."""
        try:
            token = self._read(self.path)
        except ConfigError as exc:
            if str(exc) != self._said:
                self._said = str(exc)
                log.warning("the Slack token file cannot be used (%s); keeping the token read before", exc)
            return None
        self._said = ""
        return token if token != current else None
