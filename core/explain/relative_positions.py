"""Relative position: the other ways to make an attention score depend on distance.

- RoPE (RoFormer) turns each pair of a query's and a key's dimensions by its position, so q·k depends only on
  the offset (`rope_score_closed_form` writes that dependence out).
- ALiBi adds a fixed, head-specific penalty proportional to the distance.
- Complex word-order embeddings give each dimension an amplitude, frequency and phase.
"""

from __future__ import annotations

import math

import numpy as np

from core.explain import portable_random
from core.explain.attention import MAX_D_K, MAX_SEQUENCE, checked_positive_int
from core.explain.encodings import angular_frequencies


def apply_rope(x, positions, base: float = 10000.0) -> np.ndarray:
    """Rotary position embedding (RoFormer): turn each pair (x_2i, x_2i+1) by angle pos·ω_i.

    x is (..., n, d) with even d, positions is (n,). Rotations compose, R(m)ᵀR(n) = R(n−m), so
    rope(q, m)·rope(k, n) depends on n − m only: the position moved out of the embedding into q and k.
    """
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    if x.ndim < 2 or x.shape[-1] % 2:
        raise ValueError(f"apply_rope needs x of shape (..., n, d) with even d, got {x.shape}")
    if positions.shape != (x.shape[-2],):
        raise ValueError(f"positions must have shape ({x.shape[-2]},) to match x, got {positions.shape}")
    angles = positions[:, None] * angular_frequencies(x.shape[-1], base)[None, :]  # (n, d/2)
    cos, sin = np.cos(angles), np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., n, d/2)
    rotated = np.empty_like(x)
    rotated[..., 0::2] = even * cos - odd * sin
    rotated[..., 1::2] = even * sin + odd * cos
    return rotated


def rope_scores(q, k, n_positions: int, base: float = 10000.0) -> np.ndarray:
    """S[m, n] = rope(q, m)·rope(k, n) for one query vector q and one key vector k placed at every position.

    The matrix is constant along each diagonal (Toeplitz): the score sees the offset n − m only.
    """
    n_positions = checked_positive_int("n_positions", n_positions, MAX_SEQUENCE)
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.shape != k.shape or q.ndim != 1:
        raise ValueError(f"q and k must be vectors of the same length, got {q.shape} and {k.shape}")
    positions = np.arange(n_positions)
    rotated_q = apply_rope(np.broadcast_to(q, (n_positions, q.size)), positions, base)  # (n, d)
    rotated_k = apply_rope(np.broadcast_to(k, (n_positions, k.size)), positions, base)  # (n, d)
    return rotated_q @ rotated_k.T


