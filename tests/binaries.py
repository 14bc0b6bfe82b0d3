"""Tools from Debian the tests run for real: a missing one fails the test, it is never skipped."""

from __future__ import annotations

import shutil

import pytest


def binary(name: str) -> str:
    """The path of `name`, or a test failure saying how to install it."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: scripts/setup.sh installs it", pytrace=False)
    return path
