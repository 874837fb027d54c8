"""Positional encodings: the sinusoidal one of "Attention Is All You Need" and the naive schemes it replaced.

One source of truth: the pages, the figures and Model B of the Fault lab all take the sinusoidal matrix
from `sinusoidal` here. Positions are 0-based everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.explain import portable_random

MAX_POSITIONS = 65_536
MAX_D_MODEL = 4_096
MAX_BASE = 1e9
LAYOUTS = ("interleaved", "concatenated")
# the bases the pages offer: the paper's 10 000 and decades around it (RoPE models use up to about 10^6)
PE_BASES = (10, 100, 1_000, 10_000, 100_000, 1_000_000)
DEFAULT_BASE = 10_000
# The pages' number of positions and d_model: a geometric ladder (steps of 1.5 and 4/3), so every step of a slider
# changes the picture visibly and the defaults sit mid-track instead of at 3 % of a linear one. d_model even only:
# an odd width leaves the last sine without its cosine.
POSITION_CHOICES = (
    2,
    3,
    4,
    6,
    8,
    12,
    16,
    24,
    32,
    48,
    64,
    96,
    128,
    192,
    256,
    384,
    512,
    768,
    1024,
    1536,
    2048,
    3072,
    4096,
)
D_MODEL_CHOICES = (2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
SAMPLES_PER_POSITION = 8  # the true curve of a dimension is drawn this finely (at most MAX_CURVE_POINTS points)
MAX_CURVE_POINTS = 2001
SAMPLE_DOTS_UP_TO = 256  # whole-position dots are drawn up to this many positions; beyond, they fuse into a band


def _check_size(name: str, value: int, cap: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer in 1..{cap}, got {value!r}")
    if not 1 <= value <= cap:
        raise ValueError(f"{name} must be in 1..{cap}, got {value}")
    return int(value)


def _check_base(base: float) -> float:
    try:
        base = float(base)
    except (TypeError, ValueError):
        raise ValueError(f"base must be a number in (1, {MAX_BASE:g}], got {base!r}") from None
    if not np.isfinite(base) or not 1.0 < base <= MAX_BASE:
        raise ValueError(f"base must be in (1, {MAX_BASE:g}], got {base}")
    return base


def angular_frequencies(d_model: int, base: float = 10000.0) -> np.ndarray:
    """ω_i = 1 / base^(2i/d_model) for each sin/cos pair i = 0 .. ceil(d_model/2)-1."""
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    base = _check_base(base)
    pair_index = np.arange((d_model + 1) // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / d_model)


def sinusoidal(n_positions: int, d_model: int, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    """The sinusoidal encoding matrix, float64 of shape (n_positions, d_model).

    Interleaved (the paper): column 2i is sin(pos·ω_i), column 2i+1 is cos(pos·ω_i), ω_i = base^(-2i/d).
    Concatenated: all the sines first, then all the cosines, same frequencies (tensor2tensor's order).
    With odd d_model the last column is a sine without a cosine partner.
    """
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    base = _check_base(base)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")

    omega = angular_frequencies(d_model, base)
    angles = np.arange(n_positions, dtype=np.float64)[:, None] * omega[None, :]  # (pos, pairs)
    n_sin, n_cos = omega.size, d_model // 2
    if layout == "interleaved":
        encoding = np.empty((n_positions, d_model), dtype=np.float64)
        encoding[:, 0::2] = np.sin(angles)
        encoding[:, 1::2] = np.cos(angles[:, :n_cos])
        return encoding
    return np.concatenate([np.sin(angles[:, :n_sin]), np.cos(angles[:, :n_cos])], axis=1)


def concatenated_order(d_model: int) -> np.ndarray:
    """Column permutation p with sinusoidal(..., "concatenated") == sinusoidal(..., "interleaved")[:, p]."""
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    return np.concatenate([np.arange(0, d_model, 2), np.arange(1, d_model, 2)])


def wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength in positions of each sin/cos pair: 2π·base^(2i/d_model), i = 0 .. ceil(d_model/2)-1.

    The shortest is 2π; the longest is 2π·base^(2(ceil(d/2)-1)/d), a little under base·2π.
    """
    return 2.0 * np.pi / angular_frequencies(d_model, base)


def dimension_wavelengths(d_model: int, base: float = 10000.0) -> np.ndarray:
    """Wavelength of each of the d_model columns (both members of a pair share one), interleaved layout."""
    return np.repeat(wavelengths(d_model, base), 2)[:d_model]


def shift_matrix(offset: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The block-diagonal rotation M_k with PE(t+k) = M_k · PE(t) for every t (interleaved layout).

    Each pair (sin θ, cos θ) with θ = t·ω turns by k·ω: sin(θ+kω) = cos(kω)·sin θ + sin(kω)·cos θ and
    cos(θ+kω) = −sin(kω)·sin θ + cos(kω)·cos θ. The map does not depend on t, which is why a model can
    learn to attend by relative position. Odd d_model has no such map: the last sine lacks its cosine.
    """
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    if d_model % 2:
        raise ValueError(
            f"d_model must be even for shift_matrix (the last sine of an odd d_model has no cosine "
            f"partner to rotate with), got {d_model}"
        )
    if not np.isfinite(offset):
        raise ValueError(f"offset must be a finite number, got {offset!r}")
    phase = float(offset) * angular_frequencies(d_model, base)
    cos, sin = np.cos(phase), np.sin(phase)
    matrix = np.zeros((d_model, d_model), dtype=np.float64)
    even = np.arange(0, d_model, 2)
    matrix[even, even] = cos
    matrix[even, even + 1] = sin
    matrix[even + 1, even] = -sin
    matrix[even + 1, even + 1] = cos
    return matrix


# --- The naive schemes of the classic explanation ----------------------------------------------------


def normalised_positions(n_positions: int) -> np.ndarray:
    """pos/(T-1): one column in [0, 1]; the step between neighbours depends on the length T."""
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    if n_positions == 1:
        return np.zeros((1, 1))
    return (np.arange(n_positions, dtype=np.float64) / (n_positions - 1))[:, None]


def integer_positions(n_positions: int) -> np.ndarray:
    """The raw integer position: one column 0, 1, 2, ... that grows without bound."""
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    return np.arange(n_positions, dtype=np.float64)[:, None]


def binary_positions(n_positions: int, n_bits: int = 16) -> np.ndarray:
    """The bits of pos, least significant first, as 0/1 columns (fixed width so lengths compare)."""
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    n_bits = _check_size("n_bits", n_bits, 32)
    if n_positions > 2**n_bits:
        raise ValueError(f"n_bits={n_bits} can count only {2**n_bits} positions, got n_positions={n_positions}")
    positions = np.arange(n_positions, dtype=np.int64)[:, None]
    return ((positions >> np.arange(n_bits)) & 1).astype(np.float64)


def learned_table(n_positions: int, d_model: int, max_positions: int = 4096, seed: int = 0) -> np.ndarray:
    """A learned position table as it is before training: truncated-normal init (std 0.02, cut at ±2σ,
    as BERT initialises its tables). Entry (p, j) is the same whatever n_positions and d_model (drawn by
    core.explain.portable_random from its index, so the browser draws the same table); beyond max_positions
    the table has no row at all, which is a learned table's real limit."""
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    if n_positions > max_positions:
        raise ValueError(
            f"a learned table of max_positions={max_positions} has no row for position {max_positions}; "
            f"got n_positions={n_positions}"
        )
    index = np.arange(n_positions)[:, None] * MAX_D_MODEL + np.arange(d_model)[None, :]  # (positions, d_model)
    return 0.02 * portable_random.truncated_normals(seed, portable_random.STREAM_LEARNED_TABLE, index.ravel()).reshape(
        n_positions, d_model
    )


SCHEMES = ("pos/(T-1)", "integer", "binary", "learned (init)", "sinusoidal")


def scheme_matrix(scheme: str, n_positions: int, d_model: int = 64, base: float = 10000.0) -> np.ndarray:
    """The (n_positions, width) matrix of one scheme named in SCHEMES."""
    if scheme == "pos/(T-1)":
        return normalised_positions(n_positions)
    if scheme == "integer":
        return integer_positions(n_positions)
    if scheme == "binary":
        return binary_positions(n_positions)
    if scheme == "learned (init)":
        return learned_table(n_positions, d_model)
    if scheme == "sinusoidal":
        return sinusoidal(n_positions, d_model, base)
    raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


@dataclass(frozen=True)
class SchemeScore:
    """How one scheme does on the three criteria, with the measured numbers behind each verdict."""

    scheme: str
    unique: bool
    offset_consistent: bool
    bounded: bool
    unique_rows_short: int
    unique_rows_long: int
    offset_distance_min: float
    offset_distance_max: float
    range_short: float
    range_long: float


def count_unique_rows(matrix: np.ndarray, decimals: int = 12) -> int:
    """Distinct rows after rounding away float noise at 1e-12 (hashing rows: a sort over 1024 columns is slow)."""
    rounded = np.ascontiguousarray(np.round(matrix, decimals) + 0.0)  # + 0.0 turns -0.0 into 0.0
    return len({row.tobytes() for row in rounded})


def _offset_distances(matrix: np.ndarray, offsets: tuple[int, ...], first_positions: int) -> dict[int, np.ndarray]:
    """||E(p+k) − E(p)|| for p = 0 .. first_positions-1, per offset k."""
    return {k: np.linalg.norm(matrix[k : first_positions + k] - matrix[:first_positions], axis=1) for k in offsets}


def score_scheme(
    scheme: str,
    short: int = 64,
    long: int = 4096,
    d_model: int = 64,
    base: float = 10000.0,
    offsets: tuple[int, ...] = (1, 2, 5, 10),
    growth_tolerance: float = 0.05,
) -> SchemeScore:
    """Score a scheme from its matrices at two lengths (nothing typed in).

    - unique: every row of both matrices is distinct.
    - offset_consistent: for each offset k, the distance ||E(p+k) − E(p)|| is the same for every start p
      and at both lengths, i.e. an offset means the same thing anywhere in any text.
    - bounded: the value range does not grow with length (any finite matrix is "bounded"; what matters
      is that range(long) is within growth_tolerance of range(short), where raw integers grow 65-fold).
    The evidence columns give the distance of offset 1 (its min and max over starts and lengths).
    """
    if not 2 <= short < long:
        raise ValueError(f"need 2 <= short < long, got short={short}, long={long}")
    matrix_short = scheme_matrix(scheme, short, d_model, base)
    matrix_long = scheme_matrix(scheme, long, d_model, base)
    unique_short = count_unique_rows(matrix_short)
    unique_long = count_unique_rows(matrix_long)

    usable_offsets = tuple(k for k in offsets if k < short)
    first = short - max(usable_offsets)
    spreads, distances_by_offset = [], {}
    for k in usable_offsets:
        d_short = _offset_distances(matrix_short, (k,), first)[k]
        d_long = _offset_distances(matrix_long, (k,), first)[k]
        both = np.concatenate([d_short, d_long])
        spreads.append((both.max() - both.min()) / max(1.0, both.max()))
        distances_by_offset[k] = both
    offset_one = distances_by_offset[usable_offsets[0]]
    range_short = float(np.ptp(matrix_short))
    range_long = float(np.ptp(matrix_long))
    return SchemeScore(
        scheme=scheme,
        unique=unique_short == short and unique_long == long,
        offset_consistent=bool(max(spreads) <= 1e-9),
        bounded=range_long <= range_short * (1.0 + growth_tolerance),
        unique_rows_short=unique_short,
        unique_rows_long=unique_long,
        offset_distance_min=float(offset_one.min()),
        offset_distance_max=float(offset_one.max()),
        range_short=range_short,
        range_long=range_long,
    )


def scoreboard(short: int = 64, long: int = 4096, d_model: int = 64, base: float = 10000.0) -> pd.DataFrame:
    """The criteria table of every scheme in SCHEMES, one row per scheme, with the evidence columns."""
    rows = [score_scheme(s, short, long, d_model, base).__dict__ for s in SCHEMES]
    return pd.DataFrame(rows)


def word_plus_position(
    d_model: int, position: int, base: float = 10000.0, embedding_std: float = 1.0, seed: int = 0
) -> dict[str, float]:
    """Norms in the "add, don't concatenate" story: a word embedding, its sinusoidal PE, and what adding a
    raw integer position to every component would do. Returns the norms and the position's share of
    the energy, ||pos||² / (||word||² + ||pos||²): near 1, the position drowns the word."""
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    position = _check_size("position + 1", position + 1, MAX_POSITIONS) - 1
    word = embedding_std * portable_random.normals(seed, portable_random.STREAM_WORD, np.arange(d_model))
    pe = sinusoidal(position + 1, d_model, base)[position]
    integer = np.full(d_model, float(position))
    return {
        "word_norm": float(np.linalg.norm(word)),
        "pe_norm": float(np.linalg.norm(pe)),
        "integer_norm": float(np.linalg.norm(integer)),
        "pe_energy_share": float(pe @ pe / (word @ word + pe @ pe)),
        "integer_energy_share": float(integer @ integer / (word @ word + integer @ integer)),
    }


def curve_positions(n_positions: int) -> np.ndarray:
    """Where a dimension's true curve is drawn: SAMPLES_PER_POSITION points per position from 0 to n - 1, at most
    MAX_CURVE_POINTS in all (the browser's kernels.js draws the same points)."""
    n_positions = _check_size("n_positions", n_positions, MAX_POSITIONS)
    count = min((n_positions - 1) * SAMPLES_PER_POSITION + 1, MAX_CURVE_POINTS)
    return np.linspace(0.0, n_positions - 1, count)


def sinusoidal_curves(
    positions: np.ndarray, dimensions, d_model: int, base: float = 10000.0, layout: str = "interleaved"
):
    """Columns `dimensions` of the encoding at any real `positions` (the matrix's rows are the whole ones):
    shape (len(positions), len(dimensions))."""
    d_model = _check_size("d_model", d_model, MAX_D_MODEL)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    dimensions = np.asarray(dimensions, dtype=np.int64)
    if layout == "concatenated":
        dimensions = concatenated_order(d_model)[dimensions]  # the interleaved column each one is
    omega = angular_frequencies(d_model, base)[dimensions // 2]
    angles = np.asarray(positions, dtype=np.float64)[:, None] * omega[None, :]
    return np.where(dimensions % 2 == 0, np.sin(angles), np.cos(angles))


def binary_counter_waves(n_positions: int = 16, n_bits: int = 4, samples_per_position: int = 16):
    """The binary-counter analogy: bits of 0..n_positions-1 and, per bit b, the cosine of the same period
    2^(b+1) that peaks in the middle of each run of ones. Returns (positions, bits, fine_positions, waves)
    with bits (n_positions, n_bits) and waves (len(fine_positions), n_bits)."""
    positions = np.arange(n_positions)
    bits = binary_positions(n_positions, n_bits)
    fine_positions = np.linspace(0, n_positions - 1, (n_positions - 1) * samples_per_position + 1)
    periods = 2.0 ** (np.arange(n_bits) + 1)
    centres = 1.5 * periods / 2 - 0.5  # middle of the first run of ones of each bit
    waves = np.cos(2 * np.pi * (fine_positions[:, None] - centres[None, :]) / periods[None, :])
    return positions, bits, fine_positions, waves


def overview_strides(n_rows: int, n_cols: int, max_cells: int) -> tuple[int, int]:
    """Row and column strides that bring an n_rows × n_cols heatmap under max_cells.

    Striding (every s-th row) instead of averaging, because averaging a fast sinusoid over a block
    blurs it to zero and would show structure that is not there; the page says when it strides."""
    if n_rows * n_cols <= max_cells:
        return 1, 1
    scale = np.sqrt(n_rows * n_cols / max_cells)
    row_stride = max(1, int(np.ceil(n_rows / max(1, n_rows / scale))))
    col_stride = max(1, int(np.ceil(n_cols / max(1, n_cols / scale))))
    while (-(-n_rows // row_stride)) * (-(-n_cols // col_stride)) > max_cells:
        if -(-n_rows // row_stride) >= -(-n_cols // col_stride):
            row_stride += 1
        else:
            col_stride += 1
    return row_stride, col_stride
