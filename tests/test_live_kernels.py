"""The browser computes what core/ computes: ui/live/kernels.js, run in Chromium, against core/explain on a grid of
inputs, to 1e-9 (integers exactly). Every number the explainer pages draw while a control moves comes from these
kernels, so a kernel that drifts from core/ fails here before a visitor sees it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.explain import (
    attention,
    encodings,
    extrapolation,
    order_demo,
    portable_random,
    relative_positions,
    similarity,
)
from tests import live_server
from ui.live import _HERE as LIVE_DIR

pytestmark = pytest.mark.slow
TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def js():
    """Evaluate a JavaScript expression over `kernels` in Chromium and return its JSON value."""
    pages = live_server.blank_page()
    page = next(pages)
    page.set_content("<html><body></body></html>")
    page.add_script_tag(content=(LIVE_DIR / "kernels.js").read_text(encoding="utf-8") + "\nwindow.K = kernels;")
    yield lambda expression: page.evaluate(f"(() => {{ const K = window.K; return {expression}; }})()")
    pages.close()


def close(browser, core, tolerance=TOLERANCE):
    np.testing.assert_allclose(np.asarray(browser, dtype=float), np.asarray(core, dtype=float), rtol=0, atol=tolerance)


@pytest.mark.parametrize(("seed", "stream"), [(0, 0), (7, 1), (2**32 - 1, 11), (123456789, 5)])
def test_the_counter_based_random_numbers_are_the_same_integers_and_floats(js, seed, stream):
    indices = list(range(40)) + [2**20 + 3, 2**28 - 1]
    assert (
        js(f"{indices}.map(i => K.hashed({seed}, {stream}, i))")
        == portable_random.hashed(seed, stream, indices).tolist()
    )
    close(js(f"{indices}.map(i => K.uniform({seed}, {stream}, i))"), portable_random.uniforms(seed, stream, indices), 0)
    close(js(f"{indices}.map(i => K.normal({seed}, {stream}, i))"), portable_random.normals(seed, stream, indices))
    close(
        js(f"{indices}.map(i => K.truncatedNormal({seed}, {stream}, i))"),
        portable_random.truncated_normals(seed, stream, indices),
    )


def test_permutations_and_word_seeds_match(js):
    for n, seed in [(2, 0), (3, 1), (12, 5), (12, 999), (7, 42)]:
        assert js(f"K.permutation({n}, {seed})") == portable_random.permutation(n, seed).tolist()
    words = ["dog", "bites", "man", "", "Ünïcode", "日本語", "<b>x</b>"]
    assert js(f"{json.dumps(words)}.map(K.textSeed)") == [portable_random.text_seed(w) for w in words]


@pytest.mark.parametrize(
    ("n", "d", "base", "layout"),
    [
        (128, 128, 10_000, "interleaved"),
        (37, 16, 100, "concatenated"),
        (4096, 6, 10, "interleaved"),
        (9, 7, 1e6, "concatenated"),
    ],
)
def test_the_sinusoidal_matrix_and_its_wavelengths_match(js, n, d, base, layout):
    rows = sorted({0, 1, n // 3, n - 1})
    matrix = js(f"K.sinusoidal({rows}, K.range(0, {d}), {d}, {base}, '{layout}')")
    close(matrix, encodings.sinusoidal(n, d, base, layout)[rows])
    close(js(f"K.wavelengths({d}, {base})"), encodings.wavelengths(d, base))
    close(js(f"K.dimensionWavelengths({d}, {base}, 'interleaved')"), encodings.dimension_wavelengths(d, base))


def test_overview_strides_and_curve_starts_are_the_same_integers(js):
    for rows, cols in [(128, 128), (4096, 1024), (4096, 128), (1536, 768), (300, 33), (3072, 1024)]:
        assert js(f"K.overviewStrides({rows}, {cols}, 100000)") == list(encodings.overview_strides(rows, cols, 100_000))
    for n in [8, 9, 12, 128, 300, 600, 1023, 1024]:
        assert js(f"K.curveStarts({n})") == similarity.curve_starts(n).tolist()
        assert js(f"K.heatmapStride({n}, 256)") == similarity.heatmap_stride(n, 256)


@pytest.mark.parametrize(("d", "base"), [(128, 10_000), (16, 100), (1024, 1e6), (2, 10)])
def test_similarity_curves_closed_form_cosine_and_rotation_match(js, d, base):
    starts, offsets = [0, 42, 85, 127], list(range(65))
    close(
        js(f"K.dotProductCurves({starts}, {offsets}, {d}, {base})"),
        similarity.dot_product_vs_offset(starts, offsets, d, base),
    )
    close(js(f"K.closedFormDotProduct({offsets}, {d}, {base})"), similarity.closed_form_dot_product(offsets, d, base))
    positions = [0, 3, 17, 100]
    close(
        js(f"K.cosineSimilarity(K.sinusoidal({positions}, K.range(0, {d}), {d}, {base}))"),
        similarity.cosine_similarity_matrix(encodings.sinusoidal(101, d, base)[positions]),
    )
    check = similarity.shift_check(1000, 24, d, base)
    browser = js(f"K.shiftCheck(1000, 24, {d}, {base})")
    for key in ("pe_start", "shifted", "pe_target"):
        close(browser[key], check[key])


def test_the_learned_table_and_the_word_norms_match(js):
    rows = [0, 1, 255, 4095]
    close(js(f"K.learnedTable({rows}, 48)"), encodings.learned_table(4096, 48)[rows])
    for d, position in [(128, 10), (6, 0), (1024, 4095)]:
        browser, core = js(f"K.wordPlusPosition({d}, {position}, 10000)"), encodings.word_plus_position(d, position)
        close([browser[k] for k in sorted(core)], [core[k] for k in sorted(core)])


def test_softmax_saturation_and_a_row_of_scores_match(js):
    a_values = [0.01, 1.0, 10.0, 100.0, 1000.0]
    table = attention.saturation_table(a_values)
    browser = js(f"{a_values}.map(a => K.saturationRow(a))")
    for key in ("y1", "y2", "y3", "jacobian_max_abs", "jacobian_norm"):
        close([row[key] for row in browser], table[key])
    for scores, d_k, temperature in [([1, 2, 3, 4], 1, 1.0), ([3, 1], 16, 0.5), ([-2.5, 0, 7, 7, 1e3], 4096, 0.05)]:
        row = attention.softmax_row(scores, d_k, temperature)
        browser = js(f"K.softmaxRow({scores}, {d_k}, {temperature})")
        close(browser["probabilities"], row.probabilities)
        close(browser["gradient"], row.gradient)
        close([browser["entropy"], browser["max_weight"]], [row.entropy, row.max_weight])


@pytest.mark.parametrize(("d", "base"), [(128, 10_000), (8, 100)])
def test_rope_complex_words_and_the_scaled_frequencies_match(js, d, base):
    q, k = relative_positions.random_query_key(d)
    close(js(f"K.randomQueryKey({d}, 0)"), [q, k])
    close(
        js(f"[0, 5, 300].map(p => K.applyRope(K.randomQueryKey({d}, 0)[0], p, {base}))"),
        relative_positions.apply_rope(np.broadcast_to(q, (3, d)), np.array([0, 5, 300]), base),
    )
    offsets = list(range(0, 600, 7))
    close(
        js(f"K.ropeScoreClosedForm(...K.randomQueryKey({d}, 0), {offsets}, K.angularFrequencies({d}, {base}))"),
        relative_positions.rope_score_closed_form(q, k, offsets, base),
    )
    word = js(f"K.randomComplexWord({d // 2}, {base}, 0)")
    core_word = relative_positions.random_complex_word(d // 2, base, 0)
    close([word["amplitude"], word["frequency"], word["phase"]], core_word)
    for method in extrapolation.METHODS:
        close(
            js(f"K.scaledFrequencies({d}, {base}, '{method}', 4)"), extrapolation.scaled_frequencies(d, base, method, 4)
        )
        close(
            js(f"K.sinusoidalScore({offsets}, {d}, {base}, '{method}', 4)"),
            extrapolation.sinusoidal_score(np.array(offsets), d, base, method, 4),
        )


@pytest.mark.parametrize(
    ("words", "seed", "with_position"),
    [
        ("dog bites man", 1, False),
        ("dog bites man", 1, True),
        ("the cat sat on the mat today", 5, True),
        ("a b", 0, False),
    ],
)
def test_the_home_demo_matches_core(js, words, seed, with_position):
    tokens = words.split()
    order = order_demo.visible_shuffle(order_demo.random_order(len(tokens), seed))
    demo = order_demo.shuffle_demo(tokens, order, with_position)
    browser = js(f"K.shuffleDemo({json.dumps(tokens)}, {order.tolist()}, {json.dumps(with_position)})")
    close(browser["outputs"], demo.outputs)
    close(browser["shuffled_back"], demo.shuffled_back)
    close(browser["largest_difference"], demo.largest_difference)
    assert js(f"K.randomOrder({len(tokens)}, {seed})") == order_demo.random_order(len(tokens), seed).tolist()


def test_the_binary_counter_matches(js):
    positions, bits, fine, waves = encodings.binary_counter_waves(16, 4)
    browser = js("K.binaryCounterWaves(16, 4)")
    assert browser["bits"] == bits.astype(int).tolist()
    close(browser["fine"], fine)
    close(browser["waves"], waves)


def test_a_kernel_that_drifted_would_fail_here(js):
    """The comparison can fail: a sine with its frequency off by one part in a million is caught."""
    drifted = js("K.sinusoidal([4000], [0, 2, 4], 128, 10000 * (1 + 1e-6))")
    with pytest.raises(AssertionError):
        close(drifted, encodings.sinusoidal(4001, 128)[[4000]][:, [0, 2, 4]])
