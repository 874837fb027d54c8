"""The order control: every class holds the same patches, only their angle in the revolution differs, so
order-free features are at chance, a feature that knows each token's position separates the classes, every
window starts on a revolution, and model B learns it while B-noPE cannot."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
import scipy.stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.lab.data_spec import DataSpec
from core.lab.experiment.cli import build_parser
from core.lab.models import ModelConfig
from core.lab.study.folds import time_cv_folds
from core.lab.training import TrainConfig, train
from core.lab.vibration import DataError, load_order_control, make_windows
from core.lab.vibration.order_control import (
    PATCHES_PER_REVOLUTION,
    SHAPE_RMS,
    class_arrangements,
    on_grid,
    revolution_grid,
)

WINDOW, PATCH, N_CLASSES = 1024, 32, 4


@pytest.fixture(scope="module")
def recordings():
    return load_order_control(seed=0, n_classes=N_CLASSES, duration_s=20.0)


def _windows(recording):
    x = recording.signal
    n = x.size // WINDOW
    return x[: n * WINDOW].reshape(n, WINDOW)


def _token_log_energy(windows):
    return np.log(np.mean(windows.reshape(len(windows), -1, PATCH) ** 2, axis=2))  # (windows, tokens)


def _shapes(windows):
    """Each token's shape, read from its energy (every shape has its own RMS)."""
    return np.argmin(np.abs(_token_log_energy(windows)[..., None] - np.log(SHAPE_RMS**2)), axis=2)


def _features(windows, kind):
    if kind == "sorted patch energies":
        return np.sort(_token_log_energy(windows), axis=1)
    if kind == "rms and kurtosis":
        tokens = windows.reshape(len(windows), -1, PATCH)
        kurtosis = np.sort(scipy.stats.kurtosis(tokens, axis=2), axis=1)
        return np.c_[np.sqrt(np.mean(windows**2, axis=1)), scipy.stats.kurtosis(windows, axis=1), kurtosis]
    if kind == "spectrum":
        return np.log(scipy.signal.periodogram(windows, axis=1)[1][:, 1:] + 1e-12)
    return np.eye(len(SHAPE_RMS))[_shapes(windows)].reshape(len(windows), -1)  # knows the order: shape per position


