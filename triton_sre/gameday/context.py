"""What a scenario can do to the gameday stack: `Context`, handed to every `inject` and `restore`.

Only the gameday calls Triton's model-control API, and only on the stack it started: the calls
live here, on the Context of that stack. Traffic generators and background threads a scenario
starts are tracked, so the gameday stops them even when a scenario fails or is interrupted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import requests

from triton_sre import conventions as c
from triton_sre.demo.traffic import TrafficDriver, slow_model_payload
from triton_sre.gameday.stack import ECHO_TEMPLATE, GAMEDAY_MODELS, TAIL_MODEL, GamedayStack, add_echo_model
from triton_sre.httpclient import DeadlineExceeded, fetch, new_session
from triton_sre.stack.loads import control_url

HTTP_TIMEOUT = 10.0
LOAD_TIMEOUT = 300.0  # a load through model control answers once initialize() returned


def states_of(rows: list[dict[str, Any]]) -> dict[str, str]:
    """model -> state from the repository index's rows. Triton lists a model once per version it knows
    (2.51: version 1 READY and an unloaded version 2 UNAVAILABLE after a rollback): a model with a READY
    version is READY, else its last row's state (read before, the unloaded version hid the one serving)."""
    states: dict[str, str] = {}
    for row in rows:
        name = str(row.get("name"))
        if states.get(name) != c.STATE_READY:
            states[name] = str(row.get("state", ""))
    return states


class Context:
    """The stack under test, its model repository and the traffic running against it."""

    def __init__(self, stack: GamedayStack, repository: Path, say: Callable[[str], None]) -> None:
        self.stack = stack
        self.repository = repository
        self.say = say
        self.triton_url = stack.url("triton_http")
        self.state: dict[str, Any] = {}  # a scenario's own notes between inject and restore
        self._traffic: dict[str, TrafficDriver] = {}
        self._threads: list[threading.Thread] = []
        # the project's client: a deadline on each whole answer, redirects on this host only
        self._http = new_session(self.triton_url)

    # -- models (model control: this stack only)
    def add_model(self, name: str) -> Path:
        """A copy of the gameday's echo model under `name` in the repository (not loaded yet)."""
        return add_echo_model(self.repository, name)

    @staticmethod
    def echo_source() -> bytes:
        return (GAMEDAY_MODELS / ECHO_TEMPLATE / "1" / "model.py").read_bytes()

    def load(self, model: str) -> tuple[int, str]:
        """POST Triton's load of `model`: (HTTP status, error text or "")."""
        response = fetch(self._http, "POST", control_url(self.triton_url, model, "load"), LOAD_TIMEOUT)
        text = "" if response.status_code == 200 else response.text[:300]
        return response.status_code, text

    def unload(self, model: str) -> int:
        response = fetch(self._http, "POST", control_url(self.triton_url, model, "unload"), HTTP_TIMEOUT)
        return response.status_code

    def states(self) -> dict[str, str]:
        """model -> state from Triton's repository index ({} while Triton does not answer)."""
        try:
            index = fetch(self._http, "POST", f"{self.triton_url}/v2/repository/index", HTTP_TIMEOUT, json={})
            rows = index.json() if index.status_code == 200 else []
        except (requests.RequestException, ValueError, DeadlineExceeded):
            return {}
        return states_of(rows)

    def ready(self, models: tuple[str, ...]) -> bool:
        states = self.states()
        return bool(states) and all(states.get(m) == c.STATE_READY for m in models)

    def model_dir(self, model: str) -> Path:
        return self.repository / model

    # -- traffic
    def traffic(self, name: str, mix: Mapping[str, int], **options: Any) -> TrafficDriver:
        """Start (or return the running) traffic `name`: model -> concurrent clients."""
        if name in self._traffic:
            return self._traffic[name]
        payloads = {TAIL_MODEL: slow_model_payload()} if TAIL_MODEL in mix else {}
        payloads.update(options.pop("payloads", None) or {})
        driver = TrafficDriver(self.triton_url, mix, payloads=payloads, **options)
        self._traffic[name] = driver.start()
        return driver

    def stop_traffic(self, name: str) -> None:
        driver = self._traffic.pop(name, None)
        if driver is not None:
            driver.stop(timeout=5)

    def stop_all_traffic(self) -> None:
        for name in list(self._traffic):
            self.stop_traffic(name)

    # -- background work (a load that blocks, a component coming back later)
    def background(self, name: str, target: Callable[[], Any]) -> threading.Thread:
        thread = threading.Thread(target=target, name=f"gameday-{name}", daemon=True)
        self._threads.append(thread)
        thread.start()
        return thread

    def join_background(self, timeout: float = 30.0) -> None:
        for thread in self._threads:
            thread.join(timeout)
        self._threads = [t for t in self._threads if t.is_alive()]
