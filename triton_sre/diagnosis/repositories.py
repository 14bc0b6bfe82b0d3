"""Pure: the model repositories a log's options table lists (``| model_repository_path[1] | /models |``,
tritonserver.cc's table, one row per ``--model-repository``), and what they tell a file from a repository.

Core words a path it cannot stat the same way whether the path is a model's file or a repository itself
(``Internal: failed to stat file <path>``, local.h). With ``--exit-on-error=false`` tritonserver.cc logs
ServerNew's error alone, without its ``error: creating server`` head; the options table printed just before
it is then the only witness: a path the table lists as a repository is that repository, not a model's file
(repository-path-invalid, not model-file-missing).
"""

from __future__ import annotations

import re

from triton_sre import conventions as c

__all__ = ["MAX_REPOSITORIES", "OPTION_PREFIX", "RepositoryPaths"]

MAX_REPOSITORIES = 64
"""Rows kept (a server takes a few ``--model-repository`` flags; a paste may hold several tables)."""
OPTION_PREFIX = "model_repository_path["
"""The options table's row name for the Nth ``--model-repository`` (logparse passes these rows on)."""
_ROW = re.compile(r"model_repository_path\[\d+\]\s+(\S+)")
_STAT = re.compile(r"\bfailed to stat file (\S+)")


def _normal(path: str) -> str:
    path = path.strip("'\"|.,;")
    return path.rstrip("/") or path


class RepositoryPaths:
    """The repository paths read so far; `cause` re-reads a missing file that is one of them."""

    __slots__ = ("_paths",)

    def __init__(self) -> None:
        self._paths: set[str] = set()

    def note(self, row: str) -> None:
        """An options-table row as logparse passes it: ``model_repository_path[N] <path>``."""
        m = _ROW.match(row)
        if m and len(self._paths) < MAX_REPOSITORIES:
            self._paths.add(_normal(m[1]))

    def cause(self, runbook: str, message: str) -> str:
        """``runbook`` as read from ``message``, unless core could not stat a path the table lists as a
        repository: then the repository path is wrong, whatever the wording says of a file."""
        if runbook != c.RUNBOOK_MODEL_FILE_MISSING or not self._paths:
            return runbook
        m = _STAT.search(message)
        if m and _normal(m[1]) in self._paths:
            return c.RUNBOOK_REPOSITORY_PATH_INVALID
        return runbook
