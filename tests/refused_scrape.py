"""The exporter's own samples of a repository whose config the real Triton 2.51 refuses (journey26's
reranker: in the index by name alone) beside one that loads, for tests that feed them to Prometheus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from corpus import refused_config_repository
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from triton_sre import conventions as c
from triton_sre import promql as pq
from triton_sre.config import ExporterSettings
from triton_sre.exporter.service import Exporter


def refused_config_samples(
    fresh_triton_factory: Callable[..., Any], tmp_path: Path, refused: str, fine: str, names: Iterable[str]
) -> list[Sample]:
    """One exporter poll of a real Triton serving `fine` and refusing `refused`'s config: the samples of
    the families `names`. Checks what the index gave: `refused` UNKNOWN with no version, `fine` READY."""
    triton = fresh_triton_factory(refused_config_repository(tmp_path / "models", refused, fine))
    exporter = Exporter(ExporterSettings(triton_url=triton.http_url, metrics_url=triton.metrics_url))
    exporter.poll_once()
    wanted = set(names)
    samples = [
        s
        for family in text_string_to_metric_families(exporter.metrics_text().decode())
        for s in family.samples
        if s.name in wanted
    ]
    states = {
        (s.labels[c.LABEL_MODEL], s.labels[c.LABEL_VERSION], s.labels[c.L_STATE]): s.value
        for s in samples
        if s.name == c.M_MODEL_STATE
    }
    assert states[(refused, "", c.STATE_UNKNOWN)] == 1 and states[(fine, "1", c.STATE_READY)] == 1
    return samples


def input_series(samples: Iterable[Sample], minutes: int, **labels: str) -> list[dict[str, str]]:
    """The samples as promtool input series, unchanged for `minutes` + 1 steps, `labels` (job, instance)
    added as a scrape adds them."""
    return [
        {
            "series": pq.selector(s.name, pq.equal({**labels, **s.labels}.items())),
            "values": f"{s.value:g}x{minutes}",
        }
        for s in samples
    ]
