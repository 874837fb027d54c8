"""Train one model on one seed and score it on the test split: the engine under the Fault lab and the CLI.

`train` takes the `WindowSet` of `core.lab.vibration.make_windows`, trains with AdamW, stops early when the
validation loss (or, with select_by "accuracy", the validation accuracy; core.lab.epochs) stops improving,
restores the best checkpoint, and scores the test split with sklearn.metrics.
Everything runs on an explicit `torch.device`: on CUDA the data stays on the GPU and the forward pass runs
under bf16 autocast; on CPU the thread count is set from the config, because next to a running Streamlit
server, oversubscribing a 2-core host was measured to slow training 12-30x. On CPU a seed fixes the result:
the weights, the shuffle and the dropout masks each come from a generator seeded by it, never from state
another run could touch, so runs trained side by side in threads (core.lab.jobs) match runs trained alone.
"""

from __future__ import annotations

import copy
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from core.lab.epochs import SELECTION_RULES, BestEpoch, WarmUpSchedule, schedules
from core.lab.models import DropoutStream, ModelConfig, build_model, count_parameters
from core.lab.probes.order import order_test
from core.lab.scores import classification_metrics, per_window_scores
from core.lab.vibration.types import DataError
from core.lab.vibration.windows import WindowSet

EVAL_BATCH_SIZE = 1024  # no gradients are kept at evaluation, so larger batches cost little memory
LR_SCHEDULES = ("constant", "cosine")
_TestSets = Mapping[str, tuple[np.ndarray, np.ndarray]]  # name -> (x, y) windows the restored model scores


