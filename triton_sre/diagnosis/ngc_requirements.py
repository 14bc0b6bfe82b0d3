"""Pure (package data read once): what an NGC Triton release needs of the host, for advice on a finding.

A driver finding (`cuda-driver-mismatch` on a driver wording: the entrypoint's "built for NVIDIA Driver
Release X or later, but version Y was detected", CUDA's "driver version is insufficient") in a log whose
release is known gets the release's CUDA and minimum driver from its release notes, and, where the log
names the host's driver, the newest release in the table that driver meets. A GPU the image refuses
("not supported by this container", "no kernel image is available") gets the release's lowest compute
capability: 25.01 moved it from 6.0 to 7.5, which leaves Pascal and Volta GPUs on 24.12 or earlier.

The table (``ngc_requirements.yaml``) holds what the pages say, with each page; a release whose page was
not found has no row, and no row is guessed from its neighbours.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Final

import yaml

from triton_sre import conventions as c
from triton_sre.diagnosis.signals import ENTRYPOINT_DRIVER_BANNER

__all__ = ["Requirements", "advice", "parse_requirements", "requirements", "table"]

REQUIREMENTS_FILE: Final = "ngc_requirements.yaml"

_DRIVER_WORDING: Final = re.compile(
    "|".join(ENTRYPOINT_DRIVER_BANNER)
    + r"|driver version is insufficient|unsupported display driver|Forward Compatibility"
    r"|forward compatibility was attempted"
    r"|Minor Version Compatibility|PTX was compiled with an unsupported toolchain"
    r"|older than the CUDA runtime",
    re.I,
)
_GPU_WORDING: Final = re.compile(
    r"not supported by this container|No supported GPU\(s\) detected|no kernel image is available"
    r"|not compatible with the current PyTorch installation|compute capability",
    re.I,
)
# The host's driver as the entrypoint or CUDA's compatibility banner names it.
_HOST_DRIVER: Final = re.compile(
    r"(?:\bversion|kernel driver version|Using driver version) (\d{3})\.(\d+)(?:\.\d+)?"
    r"(?= was detected|[.\s]|$)"
)


@dataclass(frozen=True, slots=True)
class Requirements:
    release: str
    cuda: str | None
    driver: str | None
    """The minimum driver the release notes ask for (``"560"``, ``"460.27.04"``); None where they name
    none."""
    compat: str | None
    """The data-center forward-compatibility drivers listed, as printed."""
    compute_capability: str
    source: str


def parse_requirements(text: str) -> dict[str, Requirements]:
    """``ngc_requirements.yaml`` -> rows by release; ValueError names the first malformed row."""
    doc = yaml.safe_load(text)
    rows = doc.get("releases") if isinstance(doc, dict) else None
    if not isinstance(rows, dict):
        raise ValueError(f"{REQUIREMENTS_FILE}: no 'releases' mapping")
    table: dict[str, Requirements] = {}
    for release, row in rows.items():
        if not (isinstance(release, str) and re.fullmatch(r"\d\d\.\d\d", release) and isinstance(row, dict)):
            raise ValueError(f"{REQUIREMENTS_FILE}: malformed release {release!r}")
        values = {k: row.get(k) for k in ("cuda", "driver", "compat", "compute_capability", "source")}
        if not all(v is None or isinstance(v, str) for v in values.values()) or not values["source"]:
            raise ValueError(f"{REQUIREMENTS_FILE}: release {release}: values must be strings, with a source")
        table[release] = Requirements(release, **values)  # type: ignore[arg-type]
    return table


@functools.cache
def table() -> dict[str, Requirements]:
    """The table shipped with the package."""
    text = resources.files("triton_sre.diagnosis").joinpath(REQUIREMENTS_FILE).read_text(encoding="utf-8")
    return parse_requirements(text)


def requirements(release: str | None) -> Requirements | None:
    return table().get(release) if release else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _newest_for(driver: tuple[int, ...]) -> Requirements | None:
    """The newest release in the table whose minimum driver ``driver`` meets."""
    met = [r for r in table().values() if r.driver and _version(r.driver) <= driver]
    return max(met, key=lambda r: r.release, default=None)


def advice(runbook: str, text: str, release: str | None) -> str | None:
    """A sentence on what ``release`` needs of the host, for a driver or GPU finding (``text``: its
    evidence and message); None for other findings or a release the table lacks."""
    needs = requirements(release)
    if needs is None or runbook not in (c.RUNBOOK_CUDA_DRIVER_MISMATCH, c.RUNBOOK_PLATFORM_UNSUPPORTED):
        return None
    if _GPU_WORDING.search(text):
        older = " (Pascal and Volta GPUs: 24.12 or earlier)" if needs.compute_capability >= "7.5" else ""
        return (
            f"NGC {needs.release} supports GPUs of compute capability {needs.compute_capability} and "
            f"later{older}; see {needs.source}"
        )
    if runbook != c.RUNBOOK_CUDA_DRIVER_MISMATCH or not _DRIVER_WORDING.search(text):
        return None
    built = f"NGC {needs.release} is built on CUDA {needs.cuda}" if needs.cuda else f"NGC {needs.release}"
    if needs.driver:
        sentence = f"{built}{' and' if needs.cuda else ''} asks for NVIDIA driver {needs.driver} or later"
        if needs.compat:
            sentence += f" (data-center GPUs, through CUDA forward compatibility: {needs.compat})"
    else:
        sentence = f"{built}; its release notes name no minimum driver beyond CUDA's compatibility table"
    host = _HOST_DRIVER.search(text)
    newest = _newest_for((int(host.group(1)), int(host.group(2)))) if host else None
    if host and newest is not None and newest.release < needs.release:
        sentence += (
            f"; the host's driver {host.group(1)}.{host.group(2)} meets releases up to {newest.release}"
            + (f" (CUDA {newest.cuda})" if newest.cuda else "")
            + f": upgrade the driver, or pin the image to {newest.release}"
        )
    return f"{sentence}; see {needs.source}"
