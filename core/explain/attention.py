"""Attention arithmetic: softmax and its saturation, and Var(q·k) = d_k.

- Softmax is computed stably (subtract the row maximum), so scores of 1000 do not overflow.
- The [a, a, 2a] example and the Jacobian diag(y) − y·yᵀ show why large scores stop gradients.
- A seeded Monte Carlo shows Var(q·k) = d_k for unit-variance components and what 1/√d_k does to it.

RoPE, ALiBi and complex word-order embeddings are in core/explain/relative_positions.py; what attention costs
(memory, a timed call in torch) in core/explain/attention_cost.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_D_K = 65_536
MAX_SEQUENCE = 16_384
MAX_SAMPLES = 1_000_000
SATURATION_SEED_A = (1.0, 10.0, 100.0)
# The Softmax page's scale a and temperature: 1-2-5 steps on a log scale, so each step visibly moves the figure.
# Whole values are ints: a slider shows and a link writes str(option), "10" rather than "10.0".
A_CHOICES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
TEMPERATURE_CHOICES = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 5, 10)
D_K_CHOICES = tuple(2**i for i in range(13))  # 1 .. 4096


def checked_positive_int(name: str, value: int, cap: int) -> int:
    """`value` as an int in 1..cap, else a ValueError naming `name` (a bool is not an integer here)."""
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
    d_k = checked_positive_int("d_k", d_k, MAX_D_K)
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
    n_samples = checked_positive_int("n_samples", n_samples, MAX_SAMPLES)
    d_k_values = [checked_positive_int("d_k", int(d), MAX_D_K) for d in np.atleast_1d(d_k_values)]
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
    n_keys = checked_positive_int("n_keys", n_keys, MAX_SEQUENCE)
    n_queries = checked_positive_int("n_queries", n_queries, MAX_SAMPLES)
    d_k_values = [checked_positive_int("d_k", int(d), MAX_D_K) for d in np.atleast_1d(d_k_values)]
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
