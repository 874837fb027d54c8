"""What happens between a run's optimizer steps and epochs: the learning rate of every step (a linear warm-up,
then constant or cosine) and which epoch a run restores when it ends (`BestEpoch`).

    select_by "loss"      protocol 2: the epoch of the lowest validation loss; a new best must undercut the old
                          by more than min_delta
    select_by "accuracy"  protocol 3: the epoch of the highest validation accuracy, ties broken by the lower
                          validation loss (lower by more than min_delta); any rise in accuracy counts

Under either rule a run stops after `patience` epochs without a new best, so "converged" (the best epoch not in
the last tenth of the cap, core.lab.training) means the rule's own criterion had stopped improving.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import torch

SELECTION_RULES = ("loss", "accuracy")


class ScheduleSettings(Protocol):
    """What the schedules read of a core.lab.training.TrainConfig."""

    epochs: int
    batch_size: int
    learning_rate: float
    lr_schedule: str
    warmup_epochs: int


@dataclass
class BestEpoch:
    """The best epoch so far under a selection rule (`SELECTION_RULES`), with its validation loss and accuracy."""

    rule: str = "loss"
    min_delta: float = 0.0
    epoch: int = 0
    loss: float = math.inf
    accuracy: float = -math.inf

    def __post_init__(self) -> None:
        if self.rule not in SELECTION_RULES:
            raise ValueError(f"select_by must be one of {SELECTION_RULES}, got {self.rule!r}")

    def beats(self, loss: float, accuracy: float) -> bool:
        """Whether an epoch of this validation loss and accuracy is a new best under the rule."""
        lower = loss < self.loss - self.min_delta
        if self.rule == "loss":
            return lower
        return accuracy > self.accuracy or (accuracy == self.accuracy and lower)

    def update(self, epoch: int, loss: float, accuracy: float) -> bool:
        """Keep this epoch if it is a new best; whether it was."""
        if not self.beats(loss, accuracy):
            return False
        self.epoch, self.loss, self.accuracy = epoch, loss, accuracy
        return True


class WarmUpSchedule:
    """The learning rate of every optimizer step: base x min(1, step / warm-up steps) x the cosine factor of
    the epoch (when the schedule is cosine). Used only with a warm-up; without one the rate follows torch's
    CosineAnnealingLR or stays constant, as it always has."""

    def __init__(self, optimizer: torch.optim.Optimizer, config: ScheduleSettings, steps_per_epoch: int):
        self.optimizer, self.config = optimizer, config
        self.warmup_steps = config.warmup_epochs * steps_per_epoch
        self.step_index, self.epoch = 0, 0

    def before_step(self) -> None:
        """Before every optimizer step: count the step and set the rate it uses."""
        self.step_index += 1
        self._set_rate()

    def step(self) -> None:
        """Once per epoch, as torch's schedulers: the rate shown afterwards is the one the next step uses."""
        self.epoch += 1
        self.step_index += 1
        self._set_rate()
        self.step_index -= 1

    def _set_rate(self) -> None:
        factor = min(1.0, self.step_index / self.warmup_steps)
        if self.config.lr_schedule == "cosine":
            factor *= 0.5 * (1 + math.cos(math.pi * self.epoch / self.config.epochs))
        for group in self.optimizer.param_groups:
            group["lr"] = self.config.learning_rate * factor


def steps_per_epoch(n_windows: int, batch_size: int) -> int:
    """Optimizer steps in one epoch (a lone trailing window is dropped, see _train_epoch)."""
    used = n_windows - 1 if n_windows % batch_size == 1 and n_windows > 1 else n_windows
    return math.ceil(used / batch_size)


def schedules(
    optimizer: torch.optim.Optimizer, config: ScheduleSettings, n_train: int
) -> tuple[WarmUpSchedule | torch.optim.lr_scheduler.LRScheduler | None, WarmUpSchedule | None]:
    """The schedule stepped once per epoch, and the warm-up stepped before each optimizer step (or None)."""
    if config.warmup_epochs:
        warm_up = WarmUpSchedule(optimizer, config, steps_per_epoch(n_train, config.batch_size))
        return warm_up, warm_up
    if config.lr_schedule == "cosine":
        # T_max = epochs: an early stop leaves the rate where it was, the schedule does not know it is coming
        return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=config.epochs), None
    return None, None
