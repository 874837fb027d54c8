"""core.explain.similarity and core.explain.encodings.shift_matrix: the dot product depends on the offset alone."""

import numpy as np
import pytest

# --- shift_matrix (core.explain.encodings) --------------------------------------------------------------------
from core.explain import encodings, relative_positions, similarity


@pytest.mark.parametrize("d_model, base", [(2, 10000.0), (16, 100.0), (128, 10000.0), (512, 1e6)])
def test_shift_matrix_maps_every_position_to_its_shifted_one(d_model, base):
    starts = np.arange(0, 300)
    offsets = np.array([0, 1, 2, 5, 17, 100, 999])
    assert similarity.max_shift_error(starts, offsets, d_model, base) < 1e-9


def test_shift_matrix_is_orthogonal_and_composes():
    d_model = 64
    for j, k in [(1, 2), (5, 11), (100, 250), (3, 0)]:
        m_j, m_k = encodings.shift_matrix(j, d_model), encodings.shift_matrix(k, d_model)
        np.testing.assert_allclose(m_k.T @ m_k, np.eye(d_model), atol=1e-14)
        np.testing.assert_allclose(m_j @ m_k, encodings.shift_matrix(j + k, d_model), atol=1e-12)
    np.testing.assert_array_equal(encodings.shift_matrix(0, d_model), np.eye(d_model))


def test_shift_matrix_of_d2_is_the_hand_written_rotation():
    # d = 2: ω_0 = 1, so M_k = [[cos k, sin k], [−sin k, cos k]] maps (sin t, cos t) to (sin(t+k), cos(t+k)).
    np.testing.assert_allclose(
        encodings.shift_matrix(0.5, 2), [[np.cos(0.5), np.sin(0.5)], [-np.sin(0.5), np.cos(0.5)]], rtol=1e-15
    )


def test_shift_matrix_rejects_odd_d_model():
    with pytest.raises(ValueError, match="even"):
        encodings.shift_matrix(3, 33)


def test_shift_check_reports_the_true_target_and_rounding_error():
    check = similarity.shift_check(10, 5, 128)
    np.testing.assert_array_equal(check["pe_target"], encodings.sinusoidal(16, 128)[15])
    np.testing.assert_array_equal(check["pe_start"], encodings.sinusoidal(16, 128)[10])
    assert check["max_error"] == np.abs(check["shifted"] - check["pe_target"]).max()
    assert check["max_error"] < 1e-12
    with pytest.raises(ValueError, match="non-negative"):
        similarity.shift_check(-1, 5, 128)


# --- dot product against offset -----------------------------------------------------------------------


@pytest.mark.parametrize("d_model, base", [(4, 10000.0), (64, 10000.0), (128, 100.0), (512, 10000.0)])
def test_dot_product_equals_closed_form_and_ignores_the_start(d_model, base):
    starts, offsets = np.array([0, 1, 7, 100, 999]), np.arange(200)
    curves = similarity.dot_product_vs_offset(starts, offsets, d_model, base)
    closed = similarity.closed_form_dot_product(offsets, d_model, base)
    assert curves.shape == (5, 200)
    assert np.abs(curves - closed[None, :]).max() < 1e-9
    assert similarity.spread_across_starts(curves) < 1e-9
    assert closed[0] == pytest.approx(d_model / 2, rel=1e-15)  # ‖PE(t)‖² = d/2


def test_dot_product_of_d2_is_cos_k():
    offsets = np.arange(10)
    np.testing.assert_allclose(similarity.closed_form_dot_product(offsets, 2), np.cos(offsets), rtol=1e-15)
    np.testing.assert_allclose(similarity.dot_product_vs_offset([3], offsets, 2)[0], np.cos(offsets), atol=1e-14)


def test_odd_d_model_depends_on_the_start_and_has_no_closed_form():
    # d = 3: one full pair (ω_0 = 1) plus an unpaired sine of ω_1 = base^(−2/3), adding sin(tω_1)·sin((t+k)ω_1)
    base = 10.0
    omega = base ** (-2 / 3)
    curves = similarity.dot_product_vs_offset([0, 5], [3], 3, base)
    np.testing.assert_allclose(
        curves[:, 0], np.cos(3.0) + np.sin([0.0, 5 * omega]) * np.sin([3 * omega, 8 * omega]), rtol=1e-14
    )
    assert abs(curves[0, 0] - curves[1, 0]) > 0.5
    with pytest.raises(ValueError, match="even"):
        similarity.closed_form_dot_product([1], 5)


