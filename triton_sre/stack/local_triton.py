"""Start and stop the real ``tritonserver`` shipped in the ``nvidia-pytriton`` wheel.

The wheel carries Triton 2.51 (CPU, Python backend) but not in a layout ``tritonserver`` can use as
is: the Python backend stub for each interpreter lives outside the backend folder. ``LocalTriton``
builds a private backend directory in its work directory (symlinks, site-packages is never
touched), sets ``LD_LIBRARY_PATH`` for the bundled shared libraries and puts this interpreter first
on ``PATH`` (the stub imports model code with the first ``python3`` on ``PATH``).

Another release's server (an older wheel unpacked anywhere, e.g. for tests/release_capture.py) runs
the same way: ``LocalTriton(..., install=install_in(<unpacked>/pytriton))``.

Every started server runs in its own process group and is stopped at interpreter exit, so nothing
stray survives a test session or a demo.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal

import requests

from triton_sre.httpclient import new_session
from triton_sre.logtail import tail
from triton_sre.stack.processes import death_signal_hook, free_ports, mapped_shm, process_group_members

__all__ = [
    "LocalTriton",
    "LocalTritonError",
    "ModelControlMode",
    "ServerInstall",
    "find_server",
    "install_in",
]

ModelControlMode = Literal["none", "explicit", "poll"]
LogFormat = Literal["default", "ISO8601"]

INSTALL_HINT = "pip install 'triton-sre[server]'"
STUB_NAME = "triton_python_backend_stub"


class LocalTritonError(RuntimeError):
    """The local Triton server could not be found, started or reached."""


@dataclass(frozen=True)
class ServerInstall:
    """Where the pieces of the pip-installed Triton server are."""

    binary: Path
    """The ``tritonserver`` executable."""
    python_backend_dir: Path
    """Folder with ``libtriton_python.so`` and ``triton_python_backend_utils.py``."""
    libs_dir: Path
    """Bundled shared libraries (must be on ``LD_LIBRARY_PATH``)."""
    stub: Path
    """The Python backend stub built for this interpreter's major.minor."""

    @property
    def backend_library(self) -> Path:
        return self.python_backend_dir / "libtriton_python.so"

    @property
    def backend_utils(self) -> Path:
        return self.python_backend_dir / "triton_python_backend_utils.py"


def find_server() -> ServerInstall:
    """Locate tritonserver inside the installed ``nvidia-pytriton`` wheel, without importing it."""
    try:
        spec = importlib.util.find_spec("pytriton")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise LocalTritonError(f"nvidia-pytriton is not installed; install it with: {INSTALL_HINT}")
    return install_in(Path(next(iter(spec.submodule_search_locations))))


def install_in(pkg: Path) -> ServerInstall:
    """The server in the ``pytriton`` package folder `pkg` of an installed or unpacked
    ``nvidia-pytriton`` wheel (0.3.0 on: one Python backend stub per interpreter; older wheels'
    single stub embeds Python 3.8 and is not looked for)."""
    root = pkg / "tritonserver"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    stubs = root / "python_backend_stubs"
    install = ServerInstall(
        binary=root / "bin" / "tritonserver",
        python_backend_dir=root / "backends" / "python",
        libs_dir=pkg.parent / "nvidia_pytriton.libs",
        stub=stubs / version / STUB_NAME,
    )
    for needed in (install.binary, install.backend_library, install.backend_utils, install.libs_dir):
        if not needed.exists():
            raise LocalTritonError(
                f"nvidia-pytriton at {pkg} has no {needed.name} (expected {needed}); "
                f"reinstall it with: {INSTALL_HINT}"
            )
    if not install.stub.exists():
        available = sorted(p.name for p in stubs.iterdir()) if stubs.is_dir() else []
        raise LocalTritonError(
            f"nvidia-pytriton has no Python backend stub for Python {version} "
            f"(available: {', '.join(available) or 'none'}); use one of those interpreters"
        )
    return install