def _accuracy(recordings, kind):
    """Logistic regression trained on the first half of every recording's windows, tested on the second half."""
    xs, ys, first = [], [], []
    for index, recording in enumerate(recordings):
        features = _features(_windows(recording), kind)
        xs.append(features)
        ys += [index] * len(features)
        first += list(np.arange(len(features)) < len(features) // 2)
    x, y, first = np.vstack(xs), np.array(ys), np.array(first)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(x[first], y[first])
    return model.score(x[~first], y[~first])


@pytest.mark.parametrize("kind", ["sorted patch energies", "rms and kurtosis", "spectrum"])
def test_order_free_features_leave_a_logistic_regression_within_a_few_points_of_chance(recordings, kind):
    # 468 test windows: one standard error at chance is 2 points, so 8 points is 4 of them
    assert abs(_accuracy(recordings, kind) - 1 / N_CLASSES) < 0.08


def test_which_shape_sits_at_which_angle_separates_the_classes(recordings):
    assert _accuracy(recordings, "order") > 0.95


def test_every_class_holds_each_shape_eight_times_per_revolution_and_two_classes_differ_at_most_angles():
    arrangements = class_arrangements(10)
    for arrangement in arrangements:
        assert arrangement.size == PATCHES_PER_REVOLUTION
        assert np.array_equal(np.bincount(arrangement, minlength=4), [8, 8, 8, 8])
    # two random arrangements of this multiset agree at 8 of 32 angles on average; the greedy pick keeps even the
    # closest pair of ten classes at that, and of the default four at 6
    agreement = [np.sum(a == b) for i, a in enumerate(arrangements) for b in arrangements[:i]]
    assert max(agreement) == 8 and max(agreement[:6]) == 6


def test_a_revolution_holds_its_class_arrangement_and_the_same_multiset_of_levels_in_every_class(recordings):
    for recording, arrangement in zip(recordings, class_arrangements(N_CLASSES)):
        shapes = _shapes(_windows(recording))
        assert (shapes == arrangement).all()
        assert (np.apply_along_axis(np.bincount, 1, shapes, minlength=4) == 8).all()


def test_every_window_of_the_time_split_and_of_time_cv_folds_starts_on_a_revolution(recordings):
    windows = make_windows(recordings, WINDOW, windowing="time")
    for role in ("train", "val", "test"):
        x, y = getattr(windows, f"x_{role}"), getattr(windows, f"y_{role}")
        arrangements = np.array(class_arrangements(N_CLASSES))[y]
        assert (_shapes(x * windows.std + windows.mean) == arrangements).all()
    for fold in time_cv_folds(recordings, WINDOW, k=5, repeats=3):
        for role_starts in fold.starts.values():
            assert all((starts % WINDOW == 0).all() for _, starts in role_starts)


def test_a_stride_off_the_revolution_is_refused_in_words_and_other_data_has_no_grid(recordings):
    assert revolution_grid(recordings, 2048) == 1024 and on_grid(1025, 1024) == 2048 and on_grid(2048, 1024) == 2048
    with pytest.raises(DataError, match="start at a revolution, every 1024 samples: make the stride"):
        make_windows(recordings, WINDOW, stride=512)
    with pytest.raises(DataError, match="multiple of 1024; it is 1000"):
        time_cv_folds(recordings, 1000, k=5)
    other = load_order_control(0, 2, 2.0, patch=16)
    with pytest.raises(DataError, match="different revolution lengths"):
        revolution_grid([recordings[0], other[0]], 1024)


def test_model_b_learns_the_control_and_b_without_the_encoding_stays_near_chance():
    windows = make_windows(load_order_control(seed=1, n_classes=N_CLASSES, duration_s=12.0), WINDOW)
    config = TrainConfig(epochs=12, patience=12)
    b, b_no_pe = (train(windows, model, config, seed=0)["accuracy"] for model in ("B", "B-noPE"))
    # 12 s per class leaves 52 test windows: chance is 25 %, one window is 2 points, one standard error 6 points
    assert len(windows.y_test) == 52
    assert b > 0.95
    assert b_no_pe < 0.45


def test_the_control_is_deterministic_in_its_seed_and_labelled_per_class():
    first, again, other = (load_order_control(seed, 3, 2.0) for seed in (5, 5, 6))
    assert [r.label for r in first] == ["order0", "order1", "order2"]
    assert all(np.array_equal(a.signal, b.signal) for a, b in zip(first, again))
    assert not np.array_equal(first[0].signal, other[0].signal)
    # 2 s at 12 kHz is 23.4 revolutions of 1024 samples: 23 whole ones
    assert first[0].signal.size == 23 * 1024 and first[0].sample_rate == 12_000.0
    assert first[0].meta["cycle"] == 1024
    with pytest.raises(DataError, match="2 to 10 classes"):
        load_order_control(n_classes=1)


def test_the_default_patch_is_the_models_so_a_default_window_is_one_revolution_of_32_tokens():
    spec = DataSpec("order_control")
    assert spec.order_patch == ModelConfig().patch == 32


def test_the_order_control_is_a_data_source_that_round_trips_through_its_dict_and_the_command_line():
    spec = DataSpec("order_control", data_seed=3, synthetic_duration_s=2.5, order_classes=5, order_patch=16)
    assert DataSpec.from_dict(spec.to_dict()) == spec
    assert spec.to_dict()["order_classes"] == 5 and spec.to_dict()["loads"] is None
    assert DataSpec.from_args(build_parser().parse_args(spec.argv())) == spec
    assert "--order-classes 5 --order-patch 16" in " ".join(spec.argv())
    recordings = spec.load()
    assert len(recordings) == 5 and recordings[0].meta["patch"] == 16
    assert "5 classes" in spec.describe(len(recordings))


def test_the_fault_lab_offers_the_order_control_and_loads_it_as_the_current_data():
    from tests.apptest_utils import errors, open_lab

    at = open_lab({"dataset": "order_control"})
    at.number_input(key="order_classes").set_value(3).run()
    at.button(key="load_order_control").click().run()
    assert not at.exception and not errors(at)
    assert any("order control (3 classes" in m.value and "order0, order1, order2" in m.value for m in at.markdown)


def test_a_duration_that_is_not_a_finite_positive_number_of_seconds_is_refused_in_one_line():
    from core.lab.vibration.order_control import MAX_DURATION_S

    for duration in (float("nan"), float("inf"), 0.0, -1.0, MAX_DURATION_S * 2):
        with pytest.raises(DataError, match="duration must be above 0 and at most 600 s per class"):
            load_order_control(duration_s=duration)
