"""core.explain.attention: stable softmax and its Jacobian, Var(q·k) = d_k, RoPE, ALiBi, complex embeddings, timing."""

import math

import numpy as np
import pytest
import scipy.special
import torch

# The classic explanation's numbers for softmax([a, a, 2a])[2] in float64 at a = 1, 10, 100.
from core.explain import attention, attention_cost, encodings, relative_positions

PUBLISHED_Y3 = (0.5761168847658291, 0.9999092083843412, 1.0)


# --- softmax ------------------------------------------------------------------------------------------


def test_three_score_example_matches_the_published_values():
    y3 = attention.three_score_example(attention.SATURATION_SEED_A)[:, 2]
    np.testing.assert_allclose(y3, PUBLISHED_Y3, rtol=0, atol=1e-12)


def test_three_score_example_is_the_closed_form():
    a = np.array([0.0, 0.5, 1.0, 3.0, 10.0])
    outputs = attention.three_score_example(a)
    np.testing.assert_allclose(outputs[:, 2], 1.0 / (1.0 + 2.0 * np.exp(-a)), rtol=1e-15)
    np.testing.assert_allclose(outputs[:, 0], outputs[:, 1], rtol=0, atol=0)
    np.testing.assert_allclose(outputs[0], [1 / 3, 1 / 3, 1 / 3], rtol=1e-15)


def test_softmax_does_not_overflow_at_a_1000():
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # overflow or 0/0 would raise here
        outputs = attention.three_score_example([1000.0])[0]
    assert outputs[2] == 1.0
    assert outputs[0] == 0.0  # e^(−1000) underflows to exactly 0, harmlessly
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp([1000.0, 1000.0, 2000.0]) / np.exp([1000.0, 1000.0, 2000.0]).sum()
    assert np.isnan(naive).any()  # the naive formula really would fail here


def test_softmax_agrees_with_scipy_and_ignores_a_constant_shift():
    scores = np.random.default_rng(1).normal(0, 5, (7, 9))
    np.testing.assert_allclose(attention.softmax(scores), scipy.special.softmax(scores, axis=-1), rtol=1e-14)
    np.testing.assert_allclose(attention.softmax(scores + 123.0), attention.softmax(scores), rtol=1e-12)
    np.testing.assert_allclose(attention.softmax(scores, temperature=2.5), attention.softmax(scores / 2.5), rtol=1e-15)


@pytest.mark.parametrize("scores", [[], [1.0, np.nan], [np.inf, 0.0]])
def test_softmax_rejects_empty_or_non_finite_scores(scores):
    with pytest.raises(ValueError):
        attention.softmax(scores)


@pytest.mark.parametrize("temperature", [0.0, -1.0, np.inf])
def test_softmax_rejects_bad_temperature(temperature):
    with pytest.raises(ValueError, match="temperature"):
        attention.softmax([1.0, 2.0], temperature=temperature)


# --- the Jacobian -------------------------------------------------------------------------------------


def test_softmax_jacobian_matches_torch_autograd():
    scores = np.random.default_rng(2).normal(0, 2, 6)
    expected = torch.autograd.functional.jacobian(
        lambda s: torch.softmax(s, dim=0), torch.tensor(scores, dtype=torch.float64)
    ).numpy()
    np.testing.assert_allclose(attention.softmax_jacobian(scores), expected, rtol=1e-12, atol=1e-15)


def test_softmax_jacobian_of_equal_scores_is_hand_computed():
    # y = 1/4 everywhere: diagonal y(1 − y) = 3/16, off-diagonal −y² = −1/16; rows sum to 0.
    jacobian = attention.softmax_jacobian(np.zeros(4))
    np.testing.assert_allclose(jacobian, np.full((4, 4), -1 / 16) + np.eye(4) * (4 / 16), rtol=1e-15)
    np.testing.assert_allclose(jacobian.sum(axis=1), 0.0, atol=1e-16)


def test_saturation_table_collapses_like_y3_times_one_minus_y3():
    a = np.array([1.0, 2.0, 5.0, 10.0, 20.0, 100.0])
    table = attention.saturation_table(a)
    # y1 = y2 = p = 1/(2 + e^a), y3 = q = e^a/(2 + e^a), so 1 − q = 2p and 1 − p = p + q exactly.
    # For a ≥ 1 the largest entry is the diagonal q(1 − q) = 2pq; the Frobenius norm collects the
    # diagonal p(p + q) twice, 2pq once, and the off-diagonal p² twice and pq four times.
    p = 1.0 / (2.0 + np.exp(a))
    q = 1.0 / (1.0 + 2.0 * np.exp(-a))
    np.testing.assert_allclose(table["jacobian_max_abs"], 2 * p * q, rtol=1e-12)
    frobenius = np.sqrt(2 * (p * (p + q)) ** 2 + (2 * p * q) ** 2 + 2 * p**4 + 4 * (p * q) ** 2)
    np.testing.assert_allclose(table["jacobian_norm"], frobenius, rtol=1e-12)
    assert np.all(np.diff(table["jacobian_norm"]) < 0)
    # a = 100: y3 rounds to 1.0, yet the gradient 2e^(−100) ≈ 7.4e-44 is still there, not cancelled to 0
    assert table["jacobian_max_abs"].iloc[-1] == pytest.approx(2 * math.exp(-100), rel=1e-12)


