"""The training engine: learning on the synthetic set, determinism, early stopping, stopping, metrics."""

import dataclasses
import math
import os

import numpy as np
import pytest
import torch

import core.lab.training as training
from core.lab.experiment.results import RUN_KEYS
from core.lab.models import ModelConfig
from core.lab.training import TrainConfig, TrainingStopped, classification_metrics, pick_device, train
from core.lab.vibration import DataError, make_windows, synthetic_bearing_set

FOUR_CLASSES = ("normal", "IR007", "B007", "OR007")


@pytest.fixture(scope="module")
def windows():
    # 2 s of each of four classes, 256-sample windows: 64 / 18 / 9 windows per class
    return make_windows(synthetic_bearing_set(seed=0, duration_s=2.0, classes=FOUR_CLASSES), window=256)


def tiny_config(**overrides) -> TrainConfig:
    model = ModelConfig(patch=16, heads=2, layers=1)
    return TrainConfig(**{"model": model, "epochs": 2, "threads": 1, **overrides})


def test_metrics_equal_a_hand_computed_case():
    # class 0: TP 1, FP 1, FN 1 -> P 1/2, R 1/2, F1 1/2
    # class 1: TP 2, FP 1, FN 0 -> P 2/3, R 1,   F1 4/5
    # class 2: TP 1, FP 0, FN 1 -> P 1,   R 1/2, F1 2/3
    y_true = np.array([0, 0, 1, 1, 2, 2])
    y_pred = np.array([0, 1, 1, 1, 2, 0])
    metrics = classification_metrics(y_true, y_pred, 3)
    assert metrics["accuracy"] == pytest.approx(4 / 6)
    assert metrics["precision"] == pytest.approx((1 / 2 + 2 / 3 + 1) / 3)
    assert metrics["recall"] == pytest.approx((1 / 2 + 1 + 1 / 2) / 3)
    assert metrics["f1"] == pytest.approx((1 / 2 + 4 / 5 + 2 / 3) / 3)
    assert metrics["per_class_f1"] == pytest.approx([1 / 2, 4 / 5, 2 / 3])
    assert metrics["confusion_matrix"] == [[1, 1, 0], [0, 2, 0], [1, 0, 1]]


def test_a_class_never_predicted_scores_zero_and_counts_in_the_macro_mean():
    metrics = classification_metrics(np.array([0, 1, 2, 2]), np.array([0, 1, 1, 1]), 3)
    assert metrics["per_class_f1"] == pytest.approx([1.0, 1 / 2, 0.0])  # class 1: P 1/3, R 1, F1 2PR/(P+R)
    assert metrics["f1"] == pytest.approx((1 + 1 / 2 + 0) / 3)


def test_a_short_run_on_the_synthetic_set_beats_chance_by_a_wide_margin(windows):
    run = train(windows, "A", tiny_config(epochs=8), seed=0)
    assert run["accuracy"] >= 0.6  # chance is 0.25 with four balanced classes
    assert run["f1"] >= 0.5


def test_a_run_has_the_results_json_keys_and_consistent_numbers(windows):
    config = tiny_config(epochs=3, patience=10)
    progress_calls = []
    run = train(windows, "B", config, seed=1, progress=lambda epoch, metrics: progress_calls.append((epoch, metrics)))
    assert set(RUN_KEYS) <= set(run)
    assert run["model"] == "B" and run["seed"] == 1 and run["device"] == "cpu"
    assert run["epochs"] == len(run["history"]) == 3
    assert [epoch for epoch, _ in progress_calls] == [1, 2, 3]
    assert progress_calls[-1][1] == run["history"][-1]
    assert np.sum(run["confusion_matrix"]) == len(windows.y_test)
    assert np.trace(run["confusion_matrix"]) == round(run["accuracy"] * len(windows.y_test))
    assert run["train_seconds"] > 0 and run["windows_per_second"] > 0
    assert run["best_epoch"] == 1 + int(np.argmin([row["val_loss"] for row in run["history"]]))
    assert "weights" not in run