def test_cosine_similarity_of_the_sinusoidal_matrix_is_the_dot_over_d_half():
    matrix = encodings.sinusoidal(20, 32)
    cosine = similarity.cosine_similarity_matrix(matrix)
    np.testing.assert_allclose(cosine, matrix @ matrix.T / 16, atol=1e-14)
    np.testing.assert_allclose(np.diag(cosine), 1.0, rtol=1e-15)
    with pytest.raises(ValueError, match="zero"):
        similarity.cosine_similarity_matrix(np.array([[1.0, 0.0], [0.0, 0.0]]))


def test_cosine_similarity_of_complex_rows_uses_the_real_part_of_the_hermitian_product():
    rows = np.array([[1.0 + 0j], [1j], [-1.0 + 0j]])  # angles 0, 90°, 180° in the complex plane
    np.testing.assert_allclose(
        similarity.cosine_similarity_matrix(rows), [[1, 0, -1], [0, 1, 0], [-1, 0, 1]], atol=1e-15
    )


def test_heatmap_stride():
    assert similarity.heatmap_stride(100, 256) == 1
    assert similarity.heatmap_stride(1024, 256) == 4
    assert similarity.heatmap_stride(1000, 256) == 4  # 250 positions kept
    assert similarity.heatmap_stride(257, 256) == 2


# --- the same picture for every scheme -----------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["sinusoidal", "RoPE", "ALiBi", "complex (Wang et al.)"])
def test_relative_schemes_depend_on_the_offset_alone(scheme):
    starts, offsets = np.array([0, 13, 50]), np.arange(30)
    picture = similarity.similarity_picture(scheme, 60, 32, starts, offsets)
    assert picture.curves.shape == (3, 30) and picture.matrix.shape == (60, 60)
    assert similarity.spread_across_starts(picture.curves) < 1e-9
    assert np.abs(picture.curves - picture.closed_form[None, :]).max() < 1e-9
    # a relative scheme's matrix is Toeplitz: each diagonal holds one value
    for diagonal in range(-59, 60, 7):
        values = np.diagonal(picture.matrix, offset=diagonal)
        assert np.ptp(values) < 1e-9


def test_learned_table_has_no_structure_yet():
    picture = similarity.similarity_picture("learned (init)", 60, 32, [0, 13, 50], np.arange(30))
    assert picture.closed_form is None
    assert similarity.spread_across_starts(picture.curves) > 1e-3
    assert np.ptp(np.diagonal(picture.matrix, offset=1)) > 0.1


def test_alibi_picture_is_the_linear_bias_of_head_one():
    picture = similarity.similarity_picture("ALiBi", 5, 8, [0, 2], np.arange(4))
    np.testing.assert_array_equal(picture.curves, [[0, -0.5, -1.0, -1.5]] * 2)
    np.testing.assert_array_equal(picture.matrix, relative_positions.alibi_bias(5, 0.5))


def test_rope_picture_uses_the_same_query_and_key_as_the_page_metric():
    q, k = relative_positions.random_query_key(16)
    picture = similarity.similarity_picture("RoPE", 10, 16, [0], np.arange(5))
    np.testing.assert_allclose(picture.matrix, relative_positions.rope_scores(q, k, 10), atol=1e-12)


def test_similarity_picture_strides_large_matrices():
    picture = similarity.similarity_picture("sinusoidal", 1000, 16, [0], [0, 1], max_side=256)
    np.testing.assert_array_equal(picture.positions, np.arange(0, 1000, 4))
    assert picture.matrix.shape == (250, 250)


def test_similarity_picture_rejects_unknown_scheme_and_bad_offsets():
    with pytest.raises(ValueError, match="scheme"):
        similarity.similarity_picture("absolute", 10, 8, [0], [1])
    with pytest.raises(ValueError, match="offsets"):
        similarity.similarity_picture("sinusoidal", 10, 8, [0], [-1])
