"""Training runs side by side in threads, with the numbers they have one at a time.

Each run draws only from generators seeded by its own seed (core.lab.training), so its result is the one it has
when trained alone. torch.set_num_threads sets the calling thread's count and the default that new threads
take: it is set here, before the run threads start, so each gets `threads` and no run changes another's.
A run that fails, a stop request, or an interrupt of the calling thread (Ctrl-C) halts the rest: no new run
starts and those in progress stop before their next batch. The run threads are daemons, so a server
shutting down does not wait for them.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

from core.lab.training import TrainingStopped, cpu_threads

Task = TypeVar("Task")
Run = dict[str, Any]
_Outcome = tuple[int, Run | None, BaseException | None]  # (task index, its run, or the error it raised)


def train_side_by_side(
    tasks: Sequence[Task],
    train_one: Callable[[Task, Callable[[], bool]], Run],
    workers: int,
    threads: int | None,
    should_stop: Callable[[], bool] | None = None,
    on_finished: Callable[[Run], None] | None = None,
    start_order: Sequence[int] | None = None,
) -> tuple[list[Run], bool]:
    """Train every task with `train_one(task, stop)` in `workers` threads of `threads` torch threads each
    (None: leave the count alone, as on a GPU). Returns the finished runs in task order, and whether the
    runs were stopped. `on_finished` is called from the calling thread, as runs finish. `start_order` lists
    the task indices in the order they are taken up (default: as given); it changes when each run trains,
    never what it returns."""
    order = list(range(len(tasks))) if start_order is None else list(start_order)
    if sorted(order) != list(range(len(tasks))):
        raise ValueError(f"start_order must list each of the {len(tasks)} task indices once, got {order}")
    halt = threading.Event()

    def stop() -> bool:
        return halt.is_set() or (should_stop is not None and should_stop())

    outcomes: queue.Queue[_Outcome] = queue.Queue()
    work = _run_loop([(index, tasks[index]) for index in order], outcomes, train_one, stop)
    collected = _Collected(halt, on_finished)
    with cpu_threads(threads) if threads is not None else nullcontext():
        runners = [
            threading.Thread(target=work, name=f"pe-lab-run-{n}", daemon=True) for n in range(min(workers, len(tasks)))
        ]
        for runner in runners:
            runner.start()
        try:
            for outcome in _arrivals(runners, outcomes):
                collected.take(*outcome)
        except BaseException:
            halt.set()
            raise
    if collected.failure is not None:
        raise collected.failure
    # a stop asked between runs: the rest never started
    stopped = collected.stopped or len(collected.finished) < len(tasks)
    return [collected.finished[index] for index in sorted(collected.finished)], stopped


def _run_loop(
    pending: list[tuple[int, Task]],
    outcomes: queue.Queue[_Outcome],
    train_one: Callable[[Task, Callable[[], bool]], Run],
    stop: Callable[[], bool],
) -> Callable[[], None]:
    """What each run thread does: take the next pending task until none is left or a stop is asked, and
    report each outcome, an error included, to the coordinating thread."""
    pending_lock = threading.Lock()

    def work() -> None:
        while True:
            with pending_lock:
                if not pending or stop():
                    return
                index, task = pending.pop(0)
            try:
                outcomes.put((index, train_one(task, stop), None))
            except BaseException as error:  # reported to the coordinating thread, which decides
                outcomes.put((index, None, error))

    return work


def _arrivals(runners: list[threading.Thread], outcomes: queue.Queue[_Outcome]) -> Iterator[_Outcome]:
    """The outcomes as they arrive, until every run thread has ended and none is left unread. The short
    wait keeps the calling thread responsive to Ctrl-C."""
    while any(runner.is_alive() for runner in runners) or not outcomes.empty():
        try:
            yield outcomes.get(timeout=0.1)
        except queue.Empty:
            continue


class _Collected:
    """The calling thread's tally: the finished runs by task index, whether a run was stopped, the first failure."""

    def __init__(self, halt: threading.Event, on_finished: Callable[[Run], None] | None) -> None:
        self.halt, self.on_finished = halt, on_finished
        self.finished: dict[int, Run] = {}
        self.stopped, self.failure = False, None

    def take(self, index: int, run: Run | None, error: BaseException | None) -> None:
        """Record one outcome; a stopped or failed run halts the others."""
        if isinstance(error, TrainingStopped):
            self.stopped = True
            self.halt.set()
        elif error is not None:  # the first failure wins; the others are stopped
            self.failure = self.failure or error
            self.halt.set()
        else:
            self.finished[index] = run
            if self.on_finished is not None:
                self.on_finished(run)
