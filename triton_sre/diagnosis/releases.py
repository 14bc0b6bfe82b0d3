"""Pure: which Triton release a log comes from, and what is known about a finding in that release.

The release is read from what the server prints (first match wins, the log is not searched
further): the NGC banner (``NVIDIA Release 24.08 (build 107631420)``, ``Triton Server Version
2.49.0``) and the options table (``| server_version | 2.50.0 |``); `server_release_from_version`
maps a server version to its NGC release (2.7.0 = 21.02, monthly since; 21.01 had no release, 25.07
was 2.59.1).

Where the server prints neither, the container image the log runs names it: ``docker run ...
nvcr.io/nvidia/tritonserver:24.08-py3``, kubelet's ``Container image "...:24.03-py3" already present``,
a Dockerfile's ``FROM``. `ReleaseReader` takes that release only when the log names one release of
the server image and no other (a paste that tried three tags names none of them); the client SDK
image (``-py3-sdk``) is no server.

`advice` returns the sentences to append to a finding's one-line fix in that release: the known issues
that explain it (`known_issues`, the table ``known_issues.yaml``: the release notes' Known Issues and
other public sources, each entry with its source and release range), then what the release needs of the
host (`ngc_requirements`: CUDA, driver, compute capability) for a driver or GPU finding.
"""

from __future__ import annotations

import re

from triton_sre.diagnosis import known_issues, ngc_requirements

__all__ = [
    "ReleaseReader",
    "advice",
    "image_release_in",
    "release_in",
    "server_release_from_version",
    "server_version_of_release",
]

_NGC_RELEASE = re.compile(r"\bNVIDIA Release (\d\d)\.(\d\d)\b")
_SERVER_VERSION = re.compile(r"(?:Triton Server Version|server_version)\s*\|?\s*(\d+)\.(\d+)\.(\d+)")
# the server image's tag: "tritonserver:24.08-py3", "-trtllm-python-py3", "-py3-igpu", "20.03.1-py3"
_IMAGE_TAG = re.compile(r"\btritonserver:(\d\d)\.(\d\d)(?:\.\d+)?(-[\w.-]*)?")


_SKIPPED_2_60 = 60
"""From 2.60.0 on, one month later again: 25.07 got no minor version of its own (2.59.0 is 25.06, 2.60.0 is
25.08, 2.75.0 is 26.11, github.com/triton-inference-server/server/releases/tag/v2.75.0)."""
_PATCH_RELEASES = {(59, 1): "25.07"}
"""Patch versions that shipped as a monthly release of their own: 25.07's images hold 2.59.1 (the server's
r25.07 TRITON_VERSION; docs/introduction/compatibility.md lists 25.07 trtllm and vllm images), though the
release notes go from 25.06 to 25.08."""


def server_release_from_version(major: int, minor: int, patch: int = 0) -> str | None:
    """The NGC release (``YY.MM``) of a Triton server version, for 2.7.0 (21.02) and later."""
    if major != 2 or minor < 7:
        return None
    if (minor, patch) in _PATCH_RELEASES:
        return _PATCH_RELEASES[(minor, patch)]
    # 2.7 -> 21.02: one month (21.01) had no release; 25.07 had no minor version (2.59.1).
    months = minor + 7 + (minor >= _SKIPPED_2_60)
    return f"{20 + (months - 1) // 12:02d}.{(months - 1) % 12 + 1:02d}"


def server_version_of_release(release: str) -> str | None:
    """The Triton server version (``2.N``) of an NGC release ``YY.MM`` from 21.02 on (the inverse of
    `server_release_from_version`; 25.07 is 2.59, as 25.06); None for earlier or malformed releases."""
    patched = next((minor for (minor, _), name in _PATCH_RELEASES.items() if name == release), None)
    if patched is not None:
        return f"2.{patched}"
    m = re.fullmatch(r"(\d\d)\.(\d\d)", release)
    if m is None:
        return None
    minor = (int(m.group(1)) - 20) * 12 + int(m.group(2)) - 7
    minor -= minor > _SKIPPED_2_60
    return f"2.{minor}" if minor >= 7 else None


def release_in(text: str) -> str | None:
    """The NGC release a line names, if it is a banner or server-version line."""
    m = _NGC_RELEASE.search(text)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    m = _SERVER_VERSION.search(text)
    if m:
        return server_release_from_version(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return None


def image_release_in(text: str) -> set[str]:
    """The NGC releases of the Triton server images a line names (the SDK image is no server)."""
    return {
        f"{m.group(1)}.{m.group(2)}" for m in _IMAGE_TAG.finditer(text) if "sdk" not in (m.group(3) or "")
    }


class ReleaseReader:
    """The release a log comes from, read line by line: the server's own word first (the first
    banner or ``server_version`` line), else the one server image the log names."""

    __slots__ = ("_images", "_printed")

    def __init__(self) -> None:
        self._printed: str | None = None
        self._images: set[str] = set()

    def note(self, text: str) -> None:
        if self._printed is not None:
            return
        self._printed = release_in(text)
        if self._printed is None and len(self._images) < 2 and "tritonserver:" in text:
            self._images |= image_release_in(text)

    def note_version(self, version: str) -> None:
        """The version a live server reports (``GET /v2``: ``2.51.0``)."""
        m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-]\S*)?", version.strip())
        if m and self._printed is None:
            self._printed = server_release_from_version(
                int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
            )

    @property
    def release(self) -> str | None:
        if self._printed is not None:
            return self._printed
        return next(iter(self._images)) if len(self._images) == 1 else None


def advice(runbook: str, text: str, release: str | None) -> str | None:
    """What is known about a finding of ``runbook`` whose evidence/message is ``text`` in ``release``: the
    matching known issues (`known_issues.notes`), then what the release needs of the host."""
    if release is None:
        return None
    notes = known_issues.notes(runbook, text, release)
    needs = ngc_requirements.advice(runbook, text, release)  # what the release needs of the host
    if needs:
        notes.append(needs)
    return " ".join(notes) or None
