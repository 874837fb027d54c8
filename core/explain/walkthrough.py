"""One short sentence followed through one attention layer, step by step, with and without a position signal.

The steps: tokens (one-hot over the sentence's own vocabulary) -> embeddings -> + positional encoding -> queries
-> keys -> scores q·k/√d_k -> softmax weights -> values -> outputs. Each step has one matrix (rows are the
sentence's tokens) and one plain sentence (`step_sentence`), which the page and the tests share.

The position schemes: "sinusoidal" (core.explain.encodings.sinusoidal added to the embeddings), "learned (random
init)" (a seeded table drawn as core.explain.encodings.learned_table draws it, added), "RoPE" (nothing added; the
queries and keys are turned by core.explain.relative_positions.apply_rope) and "none".

The point the page makes: without a position signal, the weights of a shuffled sentence are the original weights
with rows and columns moved with the words (permutation equivariance), equal within IDENTICAL_WITHIN; with one,
they are not. `walkthrough_data` returns everything the page can show for one sentence as plain lists, for a
browser script that switches views without the server.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from core.explain.attention import softmax
from core.explain.encodings import learned_table, sinusoidal
from core.explain.order_demo import MAX_TOKENS, parse_tokens, token_vectors
from core.explain.relative_positions import apply_rope

D_MODEL = 8  # numbers per token: small enough to read every cell of a matrix
D_K = D_MODEL  # one head: queries and keys as wide as the embeddings
LAYER_SEED = 7  # the layer's fixed random projections
LEARNED_SEED = 0  # the learned position table's random start
SHUFFLE_SEED = 1  # the page's one shuffle
# encodings.learned_table draws with std 0.02 (BERT's init of both its word and its position table). The word
# vectors here have std 1, so the table is scaled by 1/0.02: the two tables keep the ratio a model starts with.
LEARNED_SCALE = 1 / 0.02
IDENTICAL_WITHIN = 1e-12  # "identical up to rounding": float64 rounding of these sums is about 1e-16
DEFAULT_SENTENCE = "the dog bites the man"
SCHEMES = ("sinusoidal", "learned (random init)", "RoPE", "none")


class SentenceRefused(ValueError):
    """A sentence the walkthrough cannot follow (fewer than two words); its message is the one line to show."""


class Sentence(NamedTuple):
    """The words the walkthrough follows, and how many words of the text were left off past MAX_TOKENS."""

    words: list[str]  # at most MAX_TOKENS
    left_off: int  # words past MAX_TOKENS that were dropped


@dataclass(frozen=True)
class Step:
    """One step of the walkthrough: its link value, its title, what its columns are and what its colour shows."""

    name: str
    title: str
    columns: str  # "vocabulary", "dimensions" or "tokens"
    quantity: str  # the colour bar's title
    signed: bool  # values of both signs (drawn on the signed colour scale) or 0..1


STEPS = (
    Step("tokens", "Tokens", "vocabulary", "one-hot", False),
    Step("embeddings", "Embeddings", "dimensions", "value", True),
    Step("positions", "+ positional encoding", "dimensions", "value", True),
    Step("queries", "Queries", "dimensions", "value", True),
    Step("keys", "Keys", "dimensions", "value", True),
    Step("scores", "Scores q·k/√d_k", "tokens", "score", True),
    Step("weights", "Softmax weights", "tokens", "weight", False),
    Step("values", "Values", "dimensions", "value", True),
    Step("outputs", "Outputs", "dimensions", "value", True),
)
STEP_NAMES = tuple(step.name for step in STEPS)
SHARED_STEPS = ("tokens", "embeddings")  # the same under every scheme


def parse_sentence(text: str) -> Sentence:
    """The walkthrough's words: `text` split at white space, the first MAX_TOKENS of them. BudgetExceeded for a
    text over core.limits.MAX_TEXT_CHARS, SentenceRefused for fewer than two words."""
    words = parse_tokens(text)
    if len(words) < 2:
        raise SentenceRefused("Type at least two words: attention mixes words, so one word shows nothing.")
    return Sentence(words, max(0, len(text.split()) - MAX_TOKENS))


@dataclass(frozen=True)
class Layer:
    """One attention head's fixed projections, each (d_model, d_k)."""

    query: np.ndarray
    key: np.ndarray
    value: np.ndarray


