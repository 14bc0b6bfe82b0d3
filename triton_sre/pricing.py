"""The prices the exporter's cost metrics use (config section `pricing`), as one immutable value.

Validated by `triton_sre.config`; read by the pure derivations (`exporter/derive.py`) and by the
service for the GPU energy cost (`exporter/capacity.py`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Pricing:
    """What the server costs. Without a price, cost metrics are not exported (idle share still is)."""

    currency: str = "USD"
    gpu_hour: float | None = None  # price of one GPU for one hour
    node_hour: float | None = None  # price of the whole host for one hour (CPU hosts)
    cpu_execution_slots: int = 1  # devices on a CPU host, for the idle share
    kwh: float | None = None  # price of one kWh: GPU energy cost from nv_energy_consumption
    energy_by_model: bool = False  # charge each GPU's energy cost to its models by compute share
