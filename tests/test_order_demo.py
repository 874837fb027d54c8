"""The home page's demo: self-attention without positions is permutation-equivariant to 1e-12; with the
sinusoidal encoding added, a shuffle changes the outputs."""

import numpy as np
import pytest

from core.explain.order_demo import random_order, self_attention, shuffle_demo, token_vectors


def test_shuffled_outputs_are_the_permuted_outputs_without_a_position_signal():
    words = "the quick brown fox jumps over the lazy dog".split()
    for seed in range(5):
        order = random_order(len(words), seed)
        demo = shuffle_demo(words, order, with_position=False)
        assert demo.largest_difference < 1e-12
        x = token_vectors(words)
        np.testing.assert_allclose(self_attention(x[order]), self_attention(x)[order], atol=1e-12)


def test_a_position_signal_makes_the_shuffle_show():
    words = "dog bites man".split()
    demo = shuffle_demo(words, [2, 1, 0], with_position=True)
    assert demo.largest_difference > 0.05
    assert shuffle_demo(words, [0, 1, 2], with_position=True).largest_difference == 0.0  # no shuffle, no change


def test_the_demo_refuses_what_it_cannot_show():
    with pytest.raises(ValueError, match="2 to 12 tokens"):
        shuffle_demo(["alone"], [0], False)
    with pytest.raises(ValueError, match="permutation"):
        shuffle_demo(["a", "b"], [0, 0], False)
    assert token_vectors(["same", "same"])[0] == pytest.approx(token_vectors(["same", "same"])[1])