def fixed_layer(width: int = D_MODEL, seed: int = LAYER_SEED) -> Layer:
    """Seeded random projections with entries of variance 1/width, so a query keeps about the scale of its word."""
    rng = np.random.default_rng(seed)
    query, key, value = (rng.standard_normal((width, width)) / math.sqrt(width) for _ in range(3))
    return Layer(query, key, value)


def one_hot(words: Sequence[str], vocabulary: Sequence[str]) -> np.ndarray:
    """(tokens, vocabulary): row i is 1 in the column of word i."""
    columns = {word: j for j, word in enumerate(vocabulary)}
    table = np.zeros((len(words), len(vocabulary)))
    table[np.arange(len(words)), [columns[word] for word in words]] = 1.0
    return table


def position_vectors(scheme: str, n_tokens: int, width: int = D_MODEL) -> np.ndarray | None:
    """(tokens, width): what `scheme` adds to the embeddings, or None where it adds nothing (RoPE, none)."""
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    if scheme == "sinusoidal":
        return sinusoidal(n_tokens, width)
    if scheme == "learned (random init)":
        # a table of MAX_TOKENS rows: position p gets the same row whatever the sentence's length
        return LEARNED_SCALE * learned_table(n_tokens, width, max_positions=MAX_TOKENS, seed=LEARNED_SEED)
    return None


def attention_steps(embeddings: np.ndarray, scheme: str, layer: Layer) -> dict[str, np.ndarray]:
    """Every step after the embeddings for one sentence, `embeddings` (tokens, d_model), in step order."""
    n_tokens, width = embeddings.shape
    added = position_vectors(scheme, n_tokens, width)
    encoded = embeddings if added is None else embeddings + added  # (tokens, d_model)
    queries = encoded @ layer.query  # (tokens, d_k)
    keys = encoded @ layer.key  # (tokens, d_k)
    if scheme == "RoPE":
        positions = np.arange(n_tokens)
        queries, keys = apply_rope(queries, positions), apply_rope(keys, positions)
    scores = queries @ keys.T / math.sqrt(keys.shape[1])  # (tokens, tokens): query rows, key columns
    weights = softmax(scores)  # each row sums to 1
    values = encoded @ layer.value  # (tokens, d_k)
    return {
        "positions": encoded,
        "queries": queries,
        "keys": keys,
        "scores": scores,
        "weights": weights,
        "values": values,
        "outputs": weights @ values,
    }


@dataclass(frozen=True)
class Walk:
    """One sentence through the layer under one scheme: every step's matrix, by step name, in step order."""

    words: list[str]
    scheme: str
    matrices: dict[str, np.ndarray]


def vocabulary(words: Sequence[str]) -> list[str]:
    """The sentence's distinct words, sorted: the same columns for a sentence and any shuffle of it."""
    return sorted(set(words))


def walk(words: Sequence[str], scheme: str) -> Walk:
    """`words` (1 to MAX_TOKENS of them) through the page's fixed layer under `scheme`."""
    words = list(words)
    if not 1 <= len(words) <= MAX_TOKENS:
        raise ValueError(f"the walkthrough follows 1 to {MAX_TOKENS} words, got {len(words)}")
    embeddings = token_vectors(words, D_MODEL)  # (tokens, d_model)
    steps = {"tokens": one_hot(words, vocabulary(words)), "embeddings": embeddings}
    return Walk(words, scheme, steps | attention_steps(embeddings, scheme, fixed_layer()))


def shuffle_order(words: Sequence[str], seed: int = SHUFFLE_SEED) -> np.ndarray:
    """A seeded permutation of the word positions that changes the sentence whenever any order would: position i
    of the shuffled sentence holds word order[i]. When the seeded draw leaves the words as they were (it kept
    every word in place, or only swapped copies of one word), every word moves one place left instead, which
    changes any sentence that has two different words."""
    order = np.random.default_rng(seed).permutation(len(words))
    if [words[i] for i in order] == list(words):
        order = np.roll(np.arange(len(words)), -1)
    return order


