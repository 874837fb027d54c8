"""Runs side by side: the order they start in, and the order their results come back in."""

import itertools

import pytest

from core.lab.runs import longest_first
from core.lab.side_by_side import train_side_by_side


def test_runs_start_in_the_given_order_and_come_back_in_task_order():
    started = []

    def train_one(task, stop):
        started.append(task)
        return {"task": task}

    tasks = ["a", "b", "c", "d"]
    runs, stopped = train_side_by_side(tasks, train_one, workers=1, threads=None, start_order=[3, 1, 0, 2])
    assert started == ["d", "b", "a", "c"]
    assert [run["task"] for run in runs] == tasks and not stopped


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 0, 1, 2], [0, 1, 2, 4]])
def test_a_start_order_that_is_not_every_task_once_is_refused(order):
    with pytest.raises(ValueError, match="start_order must list each of the 4 task indices once"):
        train_side_by_side(["a", "b", "c", "d"], lambda task, stop: {}, workers=2, threads=None, start_order=order)


def test_the_embedding_models_start_first_and_seeds_keep_their_order():
    tasks = list(itertools.product([0, 1, 2], ["A", "B"]))  # the default press: (0, A), (0, B), (1, A), ...
    assert [tasks[index] for index in longest_first(tasks)] == [
        (0, "B"), (1, "B"), (2, "B"), (0, "A"), (1, "A"), (2, "A"),
    ]  # fmt: skip
    four = list(itertools.product([0], ["A", "A+PE", "B-noPE", "B"]))
    assert [tasks_model for _, tasks_model in (four[i] for i in longest_first(four))] == ["B-noPE", "B", "A", "A+PE"]
