"""Kubernetes objects checked the way an API server with strict field validation would check them.

Built-in kinds (Deployment, HorizontalPodAutoscaler, ...) go through `kubernetes-validate`'s strict
schemas for one Kubernetes release. Custom resources (KEDA, Argo Rollouts, Flagger, the Prometheus
Operator) go through the `openAPIV3Schema` of their CRD, taken from each project's repository at a
release tag; `tests/data/crds/sources.json` names repository, tag, commit and path for every file.
A CRD schema alone accepts unknown fields (the API server prunes them), so a field the schema does
not declare is reported too, as `kubectl apply --validate=strict` would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate

CRD_DIR = Path(__file__).parent / "data" / "crds"
KUBERNETES_RELEASE = "1.30"  # the oldest release the deploy/ examples promise to work on


def crd_sources() -> list[dict[str, str]]:
    sources: list[dict[str, str]] = json.loads((CRD_DIR / "sources.json").read_text())
    return sources


def _crd_schema(api_version: str, kind: str) -> dict[str, Any] | None:
    for source in crd_sources():
        if source["apiVersion"] == api_version and source["kind"] == kind:
            schema: dict[str, Any] = json.loads((CRD_DIR / source["file"]).read_text())
            return schema
    return None


def _unknown_fields(value: Any, schema: dict[str, Any], path: str) -> Iterator[str]:
    """Fields the schema does not declare, where it does not say unknown fields are kept."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if props is not None and key in props:
                yield from _unknown_fields(item, props[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                yield from _unknown_fields(item, extra, f"{path}.{key}")
            elif props is not None and extra is not True:
                yield f"{path}.{key}: unknown field"
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from _unknown_fields(item, schema["items"], f"{path}[{i}]")


def _openapi_to_jsonschema(schema: Any) -> Any:
    """OpenAPI v3 `nullable` and `int-or-string` in JSON Schema terms (the rest is the same)."""
    if isinstance(schema, list):
        return [_openapi_to_jsonschema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _openapi_to_jsonschema(v) for k, v in schema.items()}
    if out.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def problems(obj: dict[str, Any]) -> list[str]:
    """Every reason the API server would refuse `obj` (empty when it would accept it)."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    if not isinstance(obj.get("metadata", {}).get("name"), str):
        return [f"{kind}: metadata.name is required"]
    schema = _crd_schema(api_version, kind)
    if schema is None:
        try:
            kubernetes_validate.validate(obj, KUBERNETES_RELEASE, strict=True)
        except kubernetes_validate.ValidationError as err:
            return [f"{kind}: {err.message} at {'.'.join(str(p) for p in err.path)}"]
        except kubernetes_validate.SchemaNotFoundError:
            where = f"neither Kubernetes {KUBERNETES_RELEASE} nor a kept CRD"
            return [f"{api_version} {kind}: no schema ({where})"]
        return []
    validator = jsonschema.Draft7Validator(_openapi_to_jsonschema(schema))
    found = [
        f"{kind}: {e.message} at {'.'.join(str(p) for p in e.absolute_path) or '(root)'}"
        for e in validator.iter_errors(obj)
    ]
    found += [f"{kind}: {p}" for p in _unknown_fields(obj, schema, "")]
    return found