def test_same_seed_same_metrics_on_cpu(windows):
    config = tiny_config()
    first, second = train(windows, "B", config, seed=3), train(windows, "B", config, seed=3)
    other = train(windows, "B", config, seed=4)
    for key in ("accuracy", "f1", "confusion_matrix", "history"):
        assert first[key] == second[key], key
    assert first["history"] != other["history"]


def test_early_stopping_restores_the_best_checkpoint(windows, monkeypatch):
    # With the best validation loss scripted at epoch 1, the restored model is the model after epoch 1,
    # so its test predictions equal those of a one-epoch run with the same seed.
    one_epoch = train(windows, "CNN", tiny_config(epochs=1, learning_rate=0.01), seed=0)

    scripted = iter([0.10, 0.50, 0.40, 0.30, 0.20])
    real = training._loss_and_accuracy

    def scripted_validation(model, x, y, device):
        _, accuracy = real(model, x, y, device)
        return next(scripted), accuracy

    monkeypatch.setattr(training, "_loss_and_accuracy", scripted_validation)
    run = train(windows, "CNN", tiny_config(epochs=5, patience=3, learning_rate=0.01), seed=0)
    assert run["epochs"] == 4  # epochs 2, 3, 4 bring no new best: patience 3 is used up
    assert run["best_epoch"] == 1
    assert run["confusion_matrix"] == one_epoch["confusion_matrix"]


