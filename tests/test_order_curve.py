"""The order-dose curve: at every level the classes are the same bag of patches with the same spectrum, so
order-blind classifiers sit within 5 points of chance on 1,700 test windows, while the order of the pulses
separates the classes; the family is a data source that round-trips through its dict and the command line."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
import scipy.stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.lab.data_spec import DataSpec
from core.lab.study.cli import build_parser
from core.lab.vibration import DataError, load_order_curve
from core.lab.vibration.order_curve import (
    EDGE_SAMPLES,
    PATCH,
    PULSE_SAMPLES,
    SHORT_GAP_BASES,
    curve_level,
    curve_levels,
    pulse_plan,
    pulse_shape,
)

WINDOW, SECONDS = 1024, 150.0
LEVELS = range(len(SHORT_GAP_BASES))
# 150 s per class is 1,757 windows each; half of them tested: one standard error at chance is 1.2 points, so a
# classifier blind to the class leaves chance by more than 5 points (4.2 of them) once in 40,000 draws


@pytest.fixture(scope="module", params=LEVELS, ids=lambda level: f"level {level}")
def level_windows(request):
    """(windows, labels, first half?) of one level, cut 517 samples into each recording: on no grid of the task."""
    xs, ys = [], []
    for index, recording in enumerate(load_order_curve(seed=11, level=request.param, duration_s=SECONDS)):
        signal = recording.signal[517:]
        n = signal.size // WINDOW
        xs.append(signal[: n * WINDOW].reshape(n, WINDOW))
        ys.append(np.full(n, index))
    first = np.concatenate([np.arange(len(y)) < len(y) // 2 for y in ys])
    return np.vstack(xs), np.concatenate(ys), first


def _patches(windows):
    return windows.reshape(len(windows), -1, PATCH)  # (windows, tokens, patch)


def _band_log_powers(windows, bands=32):
    """The order-blind baseline's features: the log power of 32 equal bands of the one-sided spectrum."""
    power = scipy.signal.periodogram(windows, axis=1)[1][:, : WINDOW // 2]
    return np.log(power.reshape(len(windows), bands, -1).sum(axis=2) + 1e-12)


def _summaries(windows):
    """Order-free summaries: mean, RMS and kurtosis of the window, sorted patch energies and patch means."""
    patches = _patches(windows)
    energies, means = np.log(np.mean(patches**2, axis=2)), patches.mean(axis=2)
    whole = np.c_[windows.mean(axis=1), np.sqrt(np.mean(windows**2, axis=1)), scipy.stats.kurtosis(windows, axis=1)]
    return np.c_[whole, np.sort(energies, axis=1), np.sort(means, axis=1)]


def _lead_features(windows, reach=8):
    """Knows the order: how often a positive patch is followed k patches later by a negative one, minus the
    other way round, for k = 1 .. reach - 1 (patch means are the pulses' signs)."""
    means = _patches(windows).mean(axis=2)
    up, down = np.maximum(means, 0), np.maximum(-means, 0)
    return np.array([np.mean(up[:, :-k] * down[:, k:] - down[:, :-k] * up[:, k:], axis=1) for k in range(1, reach)]).T


def _held_out_accuracy(features, y, first):
    """A standardised logistic regression fitted on the first half of each recording's windows, scored on the rest."""
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(features[first], y[first])
    return model.score(features[~first], y[~first])


@pytest.mark.parametrize("features", [_band_log_powers, _summaries], ids=["32-band log spectrum", "summaries"])
def test_order_free_features_leave_a_logistic_regression_within_5_points_of_chance_at_every_level(
    level_windows, features
):
    windows, y, first = level_windows
    assert (~first).sum() > 1700
    assert abs(_held_out_accuracy(features(windows), y, first) - 0.5) < 0.05


def test_the_rms_of_any_one_patch_position_is_within_5_points_of_chance_at_every_level(level_windows):
    windows, y, first = level_windows
    rms = np.sqrt(np.mean(_patches(windows) ** 2, axis=2))  # (windows, tokens)
    accuracies = [_held_out_accuracy(rms[:, [j]], y, first) for j in range(rms.shape[1])]
    assert max(abs(a - 0.5) for a in accuracies) < 0.05  # so the best position, however chosen, is too


def test_which_pulse_the_short_silence_follows_separates_the_classes_well_above_chance(level_windows):
    windows, y, first = level_windows
    # the information is there at every level, most at the easiest: what B learns of it is the curve
    assert _held_out_accuracy(_lead_features(windows), y, first) > 0.8


def test_the_pulses_alternate_in_sign_with_the_short_silence_after_the_leader_and_never_share_a_patch():
    for level in curve_levels():
        for positive_leads in (True, False):
            plan = pulse_plan(200_000, level, positive_leads, np.random.default_rng(level.index))
            starts, lengths, signs = plan.T
            silences = starts[1:] - (starts[:-1] + lengths[:-1])
            after_leader = signs[:-1] == (1 if positive_leads else -1)
            assert (signs[1:] == -signs[:-1]).all()
            short, long = silences[after_leader], silences[~after_leader]
            assert level.short_gap[0] <= short.min() and short.max() <= level.short_gap[1]
            assert level.long_gap[0] <= long.min() and long.max() <= level.long_gap[1]
            assert silences.min() >= PATCH + EDGE_SAMPLES  # a patch cannot reach from one pulse into the next
            assert PULSE_SAMPLES[0] <= lengths.min() and lengths.max() <= PULSE_SAMPLES[1]
            # every silence and length is jittered over a whole patch: pulse ends fall anywhere in their patch
            assert np.bincount((starts + lengths) % PATCH, minlength=PATCH).min() > 0


def test_a_pulse_is_symmetric_in_time_so_a_reversed_stream_of_one_class_is_a_stream_of_the_other():
    shape = pulse_shape(70)
    assert np.array_equal(shape, shape[::-1]) and shape.max() == 1.0 and shape[0] < 0.05
    forward = pulse_plan(100_000, curve_level(0), True, np.random.default_rng(3))
    mirrored = forward[::-1].copy()
    mirrored[:, 0] = 100_000 - (forward[::-1, 0] + forward[::-1, 1])  # where each pulse lands read backwards
    silences = mirrored[1:, 0] - (mirrored[:-1, 0] + mirrored[:-1, 1])
    after_negative = mirrored[:-1, 2] == -1
    assert silences[after_negative].max() <= curve_level(0).short_gap[1] < silences[~after_negative].min()


def test_the_levels_bring_the_two_silences_closer_from_a_contrast_of_48_samples_to_16():
    assert [level.contrast for level in curve_levels()] == [48, 24, 20, 16]
    assert curve_level(0).short_gap == (48, 79) and curve_level(0).long_gap == (96, 127)
    assert all(sum(level.short_gap) + sum(level.long_gap) == 2 * 144 + 2 * (PATCH - 1) for level in curve_levels())
    for bad in (-1, len(SHORT_GAP_BASES), 1.5, True, "0"):
        with pytest.raises(DataError, match="order curve has levels 0 to 3"):
            curve_level(bad)


def test_the_curve_is_deterministic_in_its_seed_and_labels_its_two_classes_by_the_leading_train():
    first, again, other = (load_order_curve(seed, 1, 2.0) for seed in (5, 5, 6))
    assert [r.label for r in first] == ["positive_leads", "negative_leads"]
    assert all(np.array_equal(a.signal, b.signal) for a, b in zip(first, again))
    assert not np.array_equal(first[0].signal, other[0].signal)
    assert first[0].signal.size == 24_000 and first[0].sample_rate == 12_000.0
    assert first[1].meta["contrast_samples"] == 24 and first[1].meta["short_gap_samples"] == [60, 91]
    for duration in (float("nan"), 0.0, -1.0, 601.0):
        with pytest.raises(DataError, match="duration must be above 0 and at most 600 s per class"):
            load_order_curve(duration_s=duration)


def test_the_curve_is_a_data_source_that_round_trips_through_its_dict_and_the_study_command_line():
    spec = DataSpec("order_curve", data_seed=3, synthetic_duration_s=2.5, order_level=2)
    settings = spec.to_dict()
    assert DataSpec.from_dict(settings) == spec
    assert settings["order_level"] == 2 and settings["order_curve"]["contrast_samples"] == 20
    assert settings["order_curve"]["short_gap_samples"] == [62, 93] and settings["loads"] is None
    assert DataSpec.from_args(build_parser().parse_args(spec.argv())) == spec
    assert "--order-level 2" in " ".join(spec.argv())
    short = "--dataset order_curve --level 2 --duration 2.5 --data-seed 3".split()
    assert DataSpec.from_args(build_parser().parse_args(short)) == spec
    recordings = spec.load()
    assert [r.label for r in recordings] == ["positive_leads", "negative_leads"]
    assert "level 2" in spec.describe(len(recordings)) and "20 samples apart" in spec.describe(len(recordings))
