"""core.explain.encodings against closed forms and hand-computed values."""

import math

import numpy as np
import pytest

from core.explain import encodings
from core.explain.encodings import shift_matrix, sinusoidal, wavelengths


def test_sinusoidal_matches_closed_form_at_hand_picked_points():
    pe = sinusoidal(10, 512)
    assert pe.shape == (10, 512) and pe.dtype == np.float64
    # First pair: ω_0 = 1, so PE[3, 0] = sin 3 and PE[3, 1] = cos 3.
    assert pe[3, 0] == pytest.approx(math.sin(3.0), abs=1e-15)
    assert pe[3, 1] == pytest.approx(math.cos(3.0), abs=1e-15)
    # Last pair i = 255: angle = 3 / 10000^(510/512).
    angle = 3.0 / 10000 ** (510 / 512)
    assert pe[3, 510] == pytest.approx(math.sin(angle), abs=1e-15)
    assert pe[3, 511] == pytest.approx(math.cos(angle), abs=1e-15)
    # A middle pair, i = 64: angle = 3 / 10000^(128/512) = 3 / 10.
    assert pe[3, 128] == pytest.approx(math.sin(0.3), abs=1e-15)
    # Position 0 is sin 0 = 0, cos 0 = 1 in every pair.
    assert np.array_equal(pe[0, 0::2], np.zeros(256)) and np.array_equal(pe[0, 1::2], np.ones(256))


def test_sinusoidal_is_bounded_and_rows_are_distinct():
    pe = sinusoidal(2048, 64)
    assert pe.min() >= -1.0 and pe.max() <= 1.0
    assert len(np.unique(np.round(pe, 12), axis=0)) == 2048


def test_concatenated_layout_is_a_column_permutation_of_interleaved():
    for d_model in (8, 9, 64):
        interleaved = sinusoidal(50, d_model, layout="interleaved")
        concatenated = sinusoidal(50, d_model, layout="concatenated")
        assert np.array_equal(concatenated, interleaved[:, encodings.concatenated_order(d_model)])
    # And it really is another order, not the same matrix.
    assert not np.array_equal(sinusoidal(5, 8, layout="concatenated"), sinusoidal(5, 8))


def test_odd_d_model_ends_with_a_sine():
    pe = sinusoidal(7, 5, base=100.0)
    assert pe.shape == (7, 5)
    angle = 6 / 100.0 ** (4 / 5)  # pair i = 2 of d = 5
    assert pe[6, 4] == pytest.approx(math.sin(angle), abs=1e-15)


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(n_positions=0, d_model=4), "n_positions"),
        (dict(n_positions=-3, d_model=4), "n_positions"),
        (dict(n_positions=encodings.MAX_POSITIONS + 1, d_model=4), "n_positions"),
        (dict(n_positions=2.5, d_model=4), "n_positions"),
        (dict(n_positions=4, d_model=0), "d_model"),
        (dict(n_positions=4, d_model=encodings.MAX_D_MODEL + 1), "d_model"),
        (dict(n_positions=4, d_model=4, base=1.0), "base"),
        (dict(n_positions=4, d_model=4, base=0.5), "base"),
        (dict(n_positions=4, d_model=4, base=float("nan")), "base"),
        (dict(n_positions=4, d_model=4, base=1e12), "base"),
        (dict(n_positions=4, d_model=4, base="ten"), "base"),
        (dict(n_positions=4, d_model=4, layout="zigzag"), "layout"),
    ],
)
def test_bad_arguments_raise_value_error_naming_the_argument(kwargs, word):
    with pytest.raises(ValueError, match=word):
        sinusoidal(**kwargs)


