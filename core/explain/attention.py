"""Attention arithmetic: softmax and its saturation, Var(q·k) = d_k, relative-position schemes, and the cost.

- Softmax is computed stably (subtract the row maximum), so scores of 1000 do not overflow.
- The [a, a, 2a] example and the Jacobian diag(y) − y·yᵀ show why large scores stop gradients.
- A seeded Monte Carlo shows Var(q·k) = d_k for unit-variance components and what 1/√d_k does to it.
- RoPE, ALiBi and complex word-order embeddings: the other ways to make a score depend on distance.
- `time_attention` measures one attention call in torch, explicit softmax(QKᵀ/√d)·V against the fused
  `scaled_dot_product_attention`. torch is imported inside it and its helpers, so the rest stays numpy-only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.explain import portable_random
from core.explain.encodings import angular_frequencies

MAX_D_K = 65_536
MAX_SEQUENCE = 16_384
MAX_SAMPLES = 1_000_000
SATURATION_SEED_A = (1.0, 10.0, 100.0)
# The Softmax page's scale a and temperature: 1-2-5 steps on a log scale, so each step visibly moves the figure.
# Whole values are ints: a slider shows and a link writes str(option), "10" rather than "10.0".
A_CHOICES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
TEMPERATURE_CHOICES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10)
D_K_CHOICES = tuple(2**i for i in range(13))  # 1 .. 4096


def _check_positive_int(name: str, value: int, cap: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer in 1..{cap}, got {value!r}")
    if not 1 <= value <= cap:
        raise ValueError(f"{name} must be in 1..{cap}, got {value}")
    return int(value)


def _check_scores(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 0 or scores.shape[-1] == 0:
        raise ValueError("softmax needs at least one score along the last axis")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite numbers (no NaN or infinity)")
    return scores


# --- Softmax and its saturation ----------------------------------------------------------------------


def softmax(scores, temperature: float = 1.0) -> np.ndarray:
    """softmax(scores / temperature) over the last axis, in float64.

    Subtracting the row maximum changes nothing mathematically (it cancels between numerator and
    denominator) but keeps every exponent ≤ 0, so exp never overflows.
    """
    scores = _check_scores(scores)
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    logits = scores / temperature
    exponentials = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exponentials / exponentials.sum(axis=-1, keepdims=True)


def _jacobian_from_outputs(y: np.ndarray) -> np.ndarray:
    """diag(y) − y·yᵀ, with the diagonal y_i·(1 − y_i) computed as y_i·Σ_{j≠i} y_j: when y_i ≈ 1,
    1 − y_i in floating point would cancel to 0 and lose the very gradient this page is about."""
    others = (1.0 - np.eye(y.size)) @ y  # (n,) Σ_{j≠i} y_j, a sum of positives
    jacobian = -np.outer(y, y)
    np.fill_diagonal(jacobian, y * others)
    return jacobian


def softmax_jacobian(scores) -> np.ndarray:
    """∂y/∂s of y = softmax(s) for one score vector: diag(y) − y·yᵀ, shape (n, n)."""
    scores = _check_scores(scores)
    if scores.ndim != 1:
        raise ValueError(f"softmax_jacobian takes one score vector, got shape {scores.shape}")
    return _jacobian_from_outputs(softmax(scores))


def three_score_example(a) -> np.ndarray:
    """softmax([a, a, 2a]) for each a: shape (len(a), 3). Column 2 is the classic y3 = e^a / (2 + e^a)."""
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    scores = np.stack([a, a, 2.0 * a], axis=-1)  # (len(a), 3)
    return softmax(scores)


def saturation_table(a) -> pd.DataFrame:
    """For scores [a, a, 2a]: the outputs and how the Jacobian collapses as a grows.

    jacobian_max_abs is the largest |∂y_i/∂s_j|, jacobian_norm the Frobenius norm. Both fall like
    e^(−a) once y3 ≈ 1: a saturated softmax passes almost no gradient back to its scores.
    """
    a = np.atleast_1d(np.asarray(a, dtype=np.float64))
    outputs = three_score_example(a)
    jacobians = np.stack([_jacobian_from_outputs(y) for y in outputs])  # (len(a), 3, 3)
    return pd.DataFrame(
        {
            "a": a,
            "y1": outputs[:, 0],
            "y2": outputs[:, 1],
            "y3": outputs[:, 2],
            "jacobian_max_abs": np.abs(jacobians).max(axis=(1, 2)),
            "jacobian_norm": np.linalg.norm(jacobians, axis=(1, 2)),
        }
    )


@dataclass(frozen=True)
class SoftmaxRow:
    """One row of attention scores pushed through softmax(s / (temperature·√d_k)).

    gradient is ∂y/∂s with respect to the raw scores s: the softmax Jacobian times 1/(temperature·√d_k).
    """

    scores: np.ndarray
    logits: np.ndarray
    probabilities: np.ndarray
    gradient: np.ndarray
    entropy: float
    max_weight: float


def softmax_row(scores, d_k: int = 1, temperature: float = 1.0) -> SoftmaxRow:
    """One score vector through softmax(s / (temperature·√d_k)): its weights, gradient, entropy and peak."""
    scores = _check_scores(scores)
    if scores.ndim != 1:
        raise ValueError(f"softmax_row takes one score vector, got shape {scores.shape}")
    d_k = _check_positive_int("d_k", d_k, MAX_D_K)
    if not np.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    scale = 1.0 / (temperature * math.sqrt(d_k))
    logits = scores * scale
    probabilities = softmax(logits)
    return SoftmaxRow(
        scores=scores,
        logits=logits,
        probabilities=probabilities,
        gradient=softmax_jacobian(logits) * scale,
        entropy=float(attention_entropy(probabilities)),
        max_weight=float(probabilities.max()),
    )


def attention_entropy(weights) -> np.ndarray:
    """Shannon entropy in nats over the last axis; 0·log 0 counts as 0. Uniform over n keys gives log n."""
    weights = np.asarray(weights, dtype=np.float64)
    safe = np.where(weights > 0, weights, 1.0)
    return -(weights * np.log(safe)).sum(axis=-1)


# --- Var(q·k) = d_k ----------------------------------------------------------------------------------


def _dot_products(rng: np.random.Generator, d_k: int, n_samples: int, chunk_cells: int = 1 << 20) -> np.ndarray:
    """n_samples independent q·k with q, k ~ N(0, I_{d_k}), drawn in chunks to bound memory."""
    rows_per_chunk = max(1, chunk_cells // d_k)
    products = []
    for start in range(0, n_samples, rows_per_chunk):
        rows = min(rows_per_chunk, n_samples - start)
        q = rng.standard_normal((rows, d_k))
        k = rng.standard_normal((rows, d_k))
        products.append(np.einsum("sd,sd->s", q, k))  # (rows,)
    return np.concatenate(products)


def dot_product_variance(d_k_values, n_samples: int = 4000, seed: int = 0) -> pd.DataFrame:
    """Monte Carlo Var(q·k) for q, k with independent unit-variance components, with and without 1/√d_k.

    Theory: q·k is a sum of d_k independent products of variance 1, so Var(q·k) = d_k and
    Var(q·k/√d_k) = 1. Each product has fourth moment 9, so the sample variance of n draws has
    standard error √((2·d_k² + 6·d_k)/n) around d_k (column variance_standard_error).
    """
    n_samples = _check_positive_int("n_samples", n_samples, MAX_SAMPLES)
    d_k_values = [_check_positive_int("d_k", int(d), MAX_D_K) for d in np.atleast_1d(d_k_values)]
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_k_values:
        products = _dot_products(rng, d_k, n_samples)
        variance = float(products.var(ddof=1))
        rows.append(
            {
                "d_k": d_k,
                "variance_unscaled": variance,
                "variance_scaled": variance / d_k,
                "theory_unscaled": float(d_k),
                "theory_scaled": 1.0,
                "variance_standard_error": math.sqrt((2.0 * d_k**2 + 6.0 * d_k) / n_samples),
            }
        )
    return pd.DataFrame(rows)


def attention_sharpness(d_k_values, n_keys: int = 64, n_queries: int = 200, seed: int = 0) -> pd.DataFrame:
    """Mean attention entropy and largest weight of one query over n_keys random keys, per d_k.

    Without 1/√d_k the scores spread like √d_k, softmax saturates and the entropy falls towards 0
    (one key takes all the weight); with it the spread stays 1 and the entropy stays near
    log(n_keys) minus a constant, whatever d_k.
    """
    n_keys = _check_positive_int("n_keys", n_keys, MAX_SEQUENCE)
    n_queries = _check_positive_int("n_queries", n_queries, MAX_SAMPLES)
    d_k_values = [_check_positive_int("d_k", int(d), MAX_D_K) for d in np.atleast_1d(d_k_values)]
    rng = np.random.default_rng(seed)
    rows = []
    for d_k in d_k_values:
        q = rng.standard_normal((n_queries, d_k))
        k = rng.standard_normal((n_keys, d_k))
        scores = q @ k.T  # (queries, keys)
        unscaled = softmax(scores)
        scaled = softmax(scores / math.sqrt(d_k))
        rows.append(
            {
                "d_k": d_k,
                "entropy_unscaled": float(attention_entropy(unscaled).mean()),
                "entropy_scaled": float(attention_entropy(scaled).mean()),
                "entropy_uniform": math.log(n_keys),
                "max_weight_unscaled": float(unscaled.max(axis=-1).mean()),
                "max_weight_scaled": float(scaled.max(axis=-1).mean()),
            }
        )
    return pd.DataFrame(rows)


# --- Relative position: RoPE, ALiBi, complex word-order embeddings -----------------------------------


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
    n_positions = _check_positive_int("n_positions", n_positions, MAX_SEQUENCE)
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
    d_model = _check_positive_int("d_model", d_model, MAX_D_K)
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
    shift = _check_positive_int("shift", shift, MAX_SEQUENCE)
    scores = rope_scores(q, k, n_positions + shift, base)
    return float(np.abs(scores[:n_positions, :n_positions] - scores[shift:, shift:]).max())


def alibi_slopes(n_heads: int) -> np.ndarray:
    """ALiBi's per-head slopes: the geometric sequence 2^(−8h/n) for h = 1..n when n is a power of two.

    Otherwise the paper takes the slopes of the nearest lower power of two p and fills the other n − p
    heads with every other slope of the 2p-head sequence.
    """
    n_heads = _check_positive_int("n_heads", n_heads, 1024)
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
    n_positions = _check_positive_int("n_positions", n_positions, MAX_SEQUENCE)
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
    d_model = _check_positive_int("d_model", d_model, MAX_D_K)
    dimensions = np.arange(d_model)
    amplitude = portable_random.uniforms(seed, portable_random.STREAM_AMPLITUDE, dimensions)
    phase = 2.0 * np.pi * portable_random.uniforms(seed, portable_random.STREAM_PHASE, dimensions)
    return amplitude, angular_frequencies(2 * d_model, base), phase


# --- The price of attention --------------------------------------------------------------------------


def attention_memory_bytes(
    n_positions: int, n_heads: int = 1, n_layers: int = 1, batch: int = 1, bytes_per_value: int = 4
) -> int:
    """Bytes of the n×n attention weights kept for backpropagation: batch·layers·heads·n²·bytes."""
    return int(batch) * int(n_layers) * int(n_heads) * int(n_positions) ** 2 * int(bytes_per_value)


def time_attention(
    sequence_lengths,
    d_head: int = 64,
    repeats: int = 3,
    budget_seconds: float = 0.2,
    seed: int = 0,
    n_threads: int | None = 2,
) -> pd.DataFrame:
    """Time one attention call on this machine's CPU, shape (1 batch, 1 head, n, d_head), float32, per n.

    explicit: softmax(Q·Kᵀ/√d)·V, which materialises the n×n scores and weights.
    fused: torch.nn.functional.scaled_dot_product_attention pinned to its flash kernel, which walks over
    blocks of keys with a running softmax and never holds an n×n tensor.

    Time is the best of up to `repeats` calls, after one warm-up call of each path at the smallest n; a path
    stops repeating once its calls at this n have taken budget_seconds (at least one call is always timed),
    which keeps n = 4096 near a second on two cores.
    Memory is not a measured peak: on CPU torch keeps no allocator statistics. It is the bytes of the tensors
    each path creates, read from the tensors themselves: scores + weights + output for the explicit path, the
    output alone for the fused one (its fixed-size per-thread blocks are not visible and not counted).
    """
    import torch  # lazily: only the cost section of one page needs torch

    lengths = [_check_positive_int("sequence length", int(n), MAX_SEQUENCE) for n in np.atleast_1d(sequence_lengths)]
    d_head = _check_positive_int("d_head", d_head, 1024)
    repeats = _check_positive_int("repeats", repeats, 100)
    if not np.isfinite(budget_seconds) or budget_seconds < 0:
        raise ValueError(f"budget_seconds must be a number ≥ 0, got {budget_seconds!r}")
    previous_threads = torch.get_num_threads()
    if n_threads is not None:
        torch.set_num_threads(n_threads)  # the app shares a small machine; a fixed count keeps runs comparable
    try:
        rows = _timing_rows(lengths, d_head, repeats, budget_seconds, seed)
    finally:
        torch.set_num_threads(previous_threads)
    return pd.DataFrame(rows)


def _best_time(path: Callable, q, k, v, repeats: int, budget_seconds: float) -> tuple[float, int]:
    """The best of up to `repeats` calls of `path` within `budget_seconds` (one always runs), and its tensor bytes."""
    best, spent = math.inf, 0.0
    for _ in range(repeats):
        if spent >= budget_seconds:
            break
        start = time.perf_counter()
        tensor_bytes = path(q, k, v)
        elapsed = time.perf_counter() - start
        best, spent = min(best, elapsed), spent + elapsed
    return best, int(tensor_bytes)


def _timing_rows(
    lengths: list[int], d_head: int, repeats: int, budget_seconds: float, seed: int
) -> list[dict[str, object]]:
    """One row per sequence length: the explicit and the fused path's best time and tensor bytes, and the bytes
    of the n×n score matrix."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def explicit(q, k, v):
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)  # (1, 1, n, n)
        weights = torch.softmax(scores, dim=-1)  # (1, 1, n, n)
        output = weights @ v  # (1, 1, n, d_head)
        return scores.nbytes + weights.nbytes + output.nbytes

    def fused(q, k, v):
        # Pinned to the flash kernel, so the "no n×n tensor" claim holds or this raises; torch would
        # otherwise fall back silently to its math kernel, which materialises the scores.
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            output = torch.nn.functional.scaled_dot_product_attention(q, k, v)  # (1, 1, n, d_head)
        return output.nbytes

    rows = []
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        warm = torch.randn(1, 1, min(lengths), d_head, generator=generator)
        for path in (explicit, fused):
            path(warm, warm, warm)  # first-call dispatch and thread start-up stay out of the timings
        for n in lengths:
            q, k, v = torch.randn(3, 1, 1, n, d_head, generator=generator)  # each (1, 1, n, d_head)
            explicit_time, explicit_bytes = _best_time(explicit, q, k, v, repeats, budget_seconds)
            fused_time, fused_bytes = _best_time(fused, q, k, v, repeats, budget_seconds)
            rows.append(
                {
                    "n": n,
                    "explicit_seconds": explicit_time,
                    "fused_seconds": fused_time,
                    "explicit_bytes": explicit_bytes,
                    "fused_bytes": fused_bytes,
                    "score_matrix_bytes": n * n * 4,
                    "memory_source": "tensor sizes (CPU)",
                }
            )
    return rows
