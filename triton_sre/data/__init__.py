"""The files the package ships from the repository's top level, found with importlib.resources.

One mechanism for all of them: each file lives once, at the repository's top level where users and
runbook links see it (`slos.yaml`, `runbooks/`); this folder holds a relative symlink to it, which
the build (setuptools package data, pyproject.toml) resolves into a real copy in the wheel. Code
reads them only through `shipped`, so a checkout, an editable and a regular install behave alike.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped(name: str) -> Path:
    """The shipped file or folder `name` (`slos.yaml`, `runbooks`) as a path on disk."""
    return Path(str(resources.files(__name__).joinpath(name)))
