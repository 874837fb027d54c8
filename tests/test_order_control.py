"""The order control: every class holds the same patches, only their order differs, so order-free features are
at chance and a feature that knows the order separates the classes."""

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
from core.lab.vibration import DataError, load_order_control
from core.lab.vibration.order_control import CYCLE, SHAPE_RMS, class_sequences, lag_pairs

WINDOW, PATCH, N_CLASSES = 1024, 32, 4


@pytest.fixture(scope="module")
def recordings():
    return load_order_control(seed=0, n_classes=N_CLASSES, duration_s=20.0)


def _windows(recording, offset):
    x = recording.signal[offset:]
    n = x.size // WINDOW
    return x[: n * WINDOW].reshape(n, WINDOW)


def _token_log_energy(windows):
    return np.log(np.mean(windows.reshape(len(windows), -1, PATCH) ** 2, axis=2))  # (windows, tokens)


def _features(windows, kind):
    energy = _token_log_energy(windows)
    if kind == "sorted patch energies":
        return np.sort(energy, axis=1)
    if kind == "rms and kurtosis":
        tokens = windows.reshape(len(windows), -1, PATCH)
        kurtosis = np.sort(scipy.stats.kurtosis(tokens, axis=2), axis=1)
        return np.c_[np.sqrt(np.mean(windows**2, axis=1)), scipy.stats.kurtosis(windows, axis=1), kurtosis]
    if kind == "spectrum":
        return np.log(scipy.signal.periodogram(windows, axis=1)[1][:, 1:] + 1e-12)
    # what knows the order: which shape comes two patches after which, read from the patch energies
    shapes = np.argmin(np.abs(energy[..., None] - np.log(SHAPE_RMS**2)), axis=2)
    counts = np.zeros((len(windows), len(SHAPE_RMS), len(SHAPE_RMS)))
    for row, sequence in enumerate(shapes):
        np.add.at(counts[row], (sequence[:-2], sequence[2:]), 1)
    return counts.reshape(len(windows), -1)


def _accuracy(recordings, kind, offset):
    """Logistic regression trained on the first half of every recording's windows, tested on the second half."""
    xs, ys, first = [], [], []
    for index, recording in enumerate(recordings):
        features = _features(_windows(recording, offset), kind)
        xs.append(features)
        ys += [index] * len(features)
        first += list(np.arange(len(features)) < len(features) // 2)
    x, y, first = np.vstack(xs), np.array(ys), np.array(first)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(x[first], y[first])
    return model.score(x[~first], y[~first])


@pytest.mark.parametrize(
    ("kind", "offset"),
    [("sorted patch energies", 0), ("sorted patch energies", 16), ("rms and kurtosis", 0), ("spectrum", 0)],
)
def test_order_free_features_leave_a_logistic_regression_within_a_few_points_of_chance(recordings, kind, offset):
    # 468 test windows: one standard error at chance is 2 points, so 8 points is 4 of them
    assert abs(_accuracy(recordings, kind, offset) - 1 / N_CLASSES) < 0.08


@pytest.mark.parametrize("offset", [0, 16])
def test_which_shape_follows_two_patches_later_separates_the_classes(recordings, offset):
    assert _accuracy(recordings, "order", offset) > 0.95


def test_every_class_cycle_holds_each_shape_four_times_and_each_neighbour_pair_once_but_differs_two_apart():
    sequences = class_sequences(10)
    assert all(sequence.size == CYCLE for sequence in sequences)
    for sequence in sequences:
        assert np.array_equal(np.bincount(sequence, minlength=4), [4, 4, 4, 4])
        assert np.array_equal(lag_pairs(sequence, 1), np.ones((4, 4)))
    second = [lag_pairs(sequence, 2) for sequence in sequences]
    assert all(not np.array_equal(second[i], second[j]) for i in range(10) for j in range(i))


def test_a_window_on_the_patch_grid_holds_the_same_multiset_of_patch_levels_in_every_class(recordings):
    levels = np.log(SHAPE_RMS**2)
    for recording in recordings:
        energy = _token_log_energy(_windows(recording, 0))
        shapes = np.argmin(np.abs(energy[..., None] - levels), axis=2)
        counts = np.apply_along_axis(np.bincount, 1, shapes, minlength=4)
        assert (counts == WINDOW // PATCH // 4).all()  # 8 patches of each shape in each 32-token window


def test_the_control_is_deterministic_in_its_seed_and_labelled_per_class():
    first, again, other = (load_order_control(seed, 3, 2.0) for seed in (5, 5, 6))
    assert [r.label for r in first] == ["order0", "order1", "order2"]
    assert all(np.array_equal(a.signal, b.signal) for a, b in zip(first, again))
    assert not np.array_equal(first[0].signal, other[0].signal)
    assert first[0].signal.size == 24_000 and first[0].sample_rate == 12_000.0
    with pytest.raises(DataError, match="2 to 10 classes"):
        load_order_control(n_classes=1)


def test_the_default_patch_is_the_models_so_a_default_window_is_32_tokens_of_one_patch_each():
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

    at = open_lab({"src": "order_control"})
    at.number_input(key="oclasses").set_value(3).run()
    at.button(key="load_order_control").click().run()
    assert not at.exception and not errors(at)
    assert any("order control (3 classes" in m.value and "order0, order1, order2" in m.value for m in at.markdown)


def test_a_duration_that_is_not_a_finite_positive_number_of_seconds_is_refused_in_one_line():
    from core.lab.vibration.order_control import MAX_DURATION_S

    for duration in (float("nan"), float("inf"), 0.0, -1.0, MAX_DURATION_S * 2):
        with pytest.raises(DataError, match="duration must be above 0 and at most 600 s per class"):
            load_order_control(duration_s=duration)
