"""Beyond the trained length: the scaled frequencies by hand, the scores against their closed forms, and the
share of frequency pairs pushed past what training showed."""

import numpy as np
import pytest

from core.explain.extrapolation import rope_score, scaled_frequencies, sinusoidal_score, unseen_share
from core.explain.relative_positions import random_query_key, rope_score_closed_form


def test_the_three_methods_frequencies_by_hand():
    # d = 4, base 10^4: omega = [1, 10^-2]; s = 4
    assert scaled_frequencies(4, 1e4, "plain extrapolation", 4) == pytest.approx([1.0, 0.01])
    assert scaled_frequencies(4, 1e4, "position interpolation", 4) == pytest.approx([0.25, 0.0025])
    # NTK: base 10^4 * 4^(4/2) = 160,000, so omega_1 = 160000^(-1/2) = 0.0025 and omega_0 stays 1
    assert scaled_frequencies(4, 1e4, "NTK-aware scaling", 4) == pytest.approx([1.0, 0.0025])
    with pytest.raises(ValueError, match="at least 1"):
        scaled_frequencies(4, 1e4, "plain extrapolation", 0.5)


def test_scores_against_their_closed_forms():
    q, k = random_query_key(16, seed=3)
    offsets = np.arange(300)
    assert rope_score(q, k, offsets, 1e4, "plain extrapolation", 4) == pytest.approx(
        rope_score_closed_form(q, k, offsets)
    )
    # interpolation by s is the plain score at offset / s
    assert rope_score(q, k, offsets, 1e4, "position interpolation", 4) == pytest.approx(
        rope_score_closed_form(q, k, offsets / 4)
    )
    assert sinusoidal_score(np.array([0]), 16, 1e4, "NTK-aware scaling", 8) == pytest.approx([8.0])  # d/2 cosines of 0
    d, k_ = 6, 5.0
    omega = 1e4 ** (-np.arange(3) * 2 / d)
    assert sinusoidal_score(np.array([k_]), d, 1e4, "plain extrapolation", 1)[0] == pytest.approx(
        np.cos(k_ * omega).sum()
    )


def test_interpolation_never_leaves_the_trained_angles_and_plain_extrapolation_does():
    offsets = np.arange(513)
    assert unseen_share(offsets, 64, 1e4, "position interpolation", 4, 128).max() == 0.0
    plain = unseen_share(offsets, 64, 1e4, "plain extrapolation", 4, 128)
    assert plain[128] == 0.0 and plain[-1] > 0.5