def random_query_key(d_model: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """One query and one key vector with independent standard-normal components (seeded; the browser draws the
    same ones, core.explain.portable_random)."""
    d_model = checked_positive_int("d_model", d_model, MAX_D_K)
    dimensions = np.arange(d_model)  # drawn by index: the first components stay put as d_model grows
    return (
        portable_random.normals(seed, portable_random.STREAM_QUERY, dimensions),
        portable_random.normals(seed, portable_random.STREAM_KEY, dimensions),
    )


def rope_score_closed_form(q, k, offsets, base: float = 10000.0) -> np.ndarray:
    """q_m·k_(m+Δ) as a function of the offset Δ alone: Σ_i a_i·cos(Δ·ω_i) + b_i·sin(Δ·ω_i) with
    a_i = q_2i·k_2i + q_2i+1·k_2i+1 and b_i = q_2i+1·k_2i − q_2i·k_2i+1 (qᵀ·R(Δω_i)·k for each pair)."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    if q.shape != k.shape or q.ndim != 1 or q.size % 2:
        raise ValueError(f"q and k must be vectors of one even length, got {q.shape} and {k.shape}")
    in_phase = q[0::2] * k[0::2] + q[1::2] * k[1::2]  # (d/2,)
    quadrature = q[1::2] * k[0::2] - q[0::2] * k[1::2]  # (d/2,)
    angles = np.atleast_1d(np.asarray(offsets, dtype=np.float64))[:, None] * angular_frequencies(q.size, base)[None, :]
    return (in_phase * np.cos(angles) + quadrature * np.sin(angles)).sum(axis=1)


def rope_shift_error(q, k, n_positions: int, shift: int, base: float = 10000.0) -> float:
    """max over m, n of |q_m·k_n − q_(m+shift)·k_(n+shift)|: zero up to rounding for RoPE."""
    shift = checked_positive_int("shift", shift, MAX_SEQUENCE)
    scores = rope_scores(q, k, n_positions + shift, base)
    return float(np.abs(scores[:n_positions, :n_positions] - scores[shift:, shift:]).max())


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's per-head slopes: the geometric sequence 2^(−8h/n) for h = 1..n when n is a power of two.

    Otherwise the paper takes the slopes of the nearest lower power of two p and fills the other n − p
    heads with every other slope of the 2p-head sequence.
    """
    n_heads = checked_positive_int("n_heads", n_heads, 1024)
    lower_power = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = 2.0 ** (-8.0 * np.arange(1, lower_power + 1) / lower_power)
    if lower_power == n_heads:
        return slopes
    doubled = 2.0 ** (-8.0 * np.arange(1, 2 * lower_power + 1) / (2 * lower_power))
    return np.concatenate([slopes, doubled[0::2][: n_heads - lower_power]])


def alibi_bias(n_positions: int, slope: float) -> np.ndarray:
    """ALiBi's bias added to the attention scores: B[i, j] = −slope·|i − j|, shape (n, n).

    In a causal model only j ≤ i is used, where this is the paper's −slope·(i − j); no position vector
    is added to the tokens at all.
    """
    n_positions = checked_positive_int("n_positions", n_positions, MAX_SEQUENCE)
    if not np.isfinite(slope) or slope <= 0:
        raise ValueError(f"slope must be a positive number, got {slope!r}")
    positions = np.arange(n_positions)
    return -float(slope) * np.abs(positions[:, None] - positions[None, :]).astype(np.float64)


def complex_order_embedding(positions, amplitude, frequency, phase) -> np.ndarray:
    """Wang et al. 2020, "Encoding Word Order in Complex Embeddings": dimension j of a word at position
    pos is r_j·exp(i(ω_j·pos + θ_j)). Amplitude r, frequency ω and initial phase θ belong to the word;
    the position only turns the phase. Returns complex (len(positions), d).
    """
    positions = np.asarray(positions, dtype=np.float64)
    amplitude, frequency, phase = (np.asarray(v, dtype=np.float64) for v in (amplitude, frequency, phase))
    if positions.ndim != 1 or not amplitude.shape == frequency.shape == phase.shape or amplitude.ndim != 1:
        raise ValueError(
            "positions must be a vector and amplitude, frequency, phase vectors of one length, got shapes "
            f"{positions.shape}, {amplitude.shape}, {frequency.shape}, {phase.shape}"
        )
    return amplitude * np.exp(1j * (positions[:, None] * frequency[None, :] + phase[None, :]))


def random_complex_word(d_model: int, base: float = 10000.0, seed: int = 0) -> tuple[np.ndarray, ...]:
    """One word's (amplitude, frequency, phase) for `complex_order_embedding`, as a model might start:
    amplitudes uniform in (0, 1), phases uniform in (0, 2π), and the sinusoidal frequencies base^(−2j/2d)
    so the d complex dimensions span the same wavelengths as a 2d-wide sinusoidal encoding."""
    d_model = checked_positive_int("d_model", d_model, MAX_D_K)
    dimensions = np.arange(d_model)
    amplitude = portable_random.uniforms(seed, portable_random.STREAM_AMPLITUDE, dimensions)
    phase = 2.0 * np.pi * portable_random.uniforms(seed, portable_random.STREAM_PHASE, dimensions)
    return amplitude, angular_frequencies(2 * d_model, base), phase
