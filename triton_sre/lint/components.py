"""Pure (package data read once): what each Triton NGC release's container ships, for `lint --release`.

``components.yaml`` holds, per release, the versions its own release branch names (build.py's version map,
its CPU base image, the release notes kept beside it) with the file each came from; a field the branch
does not name is null, and no value is carried over from a neighbouring release. A release whose branch
could not be read (26.09 on) has a row from its GitHub release page: the server version, nothing else
(`builds_tensorflow` null). ONNX Runtime's compatibility table gives the highest ONNX opset and IR version
each ONNX Runtime minor release reads.
Two fields are recorded beside the image's own: the TensorRT the Windows build pins (``tensorrt_windows``,
another build's, never read as the Linux image's) and the PyTorch backend's LibTorch (``pytorch``, NGC's
build string, no check uses it).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

__all__ = ["OrtSupport", "Release", "Table", "parse_table", "release", "table"]

COMPONENTS_FILE: Final = "components.yaml"
_RELEASE: Final = re.compile(r"\d\d\.\d\d")
_VERSION: Final = re.compile(r"\d+(?:\.\d+)+")
_TORCH: Final = re.compile(r"\d+\.\d+\.\d+(?:[a-z]+\d*)?(?:\+[0-9a-f]+)?")
"""An NGC PyTorch build without its ``.nvYY.M`` suffix: ``2.4.0a0+3bcc3cddb5``."""
_FIELDS: Final = ("triton", "onnxruntime", "openvino", "ubuntu", "python", "tensorrt", "tensorrt_windows")
_URLS: Final = (
    "source",
    "python_source",
    "notes",
    "tensorrt_source",
    "tensorrt_windows_source",
    "pytorch_source",
)
_TEXTS: Final = ("tensorrt_note", "pytorch_note")
_SOURCED: Final = (("tensorrt_windows", "tensorrt_windows_source"), ("pytorch", "pytorch_source"))
"""Fields whose one source is their own ``*_source`` URL."""


@dataclass(frozen=True, slots=True)
class OrtSupport:
    opset: int
    """The highest default-domain (ai.onnx) opset the ONNX Runtime release implements."""
    ir_version: int


@dataclass(frozen=True, slots=True)
class Release:
    release: str
    triton: str | None
    onnxruntime: str | None
    openvino: str | None
    ubuntu: str | None
    python: str | None
    """The container's Python minor (``"3.10"``): the interpreter its Python backend stub runs."""
    tensorrt: str | None
    builds_tensorflow: bool | None
    """False where the release's build.py cannot build the TensorFlow backend (the image cannot ship it);
    None where it was not read."""
    source: str
    python_source: str | None = None
    notes: str | None = None
    tensorrt_source: str | None = None
    """The NGC release-notes page whose container list names ``tensorrt`` (when ``notes`` does not)."""
    tensorrt_note: str | None = None
    """What a reader of ``tensorrt`` must know about its source (another page, an image variant)."""
    tensorrt_windows: str | None = None
    """The TensorRT the release's Windows build pins (Dockerfile.win10.min): not the Linux image's."""
    tensorrt_windows_source: str | None = None
    pytorch: str | None = None
    """The PyTorch backend's LibTorch: the torch of NGC's pytorch image the release's build names."""
    pytorch_source: str | None = None
    pytorch_note: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    releases: dict[str, Release]
    onnxruntime_support: dict[str, OrtSupport]
    onnxruntime_support_source: str

    def ort_support(self, version: str | None) -> OrtSupport | None:
        """What ONNX Runtime ``version`` (``"1.18.0"``) reads, by its minor release; None when unknown."""
        if not version:
            return None
        return self.onnxruntime_support.get(".".join(version.split(".")[:2]))


def _fail(message: str) -> ValueError:
    return ValueError(f"{COMPONENTS_FILE}: {message}")


def _release(name: Any, row: Any) -> Release:
    if not (isinstance(name, str) and _RELEASE.fullmatch(name) and isinstance(row, dict)):
        raise _fail(f"malformed release {name!r}")
    unknown = set(row) - {*_FIELDS, *_URLS, *_TEXTS, "builds_tensorflow", "pytorch"}
    if unknown:
        raise _fail(f"release {name}: unknown field(s) {', '.join(sorted(unknown))}")
    values = {k: row.get(k) for k in _FIELDS}
    for key, value in values.items():
        if value is not None and not (isinstance(value, str) and _VERSION.fullmatch(value)):
            raise _fail(f"release {name}: {key} must be a version string or null, got {value!r}")
    torch = row.get("pytorch")
    if torch is not None and not (isinstance(torch, str) and _TORCH.fullmatch(torch)):
        raise _fail(f"release {name}: pytorch must be a PyTorch build string or null, got {torch!r}")
    urls = {k: row.get(k) for k in _URLS}
    if not urls["source"]:
        raise _fail(f"release {name}: no source")
    for key, url in urls.items():
        if url is not None and not (isinstance(url, str) and url.startswith("https://")):
            raise _fail(f"release {name}: {key} must be an https URL, got {url!r}")
    if values["python"] and not urls["python_source"] and not urls["notes"]:
        raise _fail(f"release {name}: python without python_source or notes")
    if values["tensorrt"] and not urls["notes"] and not urls["tensorrt_source"]:
        raise _fail(f"release {name}: tensorrt without notes or tensorrt_source")
    for field, url in _SOURCED:
        if row.get(field) and not urls[url]:
            raise _fail(f"release {name}: {field} without {url}")
    texts = {k: row.get(k) for k in _TEXTS}
    for key, text in texts.items():
        if text is not None and not (isinstance(text, str) and text.strip()):
            raise _fail(f"release {name}: {key} must be a non-empty string")
    builds_tf = row.get("builds_tensorflow", "missing")
    if not (builds_tf is None or isinstance(builds_tf, bool)):
        raise _fail(f"release {name}: builds_tensorflow must be true, false or null (not read)")
    fields = {**values, "pytorch": torch, **urls, **texts}
    return Release(name, builds_tensorflow=builds_tf, **fields)  # type: ignore[arg-type]


def parse_table(text: str) -> Table:
    """``components.yaml`` -> Table; ValueError names the first malformed entry."""
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), dict):
        raise _fail("no 'releases' mapping")
    releases = {name: _release(name, row) for name, row in doc["releases"].items()}
    support: dict[str, OrtSupport] = {}
    for version, row in (doc.get("onnxruntime_support") or {}).items():
        if not (
            isinstance(version, str)
            and re.fullmatch(r"\d+\.\d+", version)
            and isinstance(row, dict)
            and isinstance(row.get("opset"), int)
            and isinstance(row.get("ir_version"), int)
        ):
            raise _fail(f"malformed onnxruntime_support entry {version!r}")
        support[version] = OrtSupport(row["opset"], row["ir_version"])
    source = doc.get("onnxruntime_support_source")
    if support and not (isinstance(source, str) and source.startswith("https://")):
        raise _fail("onnxruntime_support without an https onnxruntime_support_source")
    return Table(releases, support, source or "")


@functools.cache
def table() -> Table:
    """The table shipped with the package."""
    text = resources.files("triton_sre.lint").joinpath(COMPONENTS_FILE).read_text(encoding="utf-8")
    return parse_table(text)


def release(name: str) -> Release:
    """The release ``name`` (``"24.05"``); KeyError names the releases the table knows."""
    rows = table().releases
    if name not in rows:
        known = sorted(rows)
        raise KeyError(
            f"release {name!r} is not in the component table (known: {known[0]}-{known[-1]}: "
            f"{', '.join(known)})"
        )
    return rows[name]