def test_should_stop_is_checked_before_every_batch(windows):
    batches_per_epoch = -(-len(windows.y_train) // 64)  # 256 training windows, batch 64: 4 batches
    checks = []

    def stop_on_sixth_check():
        checks.append(1)
        return len(checks) == 6

    epochs_seen = []
    with pytest.raises(TrainingStopped):
        train(
            windows,
            "A",
            tiny_config(epochs=5),
            seed=0,
            should_stop=stop_on_sixth_check,
            progress=lambda epoch, metrics: epochs_seen.append(epoch),
        )
    assert batches_per_epoch == 4
    assert len(checks) == 6  # stopped at the check that said so, not an epoch later
    assert epochs_seen == [1]


def test_thread_count_is_set_for_training_and_restored(windows):
    before = torch.get_num_threads()
    seen = []
    train(
        windows, "A", tiny_config(epochs=1, threads=1), seed=0, progress=lambda *_: seen.append(torch.get_num_threads())
    )
    assert seen == [1]
    assert torch.get_num_threads() == before
    huge = []
    train(
        windows,
        "A",
        tiny_config(epochs=1, threads=10_000),
        seed=0,
        progress=lambda *_: huge.append(torch.get_num_threads()),
    )
    assert huge == [min(10_000, training.usable_cpus())]


def test_keep_weights_returns_the_restored_state_on_the_cpu(windows):
    run = train(windows, "B", tiny_config(epochs=1), seed=0, keep_weights=True)
    assert run["weights"]["head.weight"].shape == (4, 16)
    assert run["weights"]["head.weight"].device.type == "cpu"


def test_an_empty_split_is_a_data_error(windows):
    no_validation = dataclasses.replace(windows, x_val=windows.x_val[:0], y_val=windows.y_val[:0])
    with pytest.raises(DataError, match="val split has no windows"):
        train(no_validation, "A", tiny_config(), seed=0)


def test_labels_outside_the_class_list_are_a_data_error(windows):
    broken = dataclasses.replace(windows, y_test=windows.y_test + 10)
    with pytest.raises(DataError, match="labels outside 0..3"):
        train(broken, "A", tiny_config(), seed=0)


@pytest.mark.parametrize(
    ("min_delta", "epochs_run", "best_epoch"),
    [
        (0.0, 9, 6),  # every drop counts: the last new best is epoch 6 (0.1995), three quiet epochs follow
        (0.01, 5, 2),  # drops of 0.005 do not count: after epoch 2 (0.2100) nothing undercuts 0.2000
    ],
)
def test_min_delta_ignores_improvements_smaller_than_it(windows, monkeypatch, min_delta, epochs_run, best_epoch):
    scripted = iter([0.3000, 0.2100, 0.2050, 0.2010, 0.2005, 0.1995, 0.1996, 0.1997, 0.1998, 0.1999])
    real = training._loss_and_accuracy

    def scripted_validation(model, x, y, device):
        _, accuracy = real(model, x, y, device)
        return next(scripted), accuracy

    monkeypatch.setattr(training, "_loss_and_accuracy", scripted_validation)
    config = tiny_config(epochs=10, patience=3, learning_rate=0.01, min_delta=min_delta)
    run = train(windows, "CNN", config, seed=0)
    assert (run["epochs"], run["best_epoch"]) == (epochs_run, best_epoch)


def test_min_delta_is_off_by_default_and_checked():
    assert TrainConfig().min_delta == 0.0
    for bad in (-0.001, 1.0, True, float("nan")):
        with pytest.raises(ValueError, match="min_delta"):
            TrainConfig(min_delta=bad)
    made_before = {key: value for key, value in TrainConfig().to_dict().items() if key != "min_delta"}
    assert TrainConfig.from_dict(made_before) == TrainConfig()


def test_config_rejects_settings_that_cannot_train():
    with pytest.raises(ValueError, match="epochs must be a positive integer"):
        TrainConfig(epochs=0)
    with pytest.raises(ValueError, match="learning_rate must be positive"):
        TrainConfig(learning_rate=0.0)


def test_config_round_trips_through_a_plain_dict():
    config = tiny_config(epochs=7)
    assert TrainConfig.from_dict(config.to_dict()) == config


def test_device_choice():
    assert pick_device("cpu").type == "cpu"
    assert pick_device(None).type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no GPU"):
            pick_device("cuda")


def test_cosine_schedule_follows_its_closed_form(windows, monkeypatch):
    # after epoch k of T the rate is lr · (1 + cos(pi k / T)) / 2 (the one-epoch warm-up is over by then)
    optimizers = []
    real = training.make_optimizer
    monkeypatch.setattr(training, "make_optimizer", lambda *a: optimizers.append(real(*a)) or optimizers[-1])
    rates = []
    config = tiny_config(epochs=4, patience=10, learning_rate=0.004, lr_schedule="cosine")
    train(windows, "A", config, seed=0, progress=lambda *_: rates.append(optimizers[0].param_groups[0]["lr"]))
    assert rates == pytest.approx([0.004 * (1 + math.cos(math.pi * k / 4)) / 2 for k in (1, 2, 3, 4)])
    constant = []
    train(
        windows,
        "A",
        tiny_config(epochs=2),
        seed=0,
        progress=lambda *_: constant.append(optimizers[-1].param_groups[0]["lr"]),
    )
    assert constant == [TrainConfig().learning_rate] * 2
    with pytest.raises(ValueError, match="lr_schedule must be one of"):
        TrainConfig(lr_schedule="step")


def test_extra_test_sets_are_scored_by_the_restored_model(windows):
    flipped = windows.x_test[:, ::-1].copy()
    run = train(
        windows,
        "CNN",
        tiny_config(),
        seed=0,
        extra_test_sets={
            "same": (windows.x_test, windows.y_test),
            "reversed": (flipped, windows.y_test),
        },
    )
    same = run["extra_tests"]["same"]
    assert same["confusion_matrix"] == run["confusion_matrix"] and same["accuracy"] == run["accuracy"]
    assert np.sum(run["extra_tests"]["reversed"]["confusion_matrix"]) == len(windows.y_test)
    assert "extra_tests" not in train(windows, "CNN", tiny_config(epochs=1), seed=0)


def test_the_optimizer_is_adamw_with_the_fused_kernel_on_cpu():
    model = torch.nn.Linear(4, 2)
    optimizer = training.make_optimizer(model, tiny_config(learning_rate=0.01, weight_decay=0.05), torch.device("cpu"))
    assert isinstance(optimizer, torch.optim.AdamW)
    assert optimizer.defaults["fused"] is True
    assert (optimizer.defaults["lr"], optimizer.defaults["weight_decay"]) == (0.01, 0.05)


def test_usable_cpus_follow_a_cgroup_quota(tmp_path):
    affinity = len(os.sched_getaffinity(0))
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "cpu.max").write_text("max 100000\n")
    assert training.usable_cpus(v2) == affinity  # no quota
    (v2 / "cpu.max").write_text("50000 100000\n")  # half a CPU still gets one thread
    assert training.usable_cpus(v2) == 1
    (v2 / "cpu.max").write_text(f"{150000 * affinity} 100000\n")  # above the affinity mask: the mask wins
    assert training.usable_cpus(v2) == affinity
    v1 = tmp_path / "v1"
    (v1 / "cpu").mkdir(parents=True)
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("100000\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert training.usable_cpus(v1) == 1
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert training.usable_cpus(v1) == affinity
    assert training.usable_cpus(tmp_path / "missing") == affinity


def test_a_negative_seed_trains_and_repeats(windows):
    config = tiny_config(epochs=1)
    first, again = train(windows, "B", config, seed=-1), train(windows, "B", config, seed=-1)
    assert first["history"] == again["history"]
    assert first["history"] != train(windows, "B", config, seed=1)["history"]


def test_warm_up_raises_the_rate_linearly_over_its_steps_then_holds_or_follows_the_cosine():
    from core.lab.epochs import WarmUpSchedule, steps_per_epoch

    assert steps_per_epoch(130, 64) == 3 and steps_per_epoch(129, 64) == 2  # a lone trailing window is dropped
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=0.0)
    schedule = WarmUpSchedule(optimizer, TrainConfig(learning_rate=0.006, warmup_epochs=2, epochs=4), steps_per_epoch=3)
    rates = []
    for _ in range(3):  # epochs
        for _ in range(3):  # steps
            schedule.before_step()
            rates.append(optimizer.param_groups[0]["lr"])
        schedule.step()
    assert rates == pytest.approx([0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.006, 0.006, 0.006])
    cosine = WarmUpSchedule(
        optimizer, TrainConfig(learning_rate=0.006, warmup_epochs=1, epochs=4, lr_schedule="cosine"), 1
    )
    cosine.step()
    cosine.step()  # epoch 2 of 4: the cosine factor is (1 + cos(pi / 2)) / 2 = 0.5
    cosine.before_step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.003)
    with pytest.raises(ValueError, match="warmup_epochs"):
        TrainConfig(warmup_epochs=-1)


