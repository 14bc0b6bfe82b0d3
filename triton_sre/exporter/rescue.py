"""The HTTP API side of a poll, taken over by a second thread when the metrics port is slow.

The exporter's poll reads the metrics, then the repository index and the statistics, under one
deadline. When the metrics are on another listener and their fetch hangs, the API side would get
no time left: `Rescue` starts it on a second thread at a share of the deadline instead. I/O only
through the call it is given; a leaf (threading and OpenTelemetry's context).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context


class Rescue:
    """The poll's HTTP API side, taken over by a second thread only when the metrics fetch is still
    running at `after` seconds (a hung metrics port must not spend the API's time).

    In a healthy poll the metrics arrive first: `keep()` claims the API side for the poll thread,
    which reads it next (the metrics are parsed after it): all on the poll thread's heap, never
    during a parse. (Reading the API side on a second thread during every parse took the peak RSS
    from 99 to 122 MB at 1,000 models × 2 versions: both at once, and the second thread's in
    another malloc arena.) Whoever claims first reads it; `result()` joins the thread, whose
    fetches end at the poll's deadline."""

    def __init__(self, call: Callable[[], Any], after: float) -> None:
        parent = otel_context.get_current()  # its spans stay children of the poll's span
        self._claim = threading.Lock()
        self._owner: str | None = None
        self._fetched = threading.Event()
        self._result: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            if self._fetched.wait(after) or not self._take("rescue"):
                return
            token = otel_context.attach(parent)
            try:
                self._result = call()
            except BaseException as exc:  # handed to the poll thread, which counts it
                self._error = exc
            finally:
                otel_context.detach(token)

        self._thread = threading.Thread(target=run, name="triton-sre-poll-api", daemon=True)
        self._thread.start()

    def _take(self, who: str) -> bool:
        with self._claim:
            if self._owner is None:
                self._owner = who
            return self._owner == who

    def keep(self) -> None:
        """The metrics fetch ended: the poll thread reads the API side unless the rescue has begun."""
        self._take("poll")
        self._fetched.set()

    @property
    def rescued(self) -> bool:
        return self._owner == "rescue"

    def join(self) -> None:
        self._fetched.set()  # a rescue not yet begun never begins
        self._take("poll")
        self._thread.join()

    def result(self) -> Any:
        self.join()
        if self._error is not None:
            raise self._error
        return self._result
