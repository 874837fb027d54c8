"""Figures of the walkthrough page: one step's matrix as a heatmap, and how a shuffle changed the weights.

Rows are the sentence's tokens, labelled "position: word" (the position keeps two copies of one word apart, which
a categorical axis would otherwise merge); columns are dimensions, vocabulary words or key tokens. Signed values
use the house's signed colour scale around 0, weights and one-hot rows a 0..1 scale. Cells carry their numbers
while they are wide enough to read at 390 px.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.plotting import SIGNED_COLORSCALE, house_layout, labels

LABEL_CHARS = 10  # a longer word is cut in the tick labels, so the matrix keeps its width on a phone
NUMBERS_UP_TO = 8  # columns that still leave room for a two-decimal number in every cell at 390 px
ROW_PX = 34
COLOUR_BAR_PX = 48  # the horizontal colour bar under the matrix, its title at its right, its tick labels
UNSIGNED_COLORSCALE = "Blues"
# The difference heatmap's scale reaches at least this far, so rounding noise (about 1e-16) shows as white instead
# of being stretched over the whole colour scale.
DIFFERENCE_FLOOR = 0.05
KEY_TITLE = "key (the word looked at)"
QUERY_TITLE = "query (the word looking)"


def _cut(word: str) -> str:
    return word if len(word) <= LABEL_CHARS else word[: LABEL_CHARS - 1] + "…"


def token_labels(words: Sequence[str]) -> list[str]:
    """Tick labels "position: word" for visitor words, escaped for Plotly and cut at LABEL_CHARS."""
    return labels(f"{i}: {_cut(word)}" for i, word in enumerate(words))


def _heatmap(
    matrix: np.ndarray, rows: list[str], columns: list, quantity: str, signed: bool, floor: float = 0.0
) -> go.Heatmap:
    """Signed values on the signed scale around 0 (the scale reaching at least `floor`), others on 0..1; a one-hot
    matrix marks only its ones."""
    limit = max(float(np.abs(matrix).max()), floor) or 1.0
    if signed:
        scale = dict(colorscale=SIGNED_COLORSCALE, zmin=-limit, zmax=limit)
    else:
        scale = dict(colorscale=UNSIGNED_COLORSCALE, zmin=0.0, zmax=1.0)
    one_hot = quantity == "one-hot"
    cells = dict(text=np.where(matrix == 1.0, "1", ""), texttemplate="%{text}") if one_hot else {}
    if not one_hot and matrix.shape[1] <= NUMBERS_UP_TO:
        cells = dict(texttemplate="%{z:.2f}")
    return go.Heatmap(
        z=matrix,
        x=columns,
        y=rows,
        **scale,
        **cells,
        # under the matrix, across its width: at 390 px a bar beside it took a fifth of the width from the cells
        colorbar=dict(
            title=dict(text=quantity, side="right"),
            orientation="h",
            thickness=10,
            yref="container",
            y=0.0,
            yanchor="bottom",
        ),
        hovertemplate=f"%{{y}}, %{{x}}<br>{quantity} %{{z:.4f}}<extra></extra>",
        xgap=1,
        ygap=1,
    )


def vocabulary_labels(vocabulary: Sequence[str]) -> list[str]:
    """Column labels for distinct words: cut at LABEL_CHARS unless two would then read alike (a categorical
    axis would merge their columns)."""
    cut = [_cut(word) for word in vocabulary]
    return labels(cut if len(set(cut)) == len(cut) else vocabulary)


def _matrix_layout(title: str, n_rows: int, column_title: str, row_title: str, upright: bool) -> dict:
    """Rows down, labelled columns along the top (tilted unless `upright`), the height following the rows."""
    return house_layout(
        title,
        140 + COLOUR_BAR_PX + ROW_PX * n_rows,
        margin=dict(l=10, r=40, t=10, b=COLOUR_BAR_PX),  # r: the last tilted key label
        xaxis=dict(title=dict(text=column_title), side="top", type="category", tickangle=0 if upright else -45),
        yaxis=dict(title=dict(text=row_title), autorange="reversed", type="category"),
    )


def step_matrix(
    matrix: np.ndarray,
    words: Sequence[str],
    columns: str,
    quantity: str,
    signed: bool,
    title: str,
    vocabulary: Sequence[str] = (),
) -> go.Figure:
    """One step's (tokens, columns) matrix. `columns` says what the columns are: "dimensions", "tokens" (the
    same words, as keys) or "vocabulary" (`vocabulary`'s words); `quantity` titles the colour bar."""
    rows = token_labels(words)
    column_labels, column_title = {
        "dimensions": (list(range(matrix.shape[1])), "dimension"),
        "tokens": (rows, KEY_TITLE),
        "vocabulary": (vocabulary_labels(vocabulary), "vocabulary word"),
    }[columns]
    row_title = QUERY_TITLE if columns == "tokens" else "word (position: word)"
    figure = go.Figure(_heatmap(matrix, rows, column_labels, quantity, signed))
    figure.update_layout(_matrix_layout(title, len(rows), column_title, row_title, columns == "dimensions"))
    return figure


def weight_difference(difference: np.ndarray, words: Sequence[str]) -> go.Figure:
    """Shuffled sentence's weights, put back in the typed order, minus the typed sentence's weights."""
    rows = token_labels(words)
    figure = go.Figure(_heatmap(difference, rows, rows, "difference", True, floor=DIFFERENCE_FLOOR))
    title = "Weights: shuffled, put back, minus typed"
    figure.update_layout(_matrix_layout(title, len(rows), KEY_TITLE, QUERY_TITLE, False))
    return figure


def live_labels(words: Sequence[str], shuffled: Sequence[str], vocabulary: Sequence[str]) -> dict:
    """What the page's browser view needs to draw any step as `step_matrix` does, besides the matrices
    (core.explain.walkthrough.walkthrough_data): the row labels of both orders, the column labels and axis titles
    of each kind of column, and the colour scales."""
    return {
        "rows": {"original": token_labels(words), "shuffled": token_labels(shuffled)},
        "vocabulary": vocabulary_labels(vocabulary),
        "column_titles": {"dimensions": "dimension", "tokens": KEY_TITLE, "vocabulary": "vocabulary word"},
        "row_titles": {"tokens": QUERY_TITLE, "other": "word (position: word)"},
        "numbers_up_to": NUMBERS_UP_TO,
        "signed_colorscale": [list(stop) for stop in SIGNED_COLORSCALE],
        "unsigned_colorscale": UNSIGNED_COLORSCALE,
        "difference_floor": DIFFERENCE_FLOOR,
    }