def test_softmax_row_gradient_matches_torch_autograd_with_temperature_and_d_k():
    scores = np.array([1.0, -2.0, 0.5, 3.0])
    d_k, temperature = 16, 0.7
    row = attention.softmax_row(scores, d_k=d_k, temperature=temperature)
    expected = torch.autograd.functional.jacobian(
        lambda s: torch.softmax(s / (temperature * math.sqrt(d_k)), dim=0), torch.tensor(scores, dtype=torch.float64)
    ).numpy()
    np.testing.assert_allclose(row.gradient, expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(row.logits, scores / (0.7 * 4.0), rtol=1e-15)
    assert row.max_weight == pytest.approx(row.probabilities.max())


def test_attention_entropy_of_uniform_and_one_hot():
    assert attention.attention_entropy(np.full(8, 1 / 8)) == pytest.approx(math.log(8), rel=1e-15)
    assert attention.attention_entropy(np.array([0.0, 1.0, 0.0])) == 0.0


# --- Var(q·k) = d_k -----------------------------------------------------------------------------------


def test_dot_product_variance_is_d_k_within_four_standard_errors():
    table = attention.dot_product_variance(2 ** np.arange(11), n_samples=4000, seed=0)
    assert table["d_k"].tolist() == [2**i for i in range(11)]
    tolerance = 4 * table["variance_standard_error"]
    assert (np.abs(table["variance_unscaled"] - table["d_k"]) < tolerance).all()
    assert (np.abs(table["variance_scaled"] - 1.0) < tolerance / table["d_k"]).all()
    np.testing.assert_allclose(table["variance_scaled"], table["variance_unscaled"] / table["d_k"], rtol=1e-15)


def test_stated_standard_error_matches_the_spread_of_the_estimate():
    # SE = √((2·d² + 6·d)/n): check it against 300 independent repeats at d = 4, n = 200.
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((2, 300, 200, 4))
    estimates = np.einsum("rsd,rsd->rs", q, k).var(axis=1, ddof=1)
    stated = attention.dot_product_variance([4], n_samples=200)["variance_standard_error"].iloc[0]
    assert stated == pytest.approx(math.sqrt((2 * 16 + 24) / 200), rel=1e-12)
    assert estimates.std(ddof=1) == pytest.approx(stated, rel=0.15)


def test_dot_product_variance_is_seeded():
    first = attention.dot_product_variance([8, 64], n_samples=500, seed=3)
    second = attention.dot_product_variance([8, 64], n_samples=500, seed=3)
    assert first.equals(second)


def test_attention_sharpness_collapses_without_scaling():
    table = attention.attention_sharpness([1, 16, 1024], n_keys=64, n_queries=100, seed=0)
    first, last = table.iloc[0], table.iloc[-1]
    assert first["entropy_scaled"] == first["entropy_unscaled"]  # √1 = 1: nothing to scale
    assert last["max_weight_unscaled"] > 0.8 and last["entropy_unscaled"] < 0.5
    assert last["max_weight_scaled"] < 0.2 and last["entropy_scaled"] > 3.0
    assert table["entropy_uniform"].iloc[0] == pytest.approx(math.log(64))


# --- RoPE ---------------------------------------------------------------------------------------------


def test_rope_score_unchanged_when_both_positions_shift():
    rng = np.random.default_rng(7)
    q, k = rng.standard_normal((2, 64))
    for m, n, shift in [(0, 5, 3), (10, 2, 100), (37, 37, 1000), (3, 900, 12345)]:
        positions = np.array([m, n, m + shift, n + shift])
        rotated_q = relative_positions.apply_rope(np.tile(q, (4, 1)), positions)
        rotated_k = relative_positions.apply_rope(np.tile(k, (4, 1)), positions)
        assert rotated_q[0] @ rotated_k[1] == pytest.approx(rotated_q[2] @ rotated_k[3], abs=1e-9)
    assert relative_positions.rope_shift_error(q, k, n_positions=50, shift=17) < 1e-9


def test_apply_rope_is_multiplication_by_a_unit_complex_number():
    # RoFormer's view: pair (x_2i, x_2i+1) is the complex number x_2i + i·x_2i+1, turned by e^(i·pos·ω_i).
    rng = np.random.default_rng(8)
    x = rng.standard_normal((5, 16))
    positions = np.array([0, 1, 2, 50, 999])
    rotated = relative_positions.apply_rope(x, positions, base=500.0)
    as_complex = (x[:, 0::2] + 1j * x[:, 1::2]) * np.exp(
        1j * positions[:, None] * encodings.angular_frequencies(16, 500.0)
    )
    np.testing.assert_allclose(rotated[:, 0::2], as_complex.real, atol=1e-12)
    np.testing.assert_allclose(rotated[:, 1::2], as_complex.imag, atol=1e-12)
    np.testing.assert_allclose(rotated[0], x[0], rtol=0, atol=0)  # position 0 is the identity
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=1), np.linalg.norm(x, axis=1), rtol=1e-13)


