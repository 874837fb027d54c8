"""Random numbers a browser draws too: every random object of the explainer pages comes from here.

The explainer pages redraw in the browser while a control moves (ui/live), so the random vectors they show (a
word's embedding, a random query and key, a learned table as initialised) must be the same numbers in numpy and
in JavaScript. numpy's generators cannot be replayed in a browser; a counter-based generator can: each number is
a hash of (seed, stream, index), computed with 32-bit integer arithmetic that numpy and JavaScript do alike
(`Math.imul`, `>>>`), so the integers are equal bit for bit and the floats made from them differ only by the last
digit of `log` and `cos`. ui/live/kernels.js mirrors this file; tests/test_live_kernels.py compares the two.

A number depends on its index only, never on how many were drawn, so a table's entry (p, j) is the same whatever
the table's size: dragging d_model or the number of positions grows the table instead of redrawing it.

The mixer is "lowbias32" (from Chris Wellons' search for integer hashes): one round for the seed, one for the
stream, two for the index.
"""

from __future__ import annotations

import zlib

import numpy as np

# The streams of the explainer's random objects, one per kind, so no two objects share numbers (kernels.js: STREAM).
STREAM_TOKEN = 1  # a word's embedding; the seed is the word's CRC-32
STREAM_QUERY_WEIGHTS = 2
STREAM_KEY_WEIGHTS = 3
STREAM_VALUE_WEIGHTS = 4
STREAM_LEARNED_TABLE = 5
STREAM_WORD = 6  # the Encoding matrix page's one random word
STREAM_QUERY = 7
STREAM_KEY = 8
STREAM_AMPLITUDE = 9
STREAM_PHASE = 10
STREAM_SHUFFLE = 11

_UINT32 = np.uint32
_TWO_TO_32 = 4294967296.0
TRUNCATED_ATTEMPTS = 16  # a redraw happens with p = 0.0455 at ±2σ, so 16 failures in a row never happen (p ≈ 1e-21)


def _mix(x: np.ndarray) -> np.ndarray:
    """lowbias32 on uint32 arrays: numpy's uint32 multiply wraps modulo 2^32, as Math.imul does."""
    x = x ^ (x >> _UINT32(16))
    x = x * _UINT32(0x7FEB352D)
    x = x ^ (x >> _UINT32(15))
    x = x * _UINT32(0x846CA68B)
    return x ^ (x >> _UINT32(16))


def _as_uint32(value) -> np.ndarray:
    array = np.asarray(value, dtype=np.int64)
    if (array < 0).any() or (array >= 2**32).any():
        raise ValueError(f"seeds, streams and indices must lie in 0 .. 2^32 - 1, got {value!r}")
    return np.atleast_1d(array.astype(_UINT32))


def hashed(seed: int, stream: int, indices) -> np.ndarray:
    """uint32 hash of (seed, stream, index) for each index."""
    with np.errstate(over="ignore"):
        key = _mix(_as_uint32(seed) ^ _UINT32(0x9E3779B9))  # odd constants keep an all-zero key away from 0
        key = _mix(_as_uint32(stream) ^ key ^ _UINT32(0x85EBCA6B))
        return _mix(_mix(_as_uint32(indices) ^ key))


def uniforms(seed: int, stream: int, indices) -> np.ndarray:
    """Uniform numbers in (0, 1), one per index: (hash + 0.5) / 2^32, so neither 0 nor 1 occurs."""
    return (hashed(seed, stream, indices).astype(np.float64) + 0.5) / _TWO_TO_32


def normals(seed: int, stream: int, indices) -> np.ndarray:
    """Standard normal numbers, one per index, by Box-Muller on the uniforms of indices 2i and 2i + 1."""
    indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
    radius = np.sqrt(-2.0 * np.log(uniforms(seed, stream, 2 * indices)))
    return radius * np.cos(2.0 * np.pi * uniforms(seed, stream, 2 * indices + 1))


def truncated_normals(seed: int, stream: int, indices, limit: float = 2.0) -> np.ndarray:
    """Standard normals redrawn until |z| ≤ limit (BERT's initialiser cuts at ±2σ): attempt a of index i draws
    from stream 64·stream + a, so each entry's redraws depend on that entry alone."""
    indices = np.atleast_1d(np.asarray(indices, dtype=np.int64))
    values = normals(seed, 64 * stream, indices)
    for attempt in range(1, TRUNCATED_ATTEMPTS):
        outside = np.abs(values) > limit
        if not outside.any():
            break
        values[outside] = normals(seed, 64 * stream + attempt, indices[outside])
    return np.clip(values, -limit, limit)


def permutation(n: int, seed: int, stream: int = STREAM_SHUFFLE) -> np.ndarray:
    """A seeded permutation of 0 .. n-1 by Fisher-Yates: step i swaps i with floor(u_i · (i + 1))."""
    order = np.arange(n)
    draws = uniforms(seed, stream, np.arange(n)) if n else np.empty(0)
    for i in range(n - 1, 0, -1):
        j = int(draws[i] * (i + 1))
        order[i], order[j] = order[j], order[i]
    return order


def text_seed(text: str) -> int:
    """The seed of a word: CRC-32 of its UTF-8 bytes (the browser computes the same checksum)."""
    return zlib.crc32(text.encode("utf-8"))
