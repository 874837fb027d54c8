"""Where training runs execute: here (threads of this process), or on a Ray cluster.

With Ray each (stage, seed, model) run is one Ray task asking for `threads` CPUs (and one GPU where the cluster
has them), never retried, setting torch's thread count itself. A stage's windows go to the cluster once (the
object store), not once per task. The driver keeps the run machinery (core.lab.runs, core.lab.side_by_side): each run
is waited for by one driver thread, so runs come back in plan order, a stop or Ctrl-C cancels the outstanding
tasks, and on CPU a run's numbers are the same bit for bit as on the local backend (same code, same seeds).
Ray is optional: without it installed, asking for it is one clear error.

A server started with PE_LAB_RAY_ADDRESS must not hang its pages on a cluster that does not answer (ray.init
waits minutes for one): `cluster_reachable` dials the address once in a background thread, with a plain TCP
connect bounded by CLUSTER_PROBE_TIMEOUT_S, and every page of the server reuses the answer for
CLUSTER_PROBE_CACHE_S.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from core.lab.training import TrainConfig, TrainingStopped
from core.lab.vibration.windows import WindowSet
from core.limits import CLUSTER_PROBE_CACHE_S, CLUSTER_PROBE_TIMEOUT_S

BACKENDS = ("local", "ray")
INSTALL = "pip install -r requirements-cluster.txt"
ADDRESS_VARIABLE = "PE_LAB_RAY_ADDRESS"  # set when the server starts: the Fault lab trains on that cluster
RAY_CLIENT_PORT = 10001  # Ray's default for a "ray://host" address without a port


class BackendError(ValueError):
    """The backend asked for cannot be used (Ray missing, or no cluster at the address)."""


def require_ray() -> Any:
    """The ray module, imported on first need; BackendError with the install line when it is missing."""
    try:
        import ray
    except ImportError:
        raise BackendError(f"--backend ray needs Ray, which is not installed: {INSTALL}") from None
    return ray


def _train_remotely(
    windows: WindowSet,
    model: str,
    config: dict,
    seed: int,
    device: str | None,
    keep_weights: bool,
    test_sets: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The body of a Ray task: one run, on the worker's own CPUs (or GPU)."""
    import torch

    from core.lab.training import train

    settings = TrainConfig.from_dict(config)
    torch.set_num_threads(settings.threads)
    return train(windows, model, settings, seed, device, None, None, keep_weights, test_sets)


class RayBackend:
    """Runs on a Ray cluster: `address` "auto" joins a running cluster (`ray start --head`), "local" starts one
    in this process."""

    def __init__(self, address: str = "auto"):
        ray = require_ray()
        self.ray = ray
        if not ray.is_initialized():
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            try:
                ray.init(address=None if address == "local" else address, include_dashboard=False, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as error:
                raise BackendError(
                    f"no Ray cluster at {address!r} ({error}); start one with `ray start --head`"
                ) from None
        self.gpus = int(ray.cluster_resources().get("GPU", 0))
        self._remote = ray.remote(max_retries=0)(_train_remotely)
        self._windows: dict[int, tuple[WindowSet, Any]] = {}  # id -> (the windows, kept alive; their object ref)

    def workers(self, threads: int) -> int:
        """Runs the cluster takes at once: one per GPU where it has them, else its CPUs / threads."""
        if self.gpus:
            return self.gpus
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)) // max(1, threads))

    def where(self) -> str:
        """The cluster in words: its CPUs and GPUs."""
        resources = self.ray.cluster_resources()
        return f"a Ray cluster of {int(resources.get('CPU', 0))} CPUs and {self.gpus} GPUs"

    def _put(self, windows: WindowSet) -> Any:
        if id(windows) not in self._windows:
            self._windows[id(windows)] = (windows, self.ray.put(windows))
        return self._windows[id(windows)][1]

    def train(
        self,
        windows: WindowSet,
        model: str,
        config: TrainConfig,
        seed: int,
        device: str | None,
        progress: Any,
        should_stop: Callable[[], bool] | None,
        keep_weights: bool = False,
        test_sets: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """One run as a Ray task, with train()'s signature; waits for it, cancelling it on a stop."""
        options = {"num_cpus": config.threads, "num_gpus": 1 if self.gpus else 0}
        task = self._remote.options(**options).remote(
            self._put(windows), model, config.to_dict(), seed, "cuda" if self.gpus else device, keep_weights, test_sets
        )
        try:
            while not self.ray.wait([task], timeout=0.2)[0]:
                if should_stop is not None and should_stop():
                    raise TrainingStopped("the run was stopped on request")
            return self.ray.get(task)
        except BaseException:
            self.ray.cancel(task, force=True)
            raise


def backend(name: str, address: str = "auto") -> RayBackend | None:
    """None for the local backend, else the Ray backend at `address`."""
    if name not in BACKENDS:
        raise BackendError(f"backend must be one of {BACKENDS}, got {name!r}")
    return RayBackend(address) if name == "ray" else None


# --- is the cluster there? ---------------------------------------------------------------------------------

probe_clock: Callable[[], float] = time.monotonic  # a module setting, so a test can age the cached answers
_probe_lock = threading.Lock()
_answers: dict[str, tuple[float, bool]] = {}  # address -> (when it answered, whether it did)
_probing: set[str] = set()


def probe_target(address: str) -> tuple[str, int] | None:
    """The (host, port) to dial for a Ray address ("ray://host:port" or "host:port"); None for "auto" and
    "local", which name no remote machine. BackendError when the address has no host and port to read."""
    if address in ("auto", "local"):
        return None
    scheme, _, rest = address.rpartition("://")
    host, colon, port = rest.rpartition(":")
    if not colon and scheme == "ray":
        host, port = rest, str(RAY_CLIENT_PORT)
    host = host.strip("[]")  # an IPv6 literal is written [::1]:6379
    if not host or not port.isdigit() or not 0 < int(port) < 65536 or scheme not in ("", "ray"):
        raise BackendError(f"cannot read a host and port from the cluster address {address!r}")
    return host, int(port)


def answers(host: str, port: int, timeout: float = CLUSTER_PROBE_TIMEOUT_S) -> bool:
    """Whether something accepts a TCP connection at host:port within `timeout` seconds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except (OSError, ValueError):  # ValueError: a host name that cannot be encoded (IDNA)
        return False


def cluster_reachable(address: str) -> bool | None:
    """Whether the cluster at `address` answered its last probe; None while the first probe is out. Never
    waits: a probe older than CLUSTER_PROBE_CACHE_S (or none) starts one in the background, and until it
    answers the previous answer stands."""
    try:
        target = probe_target(address)
    except BackendError:
        return False
    if target is None:
        return True
    with _probe_lock:
        answer = _answers.get(address)
        stale = answer is None or probe_clock() - answer[0] >= CLUSTER_PROBE_CACHE_S
        if stale and address not in _probing:
            _probing.add(address)
            threading.Thread(target=_probe, args=(address, target), name="pe-lab-cluster-probe", daemon=True).start()
    return None if answer is None else answer[1]


def _probe(address: str, target: tuple[str, int]) -> None:
    reachable = answers(*target)
    with _probe_lock:
        _answers[address] = (probe_clock(), reachable)
        _probing.discard(address)
