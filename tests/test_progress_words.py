"""The progress sentence names every run in progress, and a count of one is never followed by a plural."""

import pandas as pd
import pytest

from core.lab.data_spec import DataSpec
from core.lab.experiment.cli import describe_run
from core.lab.figures.study import half_width_curves
from core.lab.jobs import JobStatus, progress_words
from core.lab.study.record import population


def running_status(training, run_index=2, n_runs=6, stage="main", epoch=3) -> JobStatus:
    model, seed = training[-1] if training else (None, None)
    history = [{"epoch": e, "val_accuracy": 0.5} for e in range(1, epoch + 1)]
    return JobStatus(
        job_id=1,
        state="running",
        jobs_ahead=0,
        model=model,
        seed=seed,
        run_index=run_index,
        n_runs=n_runs,
        epoch=epoch,
        max_epochs=30,
        latest=history[-1],
        history=history,
        runs=[],
        error=None,
        elapsed_seconds=12.0,
        stage=stage,
        workers=max(1, len(training)),
        training=list(training),
        histories={run: history for run in training},
    )


def test_with_no_run_in_progress_the_sentence_is_only_the_count():
    assert progress_words(running_status([])) == "2 of 6 runs done"


def test_with_one_run_in_progress_the_sentence_names_it_and_its_epoch():
    assert progress_words(running_status([("B", 1)])) == "2 of 6 runs done; training B seed 1, epoch 3 of at most 30"


def test_with_two_runs_in_progress_the_sentence_names_both():
    words = progress_words(running_status([("B", 1), ("A", 2)]))
    assert words == "2 of 6 runs done; training B seed 1 and A seed 2"


def test_with_three_runs_in_progress_they_are_listed_with_commas_and_an_and():
    words = progress_words(running_status([("A", 0), ("B", 0), ("A", 1)], run_index=0))
    assert words == "0 of 6 runs done; training A seed 0, B seed 0 and A seed 1"


def test_an_evaluation_stage_follows_the_runs_in_brackets():
    words = progress_words(running_status([("A", 0)], stage="random windowing", epoch=1, n_runs=1, run_index=0))
    assert words == "0 of 1 run done; training A seed 0 (random windowing), epoch 1 of at most 30"


@pytest.mark.parametrize("epochs, expected", [(1, "1 epoch,"), (2, "2 epochs,")])
def test_a_finished_runs_line_counts_its_epochs_right(epochs, expected):
    run = {"model": "A", "seed": 0, "accuracy": 0.9, "f1": 0.9, "epochs": epochs, "train_seconds": 1.0}
    line = describe_run({**run, "n_parameters": 10, "device": "cpu"})
    assert expected in line and "1 epochs" not in line


@pytest.mark.parametrize("count, expected", [(1, "(1 file)"), (2, "(2 files)")])
def test_the_cwru_description_counts_its_files_right(count, expected):
    assert DataSpec(dataset="cwru").describe(count).endswith(expected)


@pytest.mark.parametrize("classes, expected", [(1, "1 class told apart"), (2, "2 classes told apart")])
def test_the_order_control_description_counts_its_classes_right(classes, expected):
    assert expected in DataSpec(dataset="order_control", order_classes=classes).describe(0)


def test_a_study_over_one_recording_says_recording_and_over_two_says_recordings():
    assert population("random", "synthetic", 1, 50) == "50 test windows of this one recording"
    assert population("random", "synthetic", 2, 50) == "50 test windows of these two recordings"


def test_the_half_width_legend_says_one_fold_and_five_folds():
    frame = pd.DataFrame({"folds": [1, 1, 5, 5], "seeds": [2, 4, 2, 4], "half_width": [3.0, 2.0, 1.5, 1.0]})
    assert [trace.name for trace in half_width_curves(frame).data] == ["1 fold", "5 folds"]
