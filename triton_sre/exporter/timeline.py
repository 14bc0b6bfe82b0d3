"""Pure: the poll window's own timeline, the wall clock that never goes back.

The wall clock can step back between two polls (NTP, a VM restored from a snapshot): a poll read as
older than the window emptied it, and every model state and rate was gone until the clock caught up
with the polls of the future it left. The timeline follows the wall clock, and where it stepped back
goes on from the last poll by the monotonic seconds since, keeping the step as an offset; a later
step forward (the step back corrected) spends that offset instead of adding to it.
"""

from __future__ import annotations

import logging

__all__ = ["Timeline"]

log = logging.getLogger(__name__)


class Timeline:
    """`at(wall, monotonic)` for each poll, in order: its time on the window's timeline."""

    def __init__(self) -> None:
        self.offset = 0.0  # the timeline minus the wall clock (> 0 after a step back)
        self._last: tuple[float, float] | None = None  # (timeline, monotonic) of the last poll

    def at(self, wall: float, monotonic: float) -> float:
        """The poll's time: the wall clock plus the offset, never before the last poll's. Spans,
        rates and load times never go negative, and no poll is read as older than the window."""
        at = wall + self.offset
        last = self._last
        if last is not None:
            steady = last[0] + max(0.0, monotonic - last[1])  # the last poll plus the seconds since
            if at < last[0]:
                log.warning(
                    "the clock stepped back %.3f s between two polls: the window keeps its own time",
                    last[0] - at,
                )
                at = steady
            elif self.offset > 0 and at > steady:
                at = max(steady, wall)
            self.offset = at - wall
        self._last = (at, monotonic)
        return at