def test_rope_scores_are_toeplitz_and_equal_the_closed_form():
    q, k = relative_positions.random_query_key(32, seed=4)
    scores = relative_positions.rope_scores(q, k, 40)
    offsets = np.arange(-39, 40)
    closed = relative_positions.rope_score_closed_form(q, k, offsets)
    for offset, value in zip(offsets, closed):
        np.testing.assert_allclose(np.diagonal(scores, offset=offset), value, atol=1e-12)
    assert scores[0, 0] == pytest.approx(q @ k, rel=1e-13)


def test_rope_rejects_odd_width_and_mismatched_positions():
    with pytest.raises(ValueError, match="even"):
        relative_positions.apply_rope(np.ones((3, 5)), np.arange(3))
    with pytest.raises(ValueError, match="positions"):
        relative_positions.apply_rope(np.ones((3, 4)), np.arange(4))


# --- ALiBi and complex embeddings ---------------------------------------------------------------------


def test_alibi_slopes_are_the_papers_geometric_sequence():
    np.testing.assert_allclose(relative_positions.alibi_slopes(8), [2.0**-h for h in range(1, 9)], rtol=1e-15)
    np.testing.assert_allclose(relative_positions.alibi_slopes(16)[:2], [2**-0.5, 2**-1.0], rtol=1e-15)
    # 12 heads: the 8-head slopes, then every other slope of the 16-head sequence.
    np.testing.assert_allclose(
        relative_positions.alibi_slopes(12),
        [*(2.0**-h for h in range(1, 9)), 2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5],
        rtol=1e-15,
    )


def test_alibi_bias_is_hand_computed():
    np.testing.assert_array_equal(
        relative_positions.alibi_bias(3, 0.5), [[0.0, -0.5, -1.0], [-0.5, 0.0, -0.5], [-1.0, -0.5, 0.0]]
    )
    with pytest.raises(ValueError, match="slope"):
        relative_positions.alibi_bias(3, 0.0)


def test_complex_order_embedding_turns_the_phase_with_position():
    amplitude, frequency, phase = np.array([2.0, 0.5]), np.array([np.pi / 2, 1.0]), np.array([0.0, np.pi])
    embedding = relative_positions.complex_order_embedding(np.arange(3), amplitude, frequency, phase)
    # dimension 0: 2·e^(i·π/2·pos) = 2, 2i, −2
    np.testing.assert_allclose(embedding[:, 0], [2.0, 2.0j, -2.0], atol=1e-15)
    np.testing.assert_allclose(np.abs(embedding), np.tile(amplitude, (3, 1)), rtol=1e-15)
    # ⟨f(t), f(t+k)⟩ = Σ r²·e^(−i·k·ω): the same for every t.
    amplitude, frequency, phase = relative_positions.random_complex_word(8, seed=1)
    word = relative_positions.complex_order_embedding(np.arange(60), amplitude, frequency, phase)
    products = [np.vdot(word[t + 7], word[t]) for t in range(50)]
    np.testing.assert_allclose(products, (amplitude**2 * np.exp(-7j * frequency)).sum(), atol=1e-12)


# --- the price of attention ---------------------------------------------------------------------------


def test_time_attention_reports_times_and_tensor_sizes():
    threads = torch.get_num_threads()
    table = attention_cost.time_attention([16, 32], d_head=8, repeats=2)
    assert torch.get_num_threads() == threads  # restored
    assert table["n"].tolist() == [16, 32]
    assert (table["explicit_seconds"] > 0).all() and (table["fused_seconds"] > 0).all()
    n = table["n"].to_numpy()
    # scores and weights are n×n float32, the output n×d float32
    np.testing.assert_array_equal(table["explicit_bytes"], 2 * n * n * 4 + n * 8 * 4)
    np.testing.assert_array_equal(table["fused_bytes"], n * 8 * 4)
    np.testing.assert_array_equal(table["score_matrix_bytes"], n * n * 4)
    assert set(table["memory_source"]) == {"tensor sizes (CPU)"}


def test_time_attention_rejects_bad_arguments():
    with pytest.raises(ValueError, match="budget"):
        attention_cost.time_attention([16], budget_seconds=-1.0)
    with pytest.raises(ValueError, match="sequence length"):
        attention_cost.time_attention([0])


def test_attention_memory_of_bert_base_at_512():
    # 12 layers × 12 heads × batch 32 × 512² × 4 bytes = 4.5 GiB exactly.
    assert attention_cost.attention_memory_bytes(512, n_heads=12, n_layers=12, batch=32) == 4.5 * 2**30


def test_a_log_axis_is_labelled_every_1_2_5_10_20_50_decades_so_that_at_most_8_ticks_show():
    from core.explain.figures.attention import decade_step

    assert decade_step(np.array([1.0, 1e-8])) == 1
    assert decade_step(np.array([1.0, 1e-9])) == 2
    assert decade_step(np.array([0.25, 1e-300, 0.0])) == 50  # 299.4 decades / 50 = 6 ticks; zeros are not drawn
    assert decade_step(np.array([1e308, 5e-324])) == 100  # float64's whole range
