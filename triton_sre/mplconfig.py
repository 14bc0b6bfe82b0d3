"""Leaf: a writable configuration folder for matplotlib before it is imported (report, bot charts).

matplotlib keeps its configuration under `$MPLCONFIGDIR`, else `$XDG_CONFIG_HOME/matplotlib` or
`~/.config/matplotlib`, and its font cache under `$MPLCONFIGDIR`, else `$XDG_CACHE_HOME/matplotlib` or
`~/.cache/matplotlib`. Where either cannot be written (a read-only HOME: a pod with
`readOnlyRootFilesystem`, a service user whose HOME is `/nonexistent`) matplotlib printed two WARNING
lines and an INFO line on every run and rebuilt its font list each time. `use_writable_config_dir`
points it at a private folder under the temp folder instead, kept between runs. `drawn` is text
(model names, label values, alert titles) as a chart draws it, never as mathtext.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from triton_sre.redact import printable

__all__ = ["drawn", "use_writable_config_dir"]

MPLCONFIGDIR = "MPLCONFIGDIR"


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def use_writable_config_dir() -> None:
    """Set `$MPLCONFIGDIR` to a private folder when matplotlib's own choices (its configuration
    folder and its font cache's) cannot be written; leave everything as it is when they can, when the
    variable is set, or when no folder can be."""
    if os.environ.get(MPLCONFIGDIR):
        return
    folders = _own_choices()
    if folders is not None and all(_writable(folder) for folder in folders):
        return
    uid = os.getuid() if hasattr(os, "getuid") else 0
    private = Path(tempfile.gettempdir()) / f"triton-sre-matplotlib-{uid}"
    if _writable(private) and private.stat().st_uid == uid:  # not a folder another user planted
        os.environ[MPLCONFIGDIR] = str(private)


def _own_choices() -> list[Path] | None:
    """The configuration and cache folders matplotlib picks without `$MPLCONFIGDIR` (matplotlib's
    `_get_xdg_config_dir` / `_get_xdg_cache_dir`); None when there is no home to find them in."""
    try:
        return [
            Path(os.environ.get(variable) or Path.home() / default) / "matplotlib"
            for variable, default in (("XDG_CONFIG_HOME", ".config"), ("XDG_CACHE_HOME", ".cache"))
        ]
    except RuntimeError:  # no HOME and no passwd entry
        return None


DRAWN_CHARS = 80


def drawn(text: object, limit: int = DRAWN_CHARS) -> str:
    """Text as a chart draws it: control characters as escapes (`redact.printable`: no font has a glyph
    for a tab), ``$`` escaped: two of them made matplotlib parse the text as mathtext, and ``$\\foo$``
    (a model name, a label value, a PromQL expression) raised ValueError when the figure was drawn.
    Past `limit` characters it is cut (``…``): a 10,000-character model name left no room for the plot
    (matplotlib's `Tight layout not applied` warning on stderr, an empty chart)."""
    shown = printable(text)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return shown.replace("$", r"\$")
