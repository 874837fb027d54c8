"""Beyond the trained length: how a position score behaves past the longest position a model was trained on,
under three ways of stretching a rotary (or sinusoidal) encoding by a factor s.

    plain extrapolation       omega_i = base^(-2i/d), positions as they are: offsets past the trained length
                              reach angles the low frequencies never took in training
    position interpolation    positions m -> m / s, so omega_i -> omega_i / s (Chen et al., 2023, "Extending
                              Context Window of Large Language Models via Positional Interpolation")
    NTK-aware scaling         base -> base * s^(d / (d - 2)) (bloc97, 2023, "NTK-Aware Scaled RoPE"): the high
                              frequencies barely move, the lowest is slowed by s

The RoPE score of a query q and key k at offset D is sum_i a_i cos(D w_i) + b_i sin(D w_i)
(core.explain.relative_positions); the sinusoidal dot product PE(t).PE(t+D) is sum_i cos(D w_i).
"""

from __future__ import annotations

import numpy as np

from core.explain.encodings import angular_frequencies

METHODS = ("plain extrapolation", "position interpolation", "NTK-aware scaling")


def scaled_frequencies(d_model: int, base: float, method: str, scale: float) -> np.ndarray:
    """(d/2,) the angular frequencies each method uses for a context stretched by `scale`."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not scale >= 1:
        raise ValueError(f"the scaling factor must be at least 1, got {scale}")
    if method == "position interpolation":
        return angular_frequencies(d_model, base) / scale
    if method == "NTK-aware scaling":
        if (d_model + 1) // 2 == 1:
            # One pair (d = 1 or 2): its frequency is base^0 = 1 whatever the base, the fast pair NTK leaves
            # alone; the formula's exponent d / (d - 2) has no value at d = 2.
            return angular_frequencies(d_model, base)
        return angular_frequencies(d_model, base * scale ** (d_model / (d_model - 2)))
    return angular_frequencies(d_model, base)


def rope_score(q: np.ndarray, k: np.ndarray, offsets: np.ndarray, base: float, method: str, scale: float) -> np.ndarray:
    """The RoPE score q_m . k_(m+D) against the offset D under `method`."""
    omega = scaled_frequencies(q.size, base, method, scale)
    in_phase = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    quadrature = q[1::2] * k[0::2] - q[0::2] * k[1::2]
    angles = np.asarray(offsets, dtype=np.float64)[:, None] * omega[None, :]
    return (in_phase * np.cos(angles) + quadrature * np.sin(angles)).sum(axis=1)


def sinusoidal_score(offsets: np.ndarray, d_model: int, base: float, method: str, scale: float) -> np.ndarray:
    """PE(t).PE(t+D) against the offset D under `method` (positions stretched the same way)."""
    omega = scaled_frequencies(d_model, base, method, scale)
    return np.cos(np.asarray(offsets, dtype=np.float64)[:, None] * omega[None, :]).sum(axis=1)


def unseen_share(
    offsets: np.ndarray, d_model: int, base: float, method: str, scale: float, train_len: int
) -> np.ndarray:
    """Per offset, the share of frequency pairs turned further than any offset within the trained length turned
    them in training (angles taken within one turn): how far outside its training the score is."""
    trained = np.minimum(train_len * angular_frequencies(d_model, base), 2 * np.pi)
    reached = np.minimum(
        np.asarray(offsets, dtype=np.float64)[:, None] * scaled_frequencies(d_model, base, method, scale), 2 * np.pi
    )
    return (reached > trained[None, :] + 1e-12).mean(axis=1)