def test_input_dropout_reaches_model_a_only_when_asked():
    from core.lab.models import ModelConfig, build_model

    assert build_model("A", 256, 3, ModelConfig(input_dropout_for_all=False)).input_dropout_p == 0.0
    assert build_model("A", 256, 3, ModelConfig()).input_dropout_p == 0.1  # the default since the study
    assert build_model("B", 256, 3, ModelConfig()).input_dropout_p == 0.1


def test_per_window_scores_by_hand():
    from core.lab.training import per_window_scores

    probabilities = np.array([[0.7, 0.2, 0.1], [0.5, 0.4, 0.1], [0.1, 0.1, 0.8], [0.3, 0.6, 0.1]])
    scores = per_window_scores(np.array([0, 1, 2, 1]), probabilities)
    # class 0: 1 of 1 right, class 1: 1 of 2, class 2: 1 of 1 -> (1 + 0.5 + 1) / 3
    assert scores["balanced_accuracy"] == pytest.approx(2.5 / 3)
    assert scores["log_loss"] == pytest.approx(-np.mean(np.log([0.7, 0.4, 0.8, 0.6])))
    assert scores["predictions"] == {"true": [0, 1, 2, 1], "predicted": [0, 0, 2, 1], "p_true": [0.7, 0.4, 0.8, 0.6]}


def test_a_config_with_a_model_field_changed_keeps_every_other_setting():
    config = TrainConfig(learning_rate=1e-2, model=ModelConfig(patch=16, pe_scale=1.0))
    changed = config.with_model(pe_scale=0.3, d_model=48)
    assert (changed.model.pe_scale, changed.model.d_model, changed.model.patch) == (0.3, 48, 16)
    assert changed.learning_rate == 1e-2 and config.model.pe_scale == 1.0  # the original is untouched