@dataclass
class TrainConfig:
    """Every training setting; `model` holds the architecture settings shared by all models."""

    model: ModelConfig = field(default_factory=ModelConfig)
    # epochs, patience, rate and schedule were chosen on the CWRU 0 HP validation split (never the test
    # split), the same for every model: of 15 / 30 / 40 epochs, rates 1e-3 / 3e-3 / 5e-3, constant or
    # cosine, 40 epochs at a constant 3e-3 gave A and B the lowest mean validation loss over 3 seeds
    epochs: int = 40
    batch_size: int = 64
    learning_rate: float = 3e-3
    weight_decay: float = 0.01
    patience: int = 10  # epochs without a new best (validation loss, or accuracy: select_by) before stopping
    # a new best must undercut the old by more than this (cross-entropy per window); 0 counts any drop. At a
    # ceiling the loss keeps shrinking by crumbs and a run would never stop: a study may set it (the page does not)
    min_delta: float = 0.0
    threads: int = 1  # torch CPU threads, capped at the core count; 1 stays fast beside a busy server
    lr_schedule: str = "constant"  # "constant", or "cosine": decay to 0 over `epochs`, stepped once per epoch
    # a linear warm-up of the learning rate from 0 over this many epochs' steps (0: none); fixed before any study,
    # not chosen on data: it tames the first steps of the embedding models, whose validation loss spiked early
    warmup_epochs: int = 1
    # the epoch a run restores (core.lab.epochs): "loss" (protocol 2), or "accuracy" with ties by loss (protocol 3)
    select_by: str = "loss"

    def __post_init__(self) -> None:
        if isinstance(self.model, Mapping):
            self.model = ModelConfig.from_dict(self.model)
        if isinstance(self.warmup_epochs, bool) or not isinstance(self.warmup_epochs, int) or self.warmup_epochs < 0:
            raise ValueError(f"warmup_epochs must be zero or a positive integer, got {self.warmup_epochs!r}")
        for name in ("epochs", "batch_size", "patience", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not (_is_number(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate!r}")
        if not (_is_number(self.weight_decay) and self.weight_decay >= 0):
            raise ValueError(f"weight_decay must be zero or positive, got {self.weight_decay!r}")
        delta = self.min_delta
        if isinstance(delta, bool) or not (isinstance(delta, int | float) and 0 <= delta < 1):
            raise ValueError(f"min_delta must be at least 0 and below 1, got {self.min_delta!r}")
        if self.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {self.lr_schedule!r}")
        if self.select_by not in SELECTION_RULES:
            raise ValueError(f"select_by must be one of {SELECTION_RULES}, got {self.select_by!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as plain JSON values, the model's nested under "model"; `select_by` only when it is not
        "loss", so every config written before it existed (and a protocol-2 checkpoint's identity) stays the same."""
        settings = asdict(self)
        if settings["select_by"] == "loss":
            del settings["select_by"]
        return settings

    def with_model(self, **changes: Any) -> TrainConfig:
        """This config with these fields of its model's config changed (a sweep's config at one value)."""
        return replace(self, model=replace(self.model, **changes))

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> TrainConfig:
        """The config `to_dict` wrote, checked again as any new one is."""
        return cls(**settings)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class TrainingStopped(Exception):
    """Raised by `train` when `should_stop()` answered True; no test metrics exist for a stopped run."""


def pick_device(device: str | torch.device | None = None) -> torch.device:
    """None picks CUDA when present, else CPU; an explicit CUDA request without a GPU is an error."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' was requested but torch sees no GPU; use device=None or 'cpu'")
    return device


def describe_device(device: torch.device) -> str:
    """The device as a run records it: "cpu", or "cuda (<GPU name>)"."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


# torch's global generator initialises a new model's weights; runs training side by side in threads
# (core.lab.jobs) take turns at it, so each model's weights still depend on its seed alone
_GLOBAL_RNG_LOCK = threading.Lock()


def _seeded_model(
    model_name: str, window: int, n_classes: int, model_config: ModelConfig, seed: int, device: torch.device
) -> torch.nn.Module:
    """The model with weights drawn from `seed`, and its dropout masks from a generator of its own."""
    with _GLOBAL_RNG_LOCK:
        torch.manual_seed(seed)
        model = build_model(model_name, window, n_classes, model_config).to(device)
    if hasattr(model, "dropout_stream"):
        # a stream of its own, apart from the shuffle's (also seeded by `seed`); SeedSequence takes no
        # negative numbers where torch.manual_seed does, hence % 2**64
        model.dropout_stream = DropoutStream(
            int(np.random.SeedSequence([seed % 2**64, 1]).generate_state(1)[0]), device
        )
    return model


def usable_cpus(cgroup_root: Path = Path("/sys/fs/cgroup")) -> int:
    """CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (rounded up: 1.5 CPUs
    give 2). In a container (Streamlit Community Cloud among them) os.cpu_count() reports the host's cores,
    not the share the app gets. Only the quota of the process's own cgroup root is read, which is what a
    container with its own cgroup namespace sees; a limit set further up the tree is not found."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_cpu_quota(cgroup_root)
    return max(1, min(count, math.ceil(quota)) if quota is not None else count)


def default_workers(threads: int = 1, device: str | torch.device | None = None, cap: int | None = None) -> int:
    """How many runs to train side by side: enough to fill the usable CPUs with `threads` torch threads
    each, at most `cap`; one at a time on a GPU, which a single run of these small models already shares
    poorly with itself. The CLI and the Fault lab both ask here."""
    if pick_device(device).type == "cuda":
        return 1
    workers = max(1, usable_cpus() // max(1, threads))
    return workers if cap is None else max(1, min(workers, cap))


def _cgroup_cpu_quota(root: Path) -> float | None:
    """The CPU quota in CPUs from cgroup v2 (cpu.max) or v1 (cpu.cfs_quota_us / cpu.cfs_period_us); None if
    unlimited or unknown."""
    try:
        if (root / "cpu.max").is_file():
            quota, period = (root / "cpu.max").read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        v1 = root / "cpu"
        if (v1 / "cpu.cfs_quota_us").is_file():
            quota = int((v1 / "cpu.cfs_quota_us").read_text())
            return None if quota <= 0 else quota / int((v1 / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError, ZeroDivisionError):
        return None
    return None


@contextmanager
def cpu_threads(threads: int) -> Iterator[int]:
    """Run the block with `threads` torch CPU threads (capped at the usable CPUs), then restore the old count."""
    previous = torch.get_num_threads()
    chosen = max(1, min(threads, usable_cpus()))
    if chosen == previous:  # runs side by side (core.lab.jobs) set the count once, before any of them starts
        yield chosen
        return
    torch.set_num_threads(chosen)
    try:
        yield chosen
    finally:
        torch.set_num_threads(previous)


def autocast(device: torch.device):
    """bf16 autocast on CUDA; a no-op on CPU, where bf16 matmuls are slow and results must be exact."""
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")


def _check_windows(windows: WindowSet) -> None:
    n_classes = len(windows.class_names)
    for split in ("train", "val", "test"):
        x, y = getattr(windows, f"x_{split}"), getattr(windows, f"y_{split}")
        if x.ndim != 2 or x.shape[1] != windows.window or len(x) != len(y):
            raise DataError(
                f"x_{split} must be (n, {windows.window}) with one label per row; got x {x.shape}, y {y.shape}"
            )
        if len(x) == 0:
            raise DataError(
                f"The {split} split has no windows; training needs train, validation (for early stopping) and "
                f"test windows. Use longer recordings, a smaller window or a larger {split} share."
            )
        if y.min() < 0 or y.max() >= n_classes:
            raise DataError(f"y_{split} holds labels outside 0..{n_classes - 1} (there are {n_classes} class names)")


def _batches(n: int, batch_size: int, order: torch.Tensor | None = None) -> Iterator[torch.Tensor | slice]:
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size] if order is not None else slice(start, start + batch_size)


def _train_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    config: TrainConfig,
    generator: torch.Generator,
    device: torch.device,
    should_stop: Callable[[], bool] | None,
    warm_up: WarmUpSchedule | None = None,
) -> float:
    model.train()
    # the shuffle is drawn on the CPU from the run's own generator, so it is the same on every device
    order = torch.randperm(len(x), generator=generator).to(device)
    total_loss = 0.0
    # a lone trailing window is dropped (a different one each epoch): BatchNorm cannot normalise a batch of one
    if len(order) % config.batch_size == 1 and len(order) > 1:
        order = order[:-1]
    for batch in _batches(len(order), config.batch_size, order):
        if should_stop is not None and should_stop():
            raise TrainingStopped("training was stopped on request")
        with autocast(device):
            logits = model(x[batch])  # (batch, n_classes)
        loss = F.cross_entropy(logits.float(), y[batch])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if warm_up is not None:
            warm_up.before_step()
        optimizer.step()
        total_loss += loss.item() * len(y[batch])
    return total_loss / len(order)


@torch.inference_mode()
def _predict_logits(model: torch.nn.Module, x: torch.Tensor, device: torch.device) -> torch.Tensor:
    model.eval()
    outputs = []
    for batch in _batches(len(x), EVAL_BATCH_SIZE):
        with autocast(device):
            outputs.append(model(x[batch]).float())
    return torch.cat(outputs)  # (n, n_classes)


def _predict_classes(model: torch.nn.Module, x: np.ndarray, device: torch.device) -> np.ndarray:
    x = torch.as_tensor(x, dtype=torch.float32, device=device)
    return _predict_logits(model, x, device).argmax(dim=1).cpu().numpy()


def make_optimizer(model: torch.nn.Module, config: TrainConfig, device: torch.device) -> torch.optim.Optimizer:
    """AdamW; on CPU and CUDA the fused kernel updates all parameters in one pass instead of a Python loop
    over a dozen small ops per tensor, which for these small models is a visible share of a step."""
    fused = device.type in ("cpu", "cuda")
    return torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay, fused=fused)


def _loss_and_accuracy(
    model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, device: torch.device
) -> tuple[float, float]:
    logits = _predict_logits(model, x, device)
    loss = F.cross_entropy(logits, y).item()
    accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    return loss, accuracy


@dataclass
class _Fitted:
    """What the epoch loop leaves behind: the history, the best epoch and its weights, and two timings."""

    history: list[dict[str, float]]
    best_epoch: int
    best_state: dict[str, torch.Tensor] | None
    train_seconds: float  # wall seconds of the whole loop, validation included
    training_seconds: float  # seconds inside the training passes alone


def _fit(
    model: torch.nn.Module,
    model_name: str,
    windows: WindowSet,
    config: TrainConfig,
    seed: int,
    device: torch.device,
    progress: Callable[[int, dict[str, float]], None] | None,
    should_stop: Callable[[], bool] | None,
) -> _Fitted:
    """Train on the train split epoch by epoch, scoring the validation split after each, until `config.epochs`
    or `config.patience` epochs without a new best under `config.select_by` (core.lab.epochs.BestEpoch: by
    validation loss, one below the best by more than `config.min_delta`; or by validation accuracy, ties by that
    loss); the best state is the one restored. A non-finite loss raises FloatingPointError."""
    x_train, x_val = (torch.as_tensor(x, dtype=torch.float32, device=device) for x in (windows.x_train, windows.x_val))
    y_train, y_val = (torch.as_tensor(y, dtype=torch.long, device=device) for y in (windows.y_train, windows.y_val))
    optimizer = make_optimizer(model, config, device)
    schedule, warm_up = schedules(optimizer, config, len(x_train))
    generator = torch.Generator().manual_seed(seed)
    history: list[dict[str, float]] = []
    best, best_state = BestEpoch(config.select_by, config.min_delta), None
    training_seconds = 0.0
    started = time.perf_counter()
    for epoch in range(1, config.epochs + 1):
        epoch_started = time.perf_counter()
        train_loss = _train_epoch(model, optimizer, x_train, y_train, config, generator, device, should_stop, warm_up)
        training_seconds += time.perf_counter() - epoch_started
        if schedule is not None:
            schedule.step()
        val_loss, val_accuracy = _loss_and_accuracy(model, x_val, y_val, device)
        if not (math.isfinite(train_loss) and math.isfinite(val_loss)):
            raise FloatingPointError(
                f"{model_name} diverged at epoch {epoch} (train loss {train_loss}, validation loss {val_loss}); "
                f"lower the learning rate (now {config.learning_rate:g})"
            )
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss, "val_accuracy": val_accuracy})
        if progress is not None:
            progress(epoch, dict(history[-1]))
        if best.update(epoch, val_loss, val_accuracy):
            best_state = copy.deepcopy(model.state_dict())
        elif epoch - best.epoch >= config.patience:
            break
    return _Fitted(history, best.epoch, best_state, time.perf_counter() - started, training_seconds)


def _test_scores(
    model: torch.nn.Module, windows: WindowSet, patch: int, device: torch.device, extra_test_sets: _TestSets | None
) -> tuple[np.ndarray, dict[str, Any], dict[str, dict[str, Any]]]:
    """The restored model's class probabilities on the test windows, its order test, and each extra set's metrics."""
    x_test = torch.as_tensor(windows.x_test, dtype=torch.float32, device=device)
    probabilities = torch.softmax(_predict_logits(model, x_test, device), dim=1).cpu().numpy()  # (n_test, classes)
    y_test = torch.as_tensor(windows.y_test, dtype=torch.long, device=device)
    scores_by_order = order_test(model, x_test, y_test, patch)
    extra_tests = {
        name: classification_metrics(y, _predict_classes(model, x, device), len(windows.class_names))
        for name, (x, y) in (extra_test_sets or {}).items()
    }
    return probabilities, scores_by_order, extra_tests


def train(
    windows: WindowSet,
    model_name: str,
    config: TrainConfig,
    seed: int,
    device: str | torch.device | None = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    keep_weights: bool = False,
    extra_test_sets: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> dict[str, Any]:
    """Train `model_name` on `windows` (a WindowSet) with `seed`; return one run of the results JSON.

    The run holds the keys of `core.lab.experiment.results.RUN_KEYS` (metrics as fractions, history per epoch, wall
    seconds of the training loop, training windows per second of training passes, device) plus
    `n_parameters` and `best_epoch` (and, with `keep_weights`, `weights`: the restored best state_dict on
    the CPU, which is not JSON and is left out of the results). `progress(epoch, metrics)` is called after
    each epoch with the history row; `should_stop()` is checked before each batch and raises TrainingStopped when True.
    `extra_test_sets` maps a name to (x, y) windows scored by the same restored model, e.g. noisy copies of
    the test windows or another motor load; their metrics land in `run["extra_tests"][name]`.
    """
    device = pick_device(device)
    _check_windows(windows)
    n_classes = len(windows.class_names)
    with cpu_threads(config.threads) if device.type == "cpu" else nullcontext():
        model = _seeded_model(model_name, windows.window, n_classes, config.model, seed, device)
        fitted = _fit(model, model_name, windows, config, seed, device, progress, should_stop)
        model.load_state_dict(fitted.best_state)
        probabilities, scores_by_order, extra_tests = _test_scores(
            model, windows, config.model.patch, device, extra_test_sets
        )
    run = {
        "model": model_name,
        "seed": int(seed),
        **classification_metrics(windows.y_test, probabilities.argmax(axis=1), n_classes),
        "epochs": len(fitted.history),
        "train_seconds": fitted.train_seconds,
        "windows_per_second": len(windows.x_train) * len(fitted.history) / max(fitted.training_seconds, 1e-9),
        "device": describe_device(device),
        "history": fitted.history,
        "n_parameters": count_parameters(model),
        "best_epoch": fitted.best_epoch,
        # the best epoch in the last tenth of the cap: the validation loss was still falling when training stopped
        "converged": bool(fitted.best_epoch <= 0.9 * config.epochs),
        **per_window_scores(windows.y_test, probabilities),
        "order_test": scores_by_order,
    }
    if extra_test_sets is not None:
        run["extra_tests"] = extra_tests
    if keep_weights:
        run["weights"] = {name: tensor.detach().cpu().clone() for name, tensor in model.state_dict().items()}
    return run
