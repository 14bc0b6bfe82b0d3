"""Byte sizes for people: `human_bytes`. A leaf: it imports nothing of triton-sre (the bot's
messages and the report's capacity tables format memory with it)."""

from __future__ import annotations

import math

__all__ = ["human_bytes"]


def human_bytes(value: float | None) -> str:
    """1.5 GiB, 700.00 MiB, 512 B; an en dash when unknown."""
    if value is None or not math.isfinite(value):
        return "–"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            return f"{value / size:.2f} {unit}"
    return f"{value:.0f} B"
