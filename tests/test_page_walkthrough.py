"""AppTest of pages/walkthrough.py: the defaults, Previous / Next through every step with the matrix of each, the
position toggle, the shuffle and the scheme, a bad sentence, and the page's link keys."""

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import walkthrough
from core.explain.walkthrough import DEFAULT_SENTENCE, STEPS, compare_shuffle, shuffle_order, step_sentence, walk
from tests import apptest_utils
from tests.apptest_utils import as_array, as_read, errors, figure_traces

PAGE = "pages/walkthrough.py"
WORDS = DEFAULT_SENTENCE.split()


def run_page(**query) -> AppTest:
    return apptest_utils.run_page(PAGE, query)


def shown_matrix(at: AppTest, name: str = "walkthrough_step") -> np.ndarray:
    return as_array(figure_traces(at, name)[0]["z"])


def texts(at: AppTest) -> list[str]:
    return [as_read(m.value) for m in at.markdown]


def test_the_page_opens_with_its_idea_in_plain_words_at_the_first_step_as_typed():
    at = run_page()
    assert at.title[0].value == "One sentence through attention"
    assert texts(at)[0].startswith("Follow a short sentence through one attention layer")
    assert at.text_input(key="words").value == DEFAULT_SENTENCE
    assert at.toggle(key="pe").value is True and at.toggle(key="shuffle").value is False
    assert at.radio(key="scheme").value == "sinusoidal" and at.select_slider(key="step").value == "tokens"
    assert at.subheader[0].value == "Step 1 of 9: Tokens"
    assert step_sentence("tokens", "sinusoidal") in texts(at)
    np.testing.assert_array_equal(shown_matrix(at), walk(WORDS, "sinusoidal").matrices["tokens"])
    assert at.button(key="previous").disabled and not at.button(key="next").disabled
    assert not at.metric and not at.error and not at.info  # no shuffle, no comparison
    assert len(at.get("plotly_chart")) == 1 and not dict(at.query_params)


def test_next_walks_through_every_step_showing_its_matrix_and_previous_walks_back():
    at = run_page()
    expected = walk(WORDS, "sinusoidal").matrices
    for number, step in enumerate(STEPS, start=1):
        assert at.subheader[0].value == f"Step {number} of {len(STEPS)}: {step.title}"
        assert at.select_slider(key="step").value == step.name
        np.testing.assert_allclose(shown_matrix(at), expected[step.name], rtol=1e-12, atol=1e-15)
        assert step_sentence(step.name, "sinusoidal") in texts(at)
        if number < len(STEPS):
            at.button(key="next").click().run()
            assert not at.exception
            assert at.query_params["step"] == STEPS[number].name  # the link follows the step
    assert at.button(key="next").disabled and not at.button(key="previous").disabled
    for number in range(len(STEPS) - 1, 0, -1):
        at.button(key="previous").click().run()
        assert at.subheader[0].value.startswith(f"Step {number} of")
    assert at.button(key="previous").disabled


def test_the_step_selector_jumps_to_a_step_and_a_link_opens_it():
    at = run_page()
    at.select_slider(key="step").set_value("scores").run()
    assert at.subheader[0].value == "Step 6 of 9: Scores q·k/√d_k"
    np.testing.assert_allclose(shown_matrix(at), walk(WORDS, "sinusoidal").matrices["scores"], rtol=1e-12)
    at = run_page(step="outputs")
    assert at.subheader[0].value == "Step 9 of 9: Outputs" and at.button(key="next").disabled


def test_the_positional_encoding_toggle_off_adds_nothing_and_waits_the_scheme_choice():
    at = run_page(step="positions")
    with_encoding = shown_matrix(at)
    at.toggle(key="pe").set_value(False).run()
    assert at.radio(key="scheme").disabled
    np.testing.assert_array_equal(shown_matrix(at), walk(WORDS, "none").matrices["embeddings"])
    assert not np.allclose(with_encoding, shown_matrix(at))
    assert step_sentence("positions", "none") in texts(at)


