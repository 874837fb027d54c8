"""make_windows: no sample shared between roles with time windowing, counts that add up, train-only normalisation,
and the old keyword names (split, mode) still accepted."""

from __future__ import annotations

import numpy as np
import pytest

from core.lab.vibration import DataError, Recording, make_windows
from core.lab.vibration.windows import WindowSet


def ramp_recordings(lengths: dict[str, int], offset_step: int = 1_000_000) -> list[Recording]:
    """Signals whose value is a unique sample id, so every window can be traced back to its samples."""
    recordings = []
    for number, (label, length) in enumerate(lengths.items()):
        signal = number * offset_step + np.arange(length, dtype=np.float64)
        recordings.append(Recording(signal, 12_000.0, label, {"source": "test", "file": f"{label}.bin"}))
    return recordings


def sample_ids(windows: WindowSet, x: np.ndarray) -> np.ndarray:
    return np.rint(x.astype(np.float64) * windows.std + windows.mean).astype(np.int64)


def test_time_windowing_blocks_are_hand_computed_for_a_small_case():
    # length 120, window 10: usable 100 -> train [0, 70), gap of 10, val [80, 100), gap, test [110, 120)
    windows = make_windows(ramp_recordings({"normal": 120, "IR007": 120}), window=10)
    assert windows.ranges[0]["train"] == (0, 70)
    assert windows.ranges[0]["val"] == (80, 100)
    assert windows.ranges[0]["test"] == (110, 120)
    assert windows.counts == {
        "train": {"normal": 7, "IR007": 7},
        "val": {"normal": 2, "IR007": 2},
        "test": {"normal": 1, "IR007": 1},
    }
    np.testing.assert_array_equal(sample_ids(windows, windows.x_val)[:2, 0], [80, 90])


def test_time_windowing_shares_no_sample_between_roles():
    lengths = {"normal": 20_000, "IR007": 15_000, "OR021": 30_017}
    windows = make_windows(ramp_recordings(lengths), window=256, stride=100)
    seen = {name: set(sample_ids(windows, getattr(windows, f"x_{name}")).ravel()) for name in ("train", "val", "test")}
    assert seen["train"] & seen["val"] == set()
    assert seen["train"] & seen["test"] == set()
    assert seen["val"] & seen["test"] == set()
    # Each window is contiguous and lies inside its role's range of its own recording.
    for name in ("train", "val", "test"):
        ids = sample_ids(windows, getattr(windows, f"x_{name}"))
        assert np.all(np.diff(ids, axis=1) == 1)
        labels = getattr(windows, f"y_{name}")
        for rec_index, block in enumerate(windows.ranges):
            mine = ids[labels == windows.class_names.index(block["label"])] - rec_index * 1_000_000
            start, stop = block[name]
            assert mine.min() >= start and mine.max() < stop


def test_time_windowing_gap_is_one_window_and_ranges_follow_the_shares():
    windows = make_windows(ramp_recordings({"normal": 50_000, "B007": 50_000}), window=1000, shares=(0.6, 0.3, 0.1))
    block = windows.ranges[0]
    assert block["val"][0] - block["train"][1] == 1000
    assert block["test"][0] - block["val"][1] == 1000
    usable = 50_000 - 2 * 1000
    assert block["train"] == (0, round(0.6 * usable))
    assert block["test"][1] == 50_000


def test_counts_add_up_and_report_per_class_balance():
    lengths = {"normal": 60_985, "IR007": 121_265, "B014": 121_846}
    windows = make_windows(ramp_recordings(lengths), window=1024)
    total = 0
    for name in ("train", "val", "test"):
        y = getattr(windows, f"y_{name}")
        x = getattr(windows, f"x_{name}")
        assert x.shape == (y.size, 1024) and x.dtype == np.float32 and y.dtype == np.int64
        assert sum(windows.counts[name].values()) == y.size
        assert windows.counts[name] == {c: int(np.sum(y == i)) for i, c in enumerate(windows.class_names)}
        total += y.size
    # normal: usable 58,937 -> train 41,255 samples = 40 windows, val 11,788 = 11, test 5,894 = 5
    assert windows.counts["train"]["normal"] == 40
    assert windows.counts["val"]["normal"] == 11
    assert windows.counts["test"]["normal"] == 5
    # No overlap: the windows never cover more samples than exist.
    assert total * 1024 <= sum(lengths.values())


def test_normalisation_uses_the_train_windows_only():
    rng = np.random.default_rng(3)
    signal_a = rng.normal(0.0, 1.0, 30_000)
    signal_a[21_000:] += 50.0  # val and test blocks shifted: must not move the statistics
    recordings = [Recording(signal_a, 12_000, "normal"), Recording(rng.normal(0, 1, 30_000), 12_000, "IR007")]
    windows = make_windows(recordings, window=500)
    # train block [0, 20 300): 40 windows of 500 cover samples [0, 20 000)
    raw_train = np.concatenate([signal_a[:20_000], recordings[1].signal[:20_000]])
    assert windows.mean == pytest.approx(raw_train.mean(), abs=1e-9)
    assert windows.std == pytest.approx(raw_train.std(), rel=1e-9)
    assert windows.x_train.mean() == pytest.approx(0.0, abs=1e-5)
    assert windows.x_train.std() == pytest.approx(1.0, abs=1e-4)
    assert windows.x_test[windows.y_test == 0].mean() > 10


