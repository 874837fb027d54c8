"""Similarity against offset: how far apart two positions are, as each encoding scheme sees it.

For the sinusoidal encoding with even d_model, PE(t)·PE(t+k) = Σ_i cos(k·ω_i): it depends on the offset k
alone, and a fixed rotation M_k (`core.explain.encodings.shift_matrix`) carries PE(t) to PE(t+k) for every t.
`similarity_picture` draws the same two views (score against offset from several starts, and the
position × position matrix) for a learned table, RoPE, ALiBi and complex word-order embeddings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.explain import encodings, relative_positions

SCHEMES = ("sinusoidal", "learned (init)", "RoPE", "ALiBi", "complex (Wang et al.)")

SCHEME_IDEAS = {
    "sinusoidal": "PE(t)·PE(t+k) = Σ_i cos(k·ω_i): the similarity of two positions depends on their offset only.",
    "learned (init)": "A learned table starts as random vectors (truncated normal, std 0.02): no structure "
    "yet, the curves from different starts disagree; whatever order it knows, training must put there.",
    "RoPE": "RoPE rotates q and k instead of adding a vector to the token: q_m·k_n = q·R(n−m)·k depends on "
    "n − m only, so every diagonal of the score matrix is constant.",
    "ALiBi": "ALiBi adds no position vector; it adds the bias −slope·|i−j| to the attention scores, a penalty "
    "that grows linearly with distance (a causal model uses only j ≤ i).",
    "complex (Wang et al.)": '"Encoding Word Order in Complex Embeddings" (Wang et al., ICLR 2020) gives each '
    "word dimension r_j·e^(i(ω_j·pos + θ_j)): word order is a phase that turns with position, so "
    "Re⟨f(t), f(t+k)⟩ = Σ_j r_j²·cos(k·ω_j) depends on k only. Shown for one random word (d_model/2 complex "
    "dimensions, the same number of reals).",
}


# The pages' positions and offsets: a ladder that steps by one near 0 and by about a third further out, so a drag
# from 0 to 1024 passes every small offset and still reaches far.
POSITION_LADDER = (
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    12,
    16,
    20,
    24,
    32,
    40,
    48,
    64,
    80,
    96,
    128,
    160,
    192,
    256,
    320,
    384,
    512,
    640,
)
POSITION_LADDER += (768, 1024)
OFFSETS_SHOWN_CHOICES = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512)
CURVE_STARTS = 4  # starting positions drawn on the curves, spread over the text
ROUNDING = 1e-9  # curves closer than this, relative to their size, are the same curve up to float64 rounding


def curve_starts(n_positions: int, count: int = CURVE_STARTS) -> np.ndarray:
    """`count` starting positions spread evenly over 0 .. n - 1 (rounded half to even, repeats dropped)."""
    return np.unique(np.linspace(0, n_positions - 1, count).round().astype(int))


def coincidence_note(curves: np.ndarray, closed_form: np.ndarray | None) -> str:
    """What a figure of `curves` (one row per start) should say inside it: that the starts coincide, and with the
    closed form, up to rounding; nothing where they do not."""
    curves = np.asarray(curves, dtype=np.float64)
    size = max(1.0, float(np.abs(curves).max()))
    if curves.shape[0] < 2 or spread_across_starts(curves) > ROUNDING * size:
        return ""
    starts = f"the {curves.shape[0]} starts give one curve"
    if closed_form is not None and float(np.abs(curves - closed_form).max()) <= ROUNDING * size:
        return starts + " and the closed form, equal up to rounding"
    return starts + ", equal up to rounding"


def _check_even(d_model: int, what: str) -> None:
    if d_model % 2:
        raise ValueError(f"d_model must be even for {what} (the last sine has no cosine partner), got {d_model}")


def _check_starts_offsets(starts, offsets) -> tuple[np.ndarray, np.ndarray]:
    starts = np.atleast_1d(np.asarray(starts))
    offsets = np.atleast_1d(np.asarray(offsets))
    for name, values in (("starts", starts), ("offsets", offsets)):
        if values.size == 0 or not np.issubdtype(values.dtype, np.integer) or values.min() < 0:
            raise ValueError(f"{name} must be non-empty non-negative integers (positions are 0-based), got {values}")
    return starts.astype(np.int64), offsets.astype(np.int64)


def dot_product_vs_offset(starts, offsets, d_model: int, base: float = 10000.0) -> np.ndarray:
    """PE(t)·PE(t+k) for each start t (rows) and offset k (columns): shape (len(starts), len(offsets))."""
    starts, offsets = _check_starts_offsets(starts, offsets)
    encoding = encodings.sinusoidal(int(starts.max() + offsets.max()) + 1, d_model, base)
    return np.einsum("sd,skd->sk", encoding[starts], encoding[starts[:, None] + offsets[None, :]])


def closed_form_dot_product(offsets, d_model: int, base: float = 10000.0) -> np.ndarray:
    """Σ_i cos(k·ω_i) for each offset k: sin a·sin b + cos a·cos b = cos(a − b) summed over the pairs.

    Only for even d_model; with odd d_model the unpaired last sine adds sin(tω)·sin((t+k)ω), which
    depends on t.
    """
    _check_even(d_model, "the closed form")
    offsets = np.atleast_1d(np.asarray(offsets, dtype=np.float64))
    return np.cos(offsets[:, None] * encodings.angular_frequencies(d_model, base)[None, :]).sum(axis=1)


def cosine_similarity_matrix(matrix) -> np.ndarray:
    """cos(angle) between every pair of rows: (n, n). For complex rows, the real part of the Hermitian
    product over the norms. All-zero rows raise, since their angle is undefined."""
    matrix = np.asarray(matrix)
    norms = np.linalg.norm(matrix, axis=1)
    if (norms == 0).any():
        raise ValueError("cosine similarity is undefined for an all-zero row")
    unit = matrix / norms[:, None]
    return np.real(unit @ unit.conj().T)


def shift_check(start: int, offset: int, d_model: int, base: float = 10000.0) -> dict[str, np.ndarray | float]:
    """Apply M_k to PE(t) and compare with the true PE(t+k).

    Returns pe_start, shifted (M_k·PE(t)), pe_target (PE(t+k)) and max_error = max |M_k·PE(t) − PE(t+k)|,
    which is rounding (~1e-15 for moderate t + k) because the rotation is exact.
    """
    starts, offsets = _check_starts_offsets(start, offset)
    start, offset = int(starts[0]), int(offsets[0])
    encoding = encodings.sinusoidal(start + offset + 1, d_model, base)
    shifted = encodings.shift_matrix(offset, d_model, base) @ encoding[start]
    target = encoding[start + offset]
    return {
        "pe_start": encoding[start],
        "shifted": shifted,
        "pe_target": target,
        "max_error": float(np.abs(shifted - target).max()),
    }


def max_shift_error(starts, offsets, d_model: int, base: float = 10000.0) -> float:
    """max over all t in starts and k in offsets of |M_k·PE(t) − PE(t+k)|."""
    starts, offsets = _check_starts_offsets(starts, offsets)
    encoding = encodings.sinusoidal(int(starts.max() + offsets.max()) + 1, d_model, base)
    worst = 0.0
    for k in offsets:
        shifted = encoding[starts] @ encodings.shift_matrix(int(k), d_model, base).T  # (starts, d)
        worst = max(worst, float(np.abs(shifted - encoding[starts + k]).max()))
    return worst


def heatmap_stride(n_positions: int, max_side: int) -> int:
    """Every how many positions to keep so an n × n heatmap has at most max_side × max_side cells.

    A stride, not an average: averaging blocks of a fast oscillation blurs it into structure that is not
    there; the page says when it strides."""
    if n_positions < 1 or max_side < 1:
        raise ValueError(f"n_positions and max_side must be ≥ 1, got {n_positions} and {max_side}")
    return -(-n_positions // max_side)


def spread_across_starts(curves: np.ndarray) -> float:
    """Largest difference between the curves of different starts at one offset: 0 when only k matters."""
    curves = np.asarray(curves, dtype=np.float64)
    return float((curves.max(axis=0) - curves.min(axis=0)).max())


@dataclass(frozen=True)
class SimilarityPicture:
    """One scheme's two views. curves[s, j] is the score between start s and start s + offset j;
    matrix[m, n] the score between positions m and n of the `positions` kept (strided when large)."""

    scheme: str
    curves: np.ndarray
    matrix: np.ndarray
    positions: np.ndarray
    curve_label: str
    matrix_label: str
    closed_form: np.ndarray | None  # the score as a function of the offset alone; None where there is none


def similarity_picture(
    scheme: str,
    n_positions: int,
    d_model: int,
    starts,
    offsets,
    base: float = 10000.0,
    max_side: int = 256,
    seed: int = 0,
) -> SimilarityPicture:
    """Score against offset from each start, and the n × n matrix of one scheme in SCHEMES.

    sinusoidal, learned: dot products of the position vectors, cosine similarity in the matrix.
    RoPE: q_m·k_n for one random (seeded) q and k, rotated to their positions.
    ALiBi: the bias −slope·|m−n| of head 1 of 8 (slope 1/2).
    complex: Re⟨f(t), f(t+k)⟩ of one random (seeded) word, cosine similarity in the matrix.
    """
    starts, offsets = _check_starts_offsets(starts, offsets)
    positions = np.arange(0, n_positions, heatmap_stride(n_positions, max_side))
    needed = max(n_positions, int(starts.max() + offsets.max()) + 1)  # rows the curves and matrix touch
    pairs = (starts[:, None], starts[:, None] + offsets[None, :])  # (starts, offsets) row indices
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    return _PICTURES[scheme](_PictureInputs(scheme, needed, d_model, base, seed, pairs, positions, offsets))


@dataclass(frozen=True)
class _PictureInputs:
    """What every scheme's picture needs: `needed` positions, the (start, start + offset) index pairs of the
    curves and the `positions` the matrix keeps."""

    scheme: str
    needed: int
    d_model: int
    base: float
    seed: int
    pairs: tuple[np.ndarray, np.ndarray]
    positions: np.ndarray
    offsets: np.ndarray


def _position_vector_picture(inputs: _PictureInputs) -> SimilarityPicture:
    """sinusoidal and learned: dot products of the position vectors, cosine similarity in the matrix."""
    scheme, d_model, base, needed = inputs.scheme, inputs.d_model, inputs.base, inputs.needed
    if scheme == "sinusoidal":
        vectors = encodings.sinusoidal(needed, d_model, base)
    else:
        vectors = encodings.learned_table(needed, d_model, max_positions=max(4096, needed), seed=inputs.seed)
    curves = np.einsum("skd,skd->sk", vectors[inputs.pairs[0]], vectors[inputs.pairs[1]])
    matrix = cosine_similarity_matrix(vectors[inputs.positions])
    closed_form = (
        closed_form_dot_product(inputs.offsets, d_model, base) if scheme == "sinusoidal" and d_model % 2 == 0 else None
    )
    label = "dot product PE(t)·PE(t+k)" if scheme == "sinusoidal" else "dot product L(t)·L(t+k)"
    return SimilarityPicture(scheme, curves, matrix, inputs.positions, label, "cosine similarity", closed_form)


def _rope_picture(inputs: _PictureInputs) -> SimilarityPicture:
    """q_m·k_n for one random (seeded) q and k, rotated to their positions."""
    d_model, needed, positions = inputs.d_model, inputs.needed, inputs.positions
    _check_even(d_model, "RoPE")
    q, k = relative_positions.random_query_key(d_model, inputs.seed)
    rotated_q = relative_positions.apply_rope(
        np.broadcast_to(q, (needed, d_model)), np.arange(needed), inputs.base
    )  # (n, d)
    rotated_k = relative_positions.apply_rope(
        np.broadcast_to(k, (needed, d_model)), np.arange(needed), inputs.base
    )  # (n, d)
    curves = np.einsum("skd,skd->sk", rotated_q[inputs.pairs[0]], rotated_k[inputs.pairs[1]])
    matrix = rotated_q[positions] @ rotated_k[positions].T
    closed_form = relative_positions.rope_score_closed_form(q, k, inputs.offsets, inputs.base)
    return SimilarityPicture(
        inputs.scheme, curves, matrix, positions, "score q_t·k_(t+k)", "score q_m·k_n", closed_form
    )


def _alibi_picture(inputs: _PictureInputs) -> SimilarityPicture:
    """The bias −slope·|m−n| of head 1 of 8 (slope 1/2)."""
    slope = float(relative_positions.alibi_slopes(8)[0])
    bias = relative_positions.alibi_bias(inputs.needed, slope)
    curves = bias[inputs.pairs[0], inputs.pairs[1]]
    matrix = bias[np.ix_(inputs.positions, inputs.positions)]
    closed_form = -slope * inputs.offsets.astype(np.float64)
    return SimilarityPicture(
        inputs.scheme, curves, matrix, inputs.positions, f"bias −{slope:g}·k", "bias −slope·|m−n|", closed_form
    )


def _complex_picture(inputs: _PictureInputs) -> SimilarityPicture:
    """Re⟨f(t), f(t+k)⟩ of one random (seeded) word, cosine similarity in the matrix."""
    amplitude, frequency, phase = relative_positions.random_complex_word(
        inputs.d_model // 2 or 1, inputs.base, inputs.seed
    )
    word = relative_positions.complex_order_embedding(np.arange(inputs.needed), amplitude, frequency, phase)  # (n, d/2)
    curves = np.real(np.einsum("skd,skd->sk", word[inputs.pairs[0]], word[inputs.pairs[1]].conj()))
    matrix = cosine_similarity_matrix(word[inputs.positions])
    closed_form = (amplitude**2 * np.cos(inputs.offsets[:, None] * frequency[None, :])).sum(axis=1)
    return SimilarityPicture(
        inputs.scheme, curves, matrix, inputs.positions, "Re⟨f(t), f(t+k)⟩", "cosine similarity", closed_form
    )


_PICTURES = {
    "sinusoidal": _position_vector_picture,
    "learned (init)": _position_vector_picture,
    "RoPE": _rope_picture,
    "ALiBi": _alibi_picture,
    "complex (Wang et al.)": _complex_picture,
}