def test_rope_turns_the_queries_and_says_so():
    at = run_page(step="queries")
    at.radio(key="scheme").set_value("RoPE").run()
    np.testing.assert_allclose(shown_matrix(at), walk(WORDS, "RoPE").matrices["queries"], rtol=1e-12)
    assert step_sentence("queries", "RoPE") in texts(at)


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned (random init)", "RoPE"])
def test_with_a_position_signal_the_shuffle_shows_the_difference_heatmap_and_its_largest_value(scheme):
    at = run_page(step="weights", scheme=scheme, shuffle="true")
    order = shuffle_order(WORDS)
    comparison = compare_shuffle(WORDS, order, scheme)
    assert f"Shuffled: {' '.join(WORDS[i] for i in order)}" in [t.replace("**", "") for t in texts(at)]
    np.testing.assert_allclose(shown_matrix(at), comparison.shuffled.matrices["weights"], rtol=1e-12)
    np.testing.assert_allclose(shown_matrix(at, "walkthrough_difference"), comparison.difference, atol=1e-15)
    (verdict,) = [text for text in texts(at) if text.startswith("**Not just moved.**")]
    largest = float(verdict.split("by up to ")[1].split(":")[0])
    assert largest == pytest.approx(comparison.largest_difference, abs=5e-4) and largest > 0.01
    assert not any("Identical up to rounding" in text for text in texts(at))


@pytest.mark.parametrize("query", [{"scheme": "none"}, {"pe": "false"}])
def test_without_a_position_signal_the_shuffle_is_identical_up_to_rounding(query):
    at = run_page(step="weights", shuffle="true", **query)
    assert any(text.startswith("**Identical up to rounding.**") for text in texts(at))
    # the difference is rounding noise: its heatmap stays white (the scale reaches at least ±0.05)
    difference = figure_traces(at, "walkthrough_difference")[0]
    assert np.abs(as_array(difference["z"])).max() <= 1e-12 and difference["zmax"] == pytest.approx(0.05)


def test_a_sentence_of_one_repeated_word_says_no_shuffle_can_change_it():
    at = run_page(words="same same same", shuffle="true")
    assert "Every word is the same word, so no shuffle can change this sentence." in texts(at)
    assert len(at.get("plotly_chart")) == 1  # nothing moved: no difference to draw


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("alone", "Sentence: Type at least two words: attention mixes words, so one word shows nothing."),
        ("x " * 300, "Sentence: The token text is 600 characters, over the limit of 500 characters."),
    ],
)
def test_a_bad_sentence_gives_one_line_and_the_page_goes_on_with_the_default(text, line):
    at = run_page()
    at.text_input(key="words").input(text).run()
    assert not at.exception
    assert len(errors(at)) == 1 and errors(at)[0].startswith(line)
    assert errors(at)[0].endswith(f'Showing "{DEFAULT_SENTENCE}" instead.')
    np.testing.assert_array_equal(shown_matrix(at), walk(WORDS, "sinusoidal").matrices["tokens"])


def test_words_past_the_twelfth_are_left_off_with_a_caption():
    at = run_page(words=" ".join(f"w{i}" for i in range(15)))
    assert [c.value for c in at.caption][0] == f"Only the first {walkthrough.MAX_TOKENS} words are used (3 left off)."
    assert shown_matrix(at).shape == (12, 12)


def test_visitor_words_written_as_markup_show_as_text_on_the_page_and_in_the_figure():
    at = run_page(words="[x](http://e.vil) <b>y</b>", shuffle="true")
    shuffled = next(m.value for m in at.markdown if m.value.startswith("Shuffled:"))
    assert "](http" not in shuffled and "<b>" not in shuffled
    labels = figure_traces(at, "walkthrough_step")[0]["y"]
    assert labels == ["0: &lt;b&gt;y&lt;/b&gt;", "1: [x](http:…"]  # shuffled: the second word first


def test_a_link_restores_every_control_and_unusable_values_are_named_in_one_line():
    at = run_page(words="a b c", step="keys", pe="false", shuffle="true", scheme="RoPE")
    assert at.text_input(key="words").value == "a b c" and at.select_slider(key="step").value == "keys"
    assert (at.toggle(key="pe").value, at.toggle(key="shuffle").value) == (False, True)
    assert at.radio(key="scheme").value == "RoPE" and not at.info
    at = run_page(step="nine", scheme="ALiBi", d="64")
    assert at.select_slider(key="step").value == "tokens" and at.radio(key="scheme").value == "sinusoidal"
    assert [info.value for info in at.info] == [
        "Link values step\\=nine, scheme\\=ALiBi were not usable here and were reset to their defaults. "
        "Link value d\\=64 is not a setting of this page and was removed."
    ]
