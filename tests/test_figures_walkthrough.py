"""The walkthrough's figures: token labels on the axes they apply to, a titled colour bar, axis titles, the signed
scale centred on 0, visitor words kept apart and shown as text."""

import numpy as np
import pytest

from core.explain import walkthrough
from core.explain.figures import walkthrough as figures
from core.plotting import SIGNED_COLORSCALE

WORDS = "the dog bites the man".split()


def _walk(step: str, scheme: str = "sinusoidal"):
    return walkthrough.walk(WORDS, scheme).matrices[step]


def test_a_step_of_dimensions_has_word_rows_dimension_columns_and_a_titled_colour_bar():
    matrix = _walk("queries")
    figure = figures.step_matrix(matrix, WORDS, "dimensions", "value", True, "Queries")
    heatmap = figure.data[0]
    assert list(heatmap.y) == ["0: the", "1: dog", "2: bites", "3: the", "4: man"]  # two "the" stay two rows
    assert list(heatmap.x) == list(range(8))
    np.testing.assert_array_equal(heatmap.z, matrix)
    assert heatmap.colorbar.title.text == "value"
    assert tuple(tuple(stop) for stop in heatmap.colorscale) == SIGNED_COLORSCALE
    assert heatmap.zmax == pytest.approx(np.abs(matrix).max()) and heatmap.zmin == -heatmap.zmax
    assert figure.layout.xaxis.title.text == "dimension" and figure.layout.yaxis.title.text
    assert figure.layout.title.text == "Queries"
    assert heatmap.texttemplate == "%{z:.2f}"  # 8 columns: every cell shows its number


def test_weights_have_tokens_on_both_axes_on_a_zero_to_one_scale():
    figure = figures.step_matrix(_walk("weights"), WORDS, "tokens", "weight", False, "Softmax weights")
    heatmap = figure.data[0]
    assert list(heatmap.x) == list(heatmap.y) == figures.token_labels(WORDS)
    assert (heatmap.zmin, heatmap.zmax) == (0.0, 1.0) and heatmap.colorbar.title.text == "weight"
    assert figure.layout.xaxis.title.text.startswith("key") and figure.layout.yaxis.title.text.startswith("query")


def test_the_tokens_step_marks_only_the_ones_under_the_vocabulary_words():
    vocabulary = walkthrough.vocabulary(WORDS)
    figure = figures.step_matrix(_walk("tokens"), WORDS, "vocabulary", "one-hot", False, "Tokens", vocabulary)
    heatmap = figure.data[0]
    assert list(heatmap.x) == ["bites", "dog", "man", "the"]
    assert [list(row) for row in heatmap.text][0] == ["", "", "", "1"]
    assert figure.layout.xaxis.title.text == "vocabulary word"


def test_twelve_key_columns_drop_the_cell_numbers_and_the_figure_grows_with_the_rows():
    words = "a b c d e f g h i j k l".split()
    scores = walkthrough.walk(words, "none").matrices["scores"]
    tall = figures.step_matrix(scores, words, "tokens", "score", True, "Scores")
    short = figures.step_matrix(_walk("scores"), WORDS, "tokens", "score", True, "Scores")
    assert tall.data[0].texttemplate is None and short.data[0].texttemplate == "%{z:.2f}"
    assert tall.layout.height - short.layout.height == figures.ROW_PX * 7


def test_visitor_words_show_as_text_and_long_words_are_cut_unless_two_would_read_alike():
    labels = figures.token_labels(["<b>x</b>", "extraordinarily"])
    assert labels == ["0: &lt;b&gt;x&lt;/b&gt;", "1: extraordi…"]
    assert figures.vocabulary_labels(["extraordinarily", "short"]) == ["extraordi…", "short"]
    alike = ["extraordinarily", "extraordinary"]  # both would read "extraordi…": one column each, uncut
    assert figures.vocabulary_labels(alike) == alike


def test_the_difference_figure_is_signed_around_zero_with_tokens_on_both_axes():
    comparison = walkthrough.compare_shuffle(WORDS, walkthrough.shuffle_order(WORDS), "RoPE")
    figure = figures.weight_difference(comparison.difference, WORDS)
    heatmap = figure.data[0]
    assert list(heatmap.x) == list(heatmap.y) == figures.token_labels(WORDS)
    assert heatmap.zmax == pytest.approx(comparison.largest_difference) and heatmap.zmin == -heatmap.zmax
    assert heatmap.colorbar.title.text == "difference" and figure.layout.title.text