class LocalTriton:
    """One real ``tritonserver`` process on loopback ports, started and stopped from Python.

    Ports left at 0/None are picked free at the first ``start()`` and kept for ``restart()``.
    ``exit_timeout_secs`` is short on purpose: on SIGTERM Triton 2.51 waits that long for HTTP
    connections to drain, and it still counts one after any client closed its socket, so with
    Triton's default (30 s) every stop would take 30 s and end in exit code 1.
    """

    def __init__(
        self,
        model_repository: str | os.PathLike[str],
        *,
        http_port: int | None = None,
        grpc_port: int | None = None,
        metrics_port: int | None = None,
        host: str = "127.0.0.1",
        model_control_mode: ModelControlMode = "none",
        load_models: Sequence[str] = (),
        exit_on_error: bool = False,
        metrics_config: Sequence[str] = ("summary_latencies=true",),
        log_format: LogFormat | None = None,
        log_verbose: int = 0,
        strict_readiness: bool | None = None,
        exit_timeout_secs: int = 2,
        extra_args: Sequence[str] = (),
        workdir: str | os.PathLike[str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        startup_timeout: float = 60.0,
        install: ServerInstall | None = None,
    ) -> None:
        if model_control_mode not in ("none", "explicit", "poll"):
            raise ValueError(f"model_control_mode must be none, explicit or poll, not {model_control_mode!r}")
        if load_models and model_control_mode != "explicit":
            raise ValueError("load_models needs model_control_mode='explicit'")
        self.model_repository = Path(model_repository).absolute()
        self.host = host
        self.http_port = http_port or None
        self.grpc_port = grpc_port or None
        self.metrics_port = metrics_port or None
        self.model_control_mode: ModelControlMode = model_control_mode
        self.load_models = tuple(load_models)
        self.exit_on_error = exit_on_error
        self.metrics_config = tuple(metrics_config)
        self.log_format = log_format
        self.log_verbose = log_verbose
        self.strict_readiness = strict_readiness
        self.exit_timeout_secs = exit_timeout_secs
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self.install = install
        """The server to run; None: the one in the installed nvidia-pytriton wheel (find_server)."""
        self._owns_workdir = workdir is None
        self._workdir = Path(workdir).absolute() if workdir is not None else None
        self._log_path_arg = Path(log_path).absolute() if log_path is not None else None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.RLock()
        self._atexit_registered = False
        self._group_done = False  # the process group was swept after exit: never signal that pid again
        self.startup_seconds: float | None = None
        """How long the last successful ``start()`` took."""

    # ------------------------------------------------------------------ paths and URLs
    @property
    def workdir(self) -> Path:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="triton-sre-local-"))
        return self._workdir

    @property
    def log_path(self) -> Path:
        return self._log_path_arg or self.workdir / "tritonserver.log"

    def _require_ports(self) -> tuple[int, int, int]:
        if self.http_port is None or self.grpc_port is None or self.metrics_port is None:
            raise LocalTritonError("ports are chosen at start(); start the server first")
        return self.http_port, self.grpc_port, self.metrics_port

    @property
    def http_url(self) -> str:
        return f"http://{self.host}:{self._require_ports()[0]}"

    @property
    def grpc_url(self) -> str:
        """``host:port``, the form tritonclient.grpc expects."""
        return f"{self.host}:{self._require_ports()[1]}"

    @property
    def metrics_url(self) -> str:
        return f"http://{self.host}:{self._require_ports()[2]}/metrics"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def returncode(self) -> int | None:
        return self._proc.poll() if self._proc is not None else None

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def read_log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self) -> str:
        return tail(self.log_path)

    # ------------------------------------------------------------------ building the command
    def _build_backend_dir(self, install: ServerInstall) -> Path:
        """``<workdir>/backends/python`` with the backend, its utils and this interpreter's stub."""
        backends = self.workdir / "backends"
        python_dir = backends / "python"
        python_dir.mkdir(parents=True, exist_ok=True)
        for src in (install.backend_library, install.backend_utils, install.stub):
            dst = python_dir / src.name
            if dst.is_symlink() or dst.exists():
                if dst.is_symlink() and dst.resolve() == src.resolve():
                    continue
                dst.unlink()
            try:
                dst.symlink_to(src)
            except OSError:
                shutil.copy2(src, dst)
        return backends

    def command(self, install: ServerInstall, backend_dir: Path) -> list[str]:
        http, grpc, metrics = self._require_ports()
        cmd = [
            str(install.binary),
            f"--model-repository={self.model_repository}",
            f"--backend-directory={backend_dir}",
            f"--exit-on-error={str(self.exit_on_error).lower()}",
            f"--model-control-mode={self.model_control_mode}",
            f"--http-address={self.host}",
            f"--http-port={http}",
            f"--grpc-address={self.host}",
            f"--grpc-port={grpc}",
            f"--metrics-address={self.host}",
            f"--metrics-port={metrics}",
            f"--log-verbose={self.log_verbose}",
            f"--exit-timeout-secs={self.exit_timeout_secs}",
        ]
        cmd += [f"--load-model={m}" for m in self.load_models]
        for kv in self.metrics_config:
            cmd += ["--metrics-config", kv]
        if self.log_format is not None:
            cmd.append(f"--log-format={self.log_format}")
        if self.strict_readiness is not None:
            cmd.append(f"--strict-readiness={str(self.strict_readiness).lower()}")
        cmd += self.extra_args
        return cmd

    def environment(self, install: ServerInstall) -> dict[str, str]:
        """The child's environment. The stub ignores PYTHON* variables (PYTHONDONTWRITEBYTECODE
        included: model imports leave ``__pycache__`` in the repository); only PATH picks the Python."""
        env = dict(os.environ)
        ld = env.get("LD_LIBRARY_PATH")
        env["LD_LIBRARY_PATH"] = f"{install.libs_dir}:{ld}" if ld else str(install.libs_dir)
        env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", os.defpath)])
        return env

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LocalTriton:
        """Start the server and wait until it answers on HTTP; raise LocalTritonError otherwise."""
        with self._lock:
            if self.is_running():
                return self
            if self._proc is not None:
                self.stop()  # a server that died by itself: reap it and sweep its stubs
            install = self.install or find_server()
            if self.http_port is None or self.grpc_port is None or self.metrics_port is None:
                taken = {p for p in (self.http_port, self.grpc_port, self.metrics_port) if p}
                picked = iter(p for p in free_ports(6, self.host) if p not in taken)
                self.http_port = self.http_port or next(picked)
                self.grpc_port = self.grpc_port or next(picked)
                self.metrics_port = self.metrics_port or next(picked)
            backend_dir = self._build_backend_dir(install)
            cmd = self.command(install, backend_dir)
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            if not self._atexit_registered:
                atexit.register(self._atexit)
                self._atexit_registered = True
            started = time.monotonic()
            with self.log_path.open("ab") as log:
                log.write(f"# triton-sre LocalTriton: {' '.join(cmd)}\n".encode())
                log.flush()
                self._group_done = False
                self._proc = subprocess.Popen(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=self.environment(install),
                    cwd=self.workdir,
                    start_new_session=True,
                    preexec_fn=death_signal_hook(),
                )
        try:
            self._wait_until_up(started)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self

    def _wait_until_up(self, started: float) -> None:
        deadline = started + self.startup_timeout
        last = "no answer yet"
        with new_session() as session:  # loopback: never the proxy the environment names
            while True:
                proc = self._proc
                if proc is None:
                    raise LocalTritonError("server was stopped while starting")
                code = proc.poll()
                if code is not None:
                    raise LocalTritonError(
                        f"tritonserver exited with code {code} while starting "
                        f"(log {self.log_path}); last lines:\n{self.log_tail()}"
                    )
                try:
                    live = session.get(f"{self.http_url}/v2/health/live", timeout=2)
                    if live.status_code == 200:
                        index = session.post(f"{self.http_url}/v2/repository/index", json={}, timeout=5)
                        # 403: the server answers, its model-repository API restricted to a header
                        # (--http-restricted-api, r23.11 on): up all the same.
                        if index.status_code in (200, 403):
                            # the metrics service starts last, after the HTTP service
                            metrics = session.get(self.metrics_url, timeout=5)
                            if metrics.status_code == 200:
                                return
                            last = f"metrics endpoint answered {metrics.status_code}"
                        else:
                            last = f"repository index answered {index.status_code}"
                    else:
                        last = f"/v2/health/live answered {live.status_code}"
                except requests.RequestException as exc:
                    last = f"{type(exc).__name__}"
                if time.monotonic() > deadline:
                    raise LocalTritonError(
                        f"tritonserver not up after {self.startup_timeout:.0f} s ({last}; "
                        f"log {self.log_path}); last lines:\n{self.log_tail()}"
                    )
                time.sleep(0.1)

    def _signal_group(self, sig: signal.Signals) -> None:
        proc = self._proc
        if proc is None or self._group_done:
            return
        # The group id is the child's pid (start_new_session); it stays reserved while any member
        # (e.g. a Python backend stub) lives, even after the leader was reaped.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def group_pids(self) -> list[int]:
        """Live processes of this server: tritonserver and its Python backend stubs."""
        if self._proc is None or self._group_done:
            return []
        return process_group_members(self._proc.pid)

    def _group_shm(self) -> set[Path]:
        return mapped_shm(self.group_pids())

    @staticmethod
    def _unlink(regions: set[Path]) -> None:
        """Remove shared-memory regions Triton leaves behind when it exits "immediately" or is killed."""
        for region in regions:
            with contextlib.suppress(OSError):
                region.unlink()

    def _sweep_group(self) -> None:
        """SIGKILL whatever is left of the group (stubs) and wait up to 5 s until it is gone."""
        self._signal_group(signal.SIGKILL)
        deadline = time.monotonic() + 5.0
        while self.group_pids() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._group_done = True

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGTERM the process group, wait up to ``timeout`` s, then SIGKILL. Idempotent.

        Returns the exit code (None if never started).
        """
        with self._lock:
            proc = self._proc
            if proc is None:
                return None
            shm = self._group_shm()
            if proc.poll() is None:
                self._signal_group(signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    proc.wait()
            # Leftover stubs of a leader that died: take the whole group down.
            self._sweep_group()
            self._unlink(shm)
            return proc.returncode

    def kill(self) -> int | None:
        """SIGKILL the whole process group at once (a crash, for fault tests)."""
        with self._lock:
            proc = self._proc
            if proc is None:
                return None
            shm = self._group_shm()
            self._signal_group(signal.SIGKILL)
            code = proc.wait()
            self._sweep_group()
            self._unlink(shm)
            return code

    def restart(self) -> LocalTriton:
        """Stop, then start again on the same ports, appending to the same log."""
        self.stop()
        return self.start()

    def cleanup(self) -> None:
        """Stop, and delete the work directory if this instance created it."""
        self.stop()
        if self._owns_workdir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _atexit(self) -> None:
        with contextlib.suppress(Exception):
            self.cleanup()

    def __enter__(self) -> LocalTriton:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        ports = f"http={self.http_port} grpc={self.grpc_port} metrics={self.metrics_port}"
        return f"<LocalTriton {self.model_repository} {ports} pid={self.pid} {state}>"
