"""core.explain.portable_random: the counter-based generator the browser replays (tests/test_live_kernels.py checks
the replay). Here: the integer hash against a plain-Python rewrite of its published steps, the distributions, and
the property the live pages rely on, that a number depends on its index alone."""

import zlib

import numpy as np
import pytest

from core.explain import portable_random as random


def lowbias32(x: int) -> int:
    """Chris Wellons' lowbias32, step by step in Python integers (no numpy, no wrap-around help)."""
    x ^= x >> 16
    x = (x * 0x7FEB352D) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x846CA68B) & 0xFFFFFFFF
    return x ^ (x >> 16)


def test_the_hash_is_lowbias32_keyed_by_seed_then_stream_then_index():
    for seed, stream, index in [(0, 0, 0), (7, 1, 3), (2**32 - 1, 11, 2**28 - 1)]:
        key = lowbias32(seed ^ 0x9E3779B9)
        key = lowbias32(stream ^ key ^ 0x85EBCA6B)
        assert random.hashed(seed, stream, [index])[0] == lowbias32(lowbias32(index ^ key))


def test_the_first_steps_of_lowbias32_by_hand():
    x = 0x7FEB352D  # 1 after its first shift-xor (a no-op) and the first multiplication
    assert x ^ (x >> 15) == 0x7FEB352D ^ 0xFFD6 == 0x7FEBCAFB
    y = (0x7FEBCAFB * 0x846CA68B) & 0xFFFFFFFF
    assert lowbias32(1) == y ^ (y >> 16)
    assert random.hashed(0, 0, [1])[0] != random.hashed(0, 0, [2])[0] != random.hashed(0, 0, [3])[0]


def test_uniforms_lie_strictly_inside_zero_and_one_and_are_flat():
    values = random.uniforms(3, 2, np.arange(200_000))
    assert 0 < values.min() and values.max() < 1
    counts, _ = np.histogram(values, bins=10, range=(0, 1))
    assert np.all(np.abs(counts - 20_000) < 5 * np.sqrt(20_000))  # five standard errors of a flat histogram


def test_normals_have_mean_zero_variance_one_and_normal_tails():
    values = random.normals(11, 4, np.arange(200_000))
    assert abs(values.mean()) < 5 / np.sqrt(200_000)
    assert abs(values.var() - 1) < 5 * np.sqrt(2 / 200_000)
    assert np.mean(np.abs(values) > 1.96) == pytest.approx(0.05, abs=0.003)


def test_streams_and_seeds_are_uncorrelated():
    a = random.normals(0, 1, np.arange(50_000))
    b = random.normals(0, 2, np.arange(50_000))
    c = random.normals(1, 1, np.arange(50_000))
    for other in (b, c):
        assert abs(np.corrcoef(a, other)[0, 1]) < 5 / np.sqrt(50_000)


def test_a_number_depends_on_its_index_alone():
    long = random.normals(5, 3, np.arange(1000))
    assert np.array_equal(random.normals(5, 3, np.arange(10)), long[:10])
    assert np.array_equal(random.normals(5, 3, [999, 3]), long[[999, 3]])


def test_truncated_normals_stay_within_two_sigma_and_keep_the_inside_draws():
    indices = np.arange(100_000)
    plain = random.normals(2, 64 * 5, indices)
    cut = random.truncated_normals(2, 5, indices)
    assert np.abs(cut).max() <= 2.0
    inside = np.abs(plain) <= 2.0
    assert np.array_equal(cut[inside], plain[inside])  # only the draws outside ±2σ are redrawn
    assert cut.std() == pytest.approx(0.8796, abs=0.01)  # the sd of a standard normal cut at ±2σ


def test_permutations_are_permutations_and_fisher_yates_by_hand():
    for n in (1, 2, 5, 12):
        assert sorted(random.permutation(n, 9).tolist()) == list(range(n))
    u = random.uniforms(4, random.STREAM_SHUFFLE, np.arange(3))
    order = [0, 1, 2]
    for i in (2, 1):
        j = int(u[i] * (i + 1))
        order[i], order[j] = order[j], order[i]
    assert random.permutation(3, 4).tolist() == order


def test_a_word_seed_is_its_crc32():
    assert random.text_seed("dog") == zlib.crc32(b"dog")
    assert random.text_seed("Ünï") == zlib.crc32("Ünï".encode())


def test_out_of_range_keys_are_refused():
    with pytest.raises(ValueError, match="2\\^32"):
        random.hashed(-1, 0, [0])
    with pytest.raises(ValueError, match="2\\^32"):
        random.hashed(0, 0, [2**32])