def test_wavelengths_start_at_two_pi_with_constant_ratio():
    lengths = wavelengths(512)
    assert lengths.size == 256
    assert lengths[0] == pytest.approx(2 * math.pi, rel=1e-15)
    assert np.allclose(lengths[1:] / lengths[:-1], 10000 ** (2 / 512), rtol=1e-12)
    # The longest is 2π·base^(510/512) = 0.965·base·2π, not base·2π.
    assert lengths[-1] / (10000 * 2 * math.pi) == pytest.approx(10000 ** (-2 / 512), rel=1e-12)
    assert round(lengths[-1] / (10000 * 2 * math.pi), 3) == 0.965


def test_wavelengths_odd_d_model_has_ceil_half_pairs():
    lengths = wavelengths(7, base=100.0)
    assert lengths.size == 4
    assert lengths[-1] == pytest.approx(2 * math.pi * 100 ** (6 / 7))


def test_wavelength_is_the_period_of_the_columns():
    d_model, base = 16, 50.0
    lengths = wavelengths(d_model, base)
    pe = sinusoidal(200, d_model, base)
    pair = 2
    period = lengths[pair]
    t = np.arange(200)
    assert np.allclose(pe[:, 2 * pair], np.sin(2 * np.pi * t / period), atol=1e-12)


def test_shift_matrix_maps_pe_t_to_pe_t_plus_k():
    pe = sinusoidal(300, 64)
    for k in (1, 7, 50):
        m = shift_matrix(k, 64)
        assert np.abs(pe[: 300 - k] @ m.T - pe[k:]).max() < 1e-9


def test_shift_matrix_rejects_odd_d_model():
    with pytest.raises(ValueError, match="even"):
        shift_matrix(1, 5)


def test_scoreboard_verdicts():
    board = encodings.scoreboard().set_index("scheme")
    assert not board.loc["pos/(T-1)", "offset_consistent"]
    assert board.loc["pos/(T-1)", "offset_distance_max"] == pytest.approx(1 / 63)
    assert board.loc["pos/(T-1)", "offset_distance_min"] == pytest.approx(1 / 4095)
    assert not board.loc["integer", "bounded"]
    assert board.loc["integer", "range_long"] == 4095
    assert board.loc["binary", "unique"] and board.loc["sinusoidal", "unique"]
    assert not board.loc["binary", "offset_consistent"]  # 7 -> 8 flips four bits, 8 -> 9 one
    assert board.loc["binary", "offset_distance_max"] == pytest.approx(math.sqrt(6))  # 31 -> 32 flips six bits
    sinusoidal_row = board.loc["sinusoidal"]
    assert sinusoidal_row["unique"] and sinusoidal_row["offset_consistent"] and sinusoidal_row["bounded"]


def test_unique_row_count_sees_repeats_and_float_noise():
    assert encodings.count_unique_rows(np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])) == 2
    assert encodings.count_unique_rows(np.array([[0.5], [0.5 + 1e-15]])) == 1
    # A binary code too narrow to count the positions is refused rather than silently wrapping.
    with pytest.raises(ValueError, match="n_bits"):
        encodings.binary_positions(300, n_bits=8)


def test_word_plus_position_norms():
    norms = encodings.word_plus_position(d_model=128, position=100)
    assert norms["pe_norm"] == pytest.approx(8.0)  # √(d/2): every pair contributes sin² + cos² = 1
    assert norms["integer_norm"] == pytest.approx(100 * math.sqrt(128))
    assert norms["integer_energy_share"] > 0.99 > norms["pe_energy_share"]


def test_binary_counter_waves_agree_in_sign_with_the_bits():
    positions, bits, fine, waves = encodings.binary_counter_waves(16, 4)
    at_integers = waves[np.searchsorted(fine, positions)]
    assert np.array_equal(at_integers > 0, bits > 0.5)
    assert bits[5].tolist() == [1, 0, 1, 0]  # 5 = 0101, least significant bit first


def test_overview_strides_fit_the_budget():
    assert encodings.overview_strides(100, 100, 100_000) == (1, 1)
    rows, cols = encodings.overview_strides(4096, 1024, 100_000)
    assert math.ceil(4096 / rows) * math.ceil(1024 / cols) <= 100_000
    assert rows > 1 and cols > 1
