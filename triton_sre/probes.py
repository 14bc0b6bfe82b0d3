"""Startup-probe sizing from measured model load times, shared by `lint` and `report` (pure).

Its own module so that lint (and the CLI that builds lint's parser) does not import the report's
pandas code for one formula.
"""

from __future__ import annotations

STARTUP_MARGIN_S = 30.0


def startup_budget(slowest_load_s: float) -> float:
    """The startup-probe budget a measured load calls for: 2 x the slowest load + a margin."""
    return 2.0 * slowest_load_s + STARTUP_MARGIN_S
