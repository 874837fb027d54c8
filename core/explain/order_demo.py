"""The home page's opening demo: one self-attention layer with fixed random weights is blind to order.

Shuffle the tokens and the outputs are the same rows, shuffled: attention(P x) = P attention(x) for any
permutation P, because every token scores every other by q·k and mixes values by those scores, with no notion
of where a token sits. Add a position signal before the layer and a shuffle changes the outputs themselves.
The tokens come from a visitor (typed, or in a shared link): `parse_tokens` bounds them, and `for_figure`
escapes them for the figure's labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from core.explain import portable_random
from core.explain.encodings import sinusoidal
from core.limits import MAX_TEXT_CHARS, check_budget
from core.safe_text import plotly_literal

WIDTH = 8  # dimensions per token
WEIGHT_SEED = 7  # the layer's fixed random weights
MAX_TOKENS = 12
DEFAULT_TOKENS = "dog bites man"


def parse_tokens(text: str) -> list[str]:
    """The demo's tokens: `text` split at white space, its first MAX_TOKENS words. A text longer than
    core.limits.MAX_TEXT_CHARS is refused (BudgetExceeded) before it is split: a link may carry any length."""
    check_budget(len(text), MAX_TEXT_CHARS, "The token text", "characters", "Type a short sentence.")
    return text.split()[:MAX_TOKENS]


def token_vectors(words: Sequence[str], width: int = WIDTH) -> np.ndarray:
    """(tokens, width): one fixed random vector per word (the same word always gets the same vector, in the
    browser too: its seed is the word's CRC-32, core.explain.portable_random)."""
    dimensions = np.arange(width)
    return np.stack(
        [
            portable_random.normals(portable_random.text_seed(word), portable_random.STREAM_TOKEN, dimensions)
            for word in words
        ]
    )


def attention_weights(width: int = WIDTH, seed: int = WEIGHT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layer's fixed random projections W_q, W_k, W_v, each (width, width), entries N(0, 1/width)."""
    cells = np.arange(width * width)
    return tuple(
        portable_random.normals(seed, stream, cells).reshape(width, width) / np.sqrt(width)
        for stream in (
            portable_random.STREAM_QUERY_WEIGHTS,
            portable_random.STREAM_KEY_WEIGHTS,
            portable_random.STREAM_VALUE_WEIGHTS,
        )
    )


def self_attention(x: np.ndarray, seed: int = WEIGHT_SEED) -> np.ndarray:
    """One head of self-attention with fixed random projections: softmax(Q K^T / sqrt(d)) V, (tokens, width)."""
    width = x.shape[1]
    w_q, w_k, w_v = attention_weights(width, seed)
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(width)  # (tokens, tokens)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ (x @ w_v)


@dataclass(frozen=True)
class ShuffleDemo:
    """One run of the demo: the outputs for the typed order and for the shuffle, rows put back in typed order."""

    words: list[str]
    order: np.ndarray  # the shuffle: position i of the shuffled input holds word order[i]
    outputs: np.ndarray  # (tokens, width) for the words as typed
    shuffled_back: np.ndarray  # (tokens, width) for the shuffled input, rows put back in the typed order
    largest_difference: float


def shuffle_demo(words: Sequence[str], order: Sequence[int], with_position: bool, pe_scale: float = 1.0) -> ShuffleDemo:
    """The layer's outputs for `words` as typed and shuffled into `order`; with a position signal (the
    sinusoidal encoding of each token's place, added before the layer) the shuffle changes them."""
    words = list(words)
    if not 2 <= len(words) <= MAX_TOKENS:
        raise ValueError(f"the demo takes 2 to {MAX_TOKENS} tokens, got {len(words)}")
    order = np.asarray(order)
    if sorted(order.tolist()) != list(range(len(words))):
        raise ValueError(f"order must be a permutation of 0..{len(words) - 1}, got {order.tolist()}")
    x = token_vectors(words)
    position = pe_scale * sinusoidal(len(words), x.shape[1]) if with_position else 0.0
    outputs = self_attention(x + position)
    shuffled = self_attention(x[order] + position)  # the same places get the same position vectors
    back = np.empty_like(shuffled)
    back[order] = shuffled  # row i of the shuffled input is word order[i]
    return ShuffleDemo(words, order, outputs, back, float(np.max(np.abs(back - outputs))))


def for_figure(demo: ShuffleDemo) -> ShuffleDemo:
    """`demo` with its words escaped for Plotly, whose labels read an HTML subset (links among it)."""
    return replace(demo, words=[plotly_literal(word) for word in demo.words])


def visible_shuffle(order: np.ndarray) -> np.ndarray:
    """`order`, or, when it moves nothing, the words rotated by one place: a shuffle that moves nothing shows
    nothing."""
    order = np.asarray(order)
    return np.roll(order, 1) if np.array_equal(order, np.arange(order.size)) else order


def random_order(n: int, seed: int) -> np.ndarray:
    """A seeded permutation of 0..n-1: the shuffle the demo offers (the browser draws the same one)."""
    return portable_random.permutation(n, seed)