def test_class_names_follow_the_contract_order_then_unknown_labels():
    lengths = {"OR021": 5000, "custom_b": 5000, "normal": 5000, "custom_a": 5000, "IR007": 5000}
    windows = make_windows(ramp_recordings(lengths), window=256)
    assert windows.class_names == ["normal", "IR007", "OR021", "custom_b", "custom_a"]
    assert windows.stride == 256 and windows.windowing == "time" and windows.sample_rate == 12_000.0


def test_two_recordings_of_one_class_pool_their_windows():
    recordings = ramp_recordings({"normal": 20_000, "IR007": 20_000, "IR007b": 20_000})
    recordings[2].label = "IR007"
    windows = make_windows(recordings, window=1000)
    single = make_windows(recordings[:2], window=1000)
    assert windows.class_names == ["normal", "IR007"]
    assert windows.counts["train"]["IR007"] == 2 * single.counts["train"]["IR007"]
    assert len(windows.ranges) == 3


def test_random_windowing_deals_every_window_once_and_is_seeded():
    lengths = {"normal": 20_480, "IR007": 20_480}
    windows = make_windows(ramp_recordings(lengths), window=1024, windowing="random", seed=1)
    ids = np.concatenate([sample_ids(windows, getattr(windows, f"x_{n}"))[:, 0] for n in ("train", "val", "test")])
    assert sorted(ids) == sorted(list(range(0, 20_480, 1024)) + list(range(1_000_000, 1_020_480, 1024)))
    # 20 windows per class: val round(4.0) = 4, test round(2.0) = 2, train 14
    assert windows.counts == {
        "train": {"normal": 14, "IR007": 14},
        "val": {"normal": 4, "IR007": 4},
        "test": {"normal": 2, "IR007": 2},
    }
    again = make_windows(ramp_recordings(lengths), window=1024, windowing="random", seed=1)
    other = make_windows(ramp_recordings(lengths), window=1024, windowing="random", seed=2)
    np.testing.assert_array_equal(windows.x_test, again.x_test)
    assert not np.array_equal(sample_ids(windows, windows.x_test), sample_ids(other, other.x_test))
    assert windows.ranges[0]["train"] is None


def test_random_windowing_interleaves_roles_in_time():
    # The leak the app shows: test windows sit between training windows of the same recording.
    windows = make_windows(ramp_recordings({"normal": 102_400, "IR007": 102_400}), window=1024, windowing="random")
    train_starts = sample_ids(windows, windows.x_train[windows.y_train == 0])[:, 0]
    test_starts = sample_ids(windows, windows.x_test[windows.y_test == 0])[:, 0]
    assert test_starts.min() < train_starts.max() and test_starts.max() > train_starts.min()


def test_a_class_too_short_names_itself_and_the_length_needed():
    recordings = ramp_recordings({"normal": 50_000, "IR014": 3_000})
    with pytest.raises(DataError, match=r"'IR014'.*3000 samples.*needs at least (\d+) samples") as error:
        make_windows(recordings, window=1024)
    needed = int(str(error.value).split("needs at least ")[1].split(" ")[0])
    # 2 gaps + a test block of one window at 10 %: about 2·1024 + 10 240, give or take rounding
    assert abs(needed - (2 * 1024 + 10_240)) <= 10
    long_enough = ramp_recordings({"normal": 50_000, "IR014": needed})
    assert make_windows(long_enough, window=1024).counts["test"]["IR014"] == 1
    with pytest.raises(DataError, match="IR014"):
        make_windows(ramp_recordings({"normal": 50_000, "IR014": needed - 1}), window=1024)


def test_random_windowing_too_short_is_a_data_error():
    with pytest.raises(DataError, match=r"'B021'.*random windowing"):
        make_windows(ramp_recordings({"normal": 50_000, "B021": 4 * 1024}), window=1024, windowing="random")


def test_fewer_than_two_classes_is_a_data_error():
    with pytest.raises(DataError, match="at least two classes"):
        make_windows(ramp_recordings({"normal": 50_000}))
    with pytest.raises(DataError, match="at least two classes"):
        make_windows([])


def test_mixed_sample_rates_and_bad_arguments_are_refused():
    recordings = ramp_recordings({"normal": 50_000, "IR007": 50_000})
    recordings[0].sample_rate = 48_000.0
    with pytest.raises(DataError, match="sample rate"):
        make_windows(recordings)
    recordings = ramp_recordings({"normal": 50_000, "IR007": 50_000})
    with pytest.raises(ValueError, match="windowing must be one of"):
        make_windows(recordings, windowing="shuffled")
    with pytest.raises(ValueError, match="shares must be three positive numbers"):
        make_windows(recordings, shares=(0.7, 0.3, 0.0))
    with pytest.raises(ValueError, match="window"):
        make_windows(recordings, window=1)
    with pytest.raises(ValueError, match="stride"):
        make_windows(recordings, stride=0)


def test_the_old_keywords_split_and_mode_cut_the_same_windows_as_shares_and_windowing():
    lengths = {"normal": 30_000, "IR007": 30_000}
    new = make_windows(ramp_recordings(lengths), window=512, shares=(0.5, 0.3, 0.2), windowing="random", seed=3)
    old = make_windows(ramp_recordings(lengths), window=512, split=(0.5, 0.3, 0.2), mode="random", seed=3)
    assert old.windowing == old.mode == "random"
    for role in ("train", "val", "test"):
        assert np.array_equal(getattr(old, f"x_{role}"), getattr(new, f"x_{role}"))
    assert old.counts == new.counts and old.counts != make_windows(ramp_recordings(lengths), window=512).counts