@dataclass(frozen=True)
class ShuffleComparison:
    """A sentence and its shuffle through the layer, and how the shuffle changed the weights."""

    original: Walk
    shuffled: Walk
    order: np.ndarray
    difference: np.ndarray  # (tokens, tokens) in the typed order: shuffled weights, put back, minus the original's
    largest_difference: float

    @property
    def moved(self) -> bool:
        """Whether the shuffle changed the sentence (it cannot when every word is the same word)."""
        return self.shuffled.words != self.original.words

    @property
    def identical(self) -> bool:
        """Whether the shuffled weights are the original's with rows and columns moved, up to rounding."""
        return self.largest_difference <= IDENTICAL_WITHIN


def compare_shuffle(words: Sequence[str], order: Sequence[int], scheme: str) -> ShuffleComparison:
    """`words` and `words` shuffled into `order` through the layer under `scheme`. The shuffled sentence gets
    positions 0..n-1 afresh, as any sentence does."""
    words, order = list(words), np.asarray(order)
    if sorted(order.tolist()) != list(range(len(words))):
        raise ValueError(f"order must be a permutation of 0..{len(words) - 1}, got {order.tolist()}")
    original = walk(words, scheme)
    shuffled = walk([words[i] for i in order], scheme)
    put_back = np.empty_like(shuffled.matrices["weights"])
    put_back[np.ix_(order, order)] = shuffled.matrices["weights"]  # row and column i are word order[i]
    difference = put_back - original.matrices["weights"]
    return ShuffleComparison(original, shuffled, order, difference, float(np.abs(difference).max()))


def shuffle_verdict(comparison: ShuffleComparison) -> str:
    """What the shuffle did to the weights, in words: the page's one line under "Did the shuffle change the
    weights?" (the browser view words it from the same three cases)."""
    if not comparison.moved:
        return "Every word is the same word, so no shuffle can change this sentence."
    if comparison.identical:
        return (
            "**Identical up to rounding.** The shuffled sentence's weights are the original's with rows and columns "
            "moved along with the words: without a position signal the layer cannot tell the two orders apart."
        )
    return (
        "**Not just moved.** Put back in the typed order, the shuffled sentence's weights differ from the original's "
        f"by up to {comparison.largest_difference:.3f}: the position signal lets the layer see the new order."
    )


_ADDED = {
    "sinusoidal": "A vector of sines and cosines that depends only on the position is added to each row: the "
    "same word at two places now has two different rows.",
    "learned (random init)": "A vector per position, taken from a table the model learns, is added to each row. "
    "Here the table is still at its random start: it tells positions apart, with no pattern yet.",
    "RoPE": "RoPE adds nothing here: these are the embeddings unchanged. It puts the positions in at the next "
    "two steps, by turning the queries and keys.",
    "none": "Nothing is added: these are the embeddings unchanged, and nothing says where a word stands.",
}
_STEP_SENTENCES = {
    "tokens": "The sentence is cut into words. Each row marks which word of the vocabulary (here, the sentence's "
    "own words in alphabetical order) stands at that position.",
    "embeddings": f"Each word is looked up in a table of vectors: the same word always gets the same {D_MODEL} "
    "numbers, wherever it stands.",
    "queries": "A fixed matrix (random here, learned in a real model) turns each row into the word's query: what "
    "it looks for in the other words.",
    "keys": "A second fixed matrix turns each row into the word's key: what it offers to the queries.",
    "scores": f"Row i, column j: the query of word i times the key of word j, divided by √d_k = √{D_K} so that "
    "wider vectors do not give larger scores.",
    "weights": "Softmax turns each row of scores into weights that are positive and add up to 1: how much word i "
    "listens to each word j.",
    "values": "A third fixed matrix turns each row into the word's value: what it passes on to the words that "
    "listen to it.",
    "outputs": "Each word's output is its row of weights times the values: a mix of every word's value, which the "
    "next layer reads.",
}
_ROPE_TURNS = " RoPE then turns each pair of its numbers by an angle that grows with the word's position."
_ROPE_SCORES = " With RoPE a score depends on how far apart the two words stand, not on where they stand."
_NO_POSITION = " Without a position signal, shuffling the words only moves these rows and columns around."


