"""What attention costs: the memory of its n×n weights, and one attention call timed in torch, explicit
softmax(QKᵀ/√d)·V against the fused `scaled_dot_product_attention`. torch is imported inside the timing
functions, so importing this module stays numpy-only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from core.explain.attention import MAX_SEQUENCE, checked_positive_int


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

    lengths = [checked_positive_int("sequence length", int(n), MAX_SEQUENCE) for n in np.atleast_1d(sequence_lengths)]
    d_head = checked_positive_int("d_head", d_head, 1024)
    repeats = checked_positive_int("repeats", repeats, 100)
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
