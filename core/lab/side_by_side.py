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
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

from core.lab.training import TrainingStopped, cpu_threads

Task = TypeVar("Task")
Run = dict[str, Any]


def train_side_by_side(
    tasks: Sequence[Task],
    train_one: Callable[[Task, Callable[[], bool]], Run],
    workers: int,
    threads: int | None,
    should_stop: Callable[[], bool] | None = None,
    on_finished: Callable[[Run], None] | None = None,
) -> tuple[list[Run], bool]:
    """Train every task with `train_one(task, stop)` in `workers` threads of `threads` torch threads each
    (None: leave the count alone, as on a GPU). Returns the finished runs in task order, and whether the
    runs were stopped. `on_finished` is called from the calling thread, as runs finish."""
    halt = threading.Event()

    def stop() -> bool:
        return halt.is_set() or (should_stop is not None and should_stop())

    pending = list(enumerate(tasks))
    pending_lock = threading.Lock()
    outcomes: queue.Queue[tuple[int, Run | None, BaseException | None]] = queue.Queue()

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

    finished: dict[int, Run] = {}
    stopped, failure = False, None
    with cpu_threads(threads) if threads is not None else nullcontext():
        runners = [
            threading.Thread(target=work, name=f"pe-lab-run-{n}", daemon=True) for n in range(min(workers, len(tasks)))
        ]
        for runner in runners:
            runner.start()
        try:
            while any(runner.is_alive() for runner in runners) or not outcomes.empty():
                try:
                    index, run, error = outcomes.get(timeout=0.1)
                except queue.Empty:
                    continue
                if isinstance(error, TrainingStopped):
                    stopped = True
                    halt.set()
                elif error is not None:  # the first failure wins; the others are stopped
                    failure = failure or error
                    halt.set()
                else:
                    finished[index] = run
                    if on_finished is not None:
                        on_finished(run)
        except BaseException:
            halt.set()
            raise
    if failure is not None:
        raise failure
    stopped = stopped or len(finished) < len(tasks)  # a stop asked between runs: the rest never started
    return [finished[index] for index in sorted(finished)], stopped