def step_sentence(step: str, scheme: str) -> str:
    """The one plain sentence shown with `step` under `scheme`."""
    if step not in STEP_NAMES or scheme not in SCHEMES:
        raise ValueError(f"unknown step {step!r} or scheme {scheme!r}")
    if step == "positions":
        return _ADDED[scheme]
    sentence = _STEP_SENTENCES[step]
    if scheme == "RoPE" and step in ("queries", "keys"):
        return sentence + _ROPE_TURNS
    if scheme == "RoPE" and step == "scores":
        return sentence + _ROPE_SCORES
    if scheme == "none" and step == "weights":
        return sentence + _NO_POSITION
    return sentence


def _plain(matrix: np.ndarray, digits: int) -> list[list[float]]:
    """`matrix` as nested lists of floats rounded to `digits` significant digits (shorter JSON)."""
    return [[float(f"{value:.{digits}g}") for value in row] for row in matrix.tolist()]


def _scheme_views(comparison: ShuffleComparison, digits: int) -> dict:
    own = [name for name in STEP_NAMES if name not in SHARED_STEPS]
    return {
        "original": {name: _plain(comparison.original.matrices[name], digits) for name in own},
        "shuffled": {name: _plain(comparison.shuffled.matrices[name], digits) for name in own},
        "difference": _plain(comparison.difference, digits),
        "largest_difference": comparison.largest_difference,
        "identical": comparison.identical,
        "sentences": {name: step_sentence(name, comparison.original.scheme) for name in STEP_NAMES},
    }


def walkthrough_data(words: Sequence[str], seed: int = SHUFFLE_SEED, digits: int = 12) -> dict:
    """Everything the page can show for `words`, as JSON-able plain lists and numbers. The position toggle off
    is the scheme "none". Matrices are lists of rows, numbers rounded to `digits` significant digits:

        {"steps": [{"name", "title", "columns", "quantity", "signed"}, ...],   # STEPS, in order
         "words": {"original": [w, ...], "shuffled": [w, ...]},                # visitor text, unescaped
         "order": [i, ...],                    # position i of the shuffled sentence holds word order[i]
         "vocabulary": [w, ...],               # the columns of "tokens": the distinct words, sorted
         "d_k": 8,
         "shared": {"original": {"tokens": M, "embeddings": M}, "shuffled": {...}},   # the same for every scheme
         "schemes": {scheme: {                 # for each of SCHEMES
             "original": {"positions": M, "queries": M, "keys": M, "scores": M, "weights": M, "values": M,
                          "outputs": M},
             "shuffled": {...the same steps, rows in the shuffled order...},
             "difference": M,                  # weights: shuffled put back in the typed order, minus original
             "largest_difference": x, "identical": bool,   # identical: largest_difference <= IDENTICAL_WITHIN
             "sentences": {step name: the step's plain sentence}}}}
    """
    words = list(words)
    order = shuffle_order(words, seed)
    comparisons = {scheme: compare_shuffle(words, order, scheme) for scheme in SCHEMES}
    first = comparisons[SCHEMES[0]]
    return {
        "steps": [asdict(step) for step in STEPS],
        "words": {"original": words, "shuffled": first.shuffled.words},
        "order": order.tolist(),
        "vocabulary": vocabulary(words),
        "d_k": D_K,
        "shared": {
            variant: {name: _plain(getattr(first, variant).matrices[name], digits) for name in SHARED_STEPS}
            for variant in ("original", "shuffled")
        },
        "schemes": {scheme: _scheme_views(comparison, digits) for scheme, comparison in comparisons.items()},
    }
