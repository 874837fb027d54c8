"""The walkthrough's computation: hand-computed steps of a two-token sentence, the softmax rows, the √d_k scale,
RoPE's relative property, the shuffle that always moves a word, and the permutation property, which holds without
a position signal and fails with each scheme."""

import json
import math

import numpy as np
import pytest

from core.explain import walkthrough
from core.explain.encodings import sinusoidal
from core.explain.order_demo import MAX_TOKENS, token_vectors
from core.explain.walkthrough import (
    IDENTICAL_WITHIN,
    SCHEMES,
    STEP_NAMES,
    Layer,
    SentenceRefused,
    attention_steps,
    compare_shuffle,
    parse_sentence,
    shuffle_order,
    step_sentence,
    walk,
    walkthrough_data,
)
from core.limits import BudgetExceeded

IDENTITY = Layer(np.eye(2), np.eye(2), np.eye(2))
SENTENCES = ["the dog bites the man", "a b", "the quick brown fox jumps over the lazy dog", "x y z x y z w v u t s r"]


def test_two_tokens_without_positions_follow_the_hand_computed_steps():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    steps = attention_steps(x, "none", IDENTITY)
    a = 1 / math.sqrt(2)  # q·k = 1 on the diagonal, 0 off it, divided by √d_k = √2
    np.testing.assert_allclose(steps["scores"], [[a, 0.0], [0.0, a]], atol=1e-15)
    p = math.exp(a) / (math.exp(a) + 1)
    np.testing.assert_allclose(steps["weights"], [[p, 1 - p], [1 - p, p]], atol=1e-15)
    np.testing.assert_allclose(steps["outputs"], [[p, 1 - p], [1 - p, p]], atol=1e-15)  # values are x itself
    np.testing.assert_array_equal(steps["positions"], x)  # nothing added


def test_two_tokens_with_the_sinusoidal_encoding_add_sin_and_cos_of_the_position():
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    steps = attention_steps(x, "sinusoidal", IDENTITY)
    encoded = np.array([[1.0, 1.0], [math.sin(1.0), 1.0 + math.cos(1.0)]])  # PE(0) = (0, 1), PE(1) = (sin 1, cos 1)
    np.testing.assert_allclose(steps["positions"], encoded, atol=1e-15)
    scores = encoded @ encoded.T / math.sqrt(2)
    np.testing.assert_allclose(steps["scores"], scores, atol=1e-15)
    row = np.exp(scores[0]) / np.exp(scores[0]).sum()
    np.testing.assert_allclose(steps["weights"][0], row, atol=1e-15)


def test_rope_on_two_tokens_turns_the_second_query_and_key_by_one_radian_in_the_first_pair():
    x = np.array([[1.0, 0.0], [1.0, 0.0]])
    steps = attention_steps(x, "RoPE", IDENTITY)
    np.testing.assert_allclose(steps["queries"], [[1.0, 0.0], [math.cos(1.0), math.sin(1.0)]], atol=1e-15)
    np.testing.assert_array_equal(steps["positions"], x)  # RoPE adds nothing to the embeddings
    # q_0·k_1 = cos(1): the score sees the one-radian turn between the two positions
    assert steps["scores"][0, 1] == pytest.approx(math.cos(1.0) / math.sqrt(2), abs=1e-15)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("sentence", SENTENCES)
def test_every_weight_row_sums_to_one_and_the_scores_are_q_dot_k_over_root_d_k(scheme, sentence):
    m = walk(sentence.split(), scheme).matrices
    np.testing.assert_allclose(m["weights"].sum(axis=1), 1.0, atol=1e-12)
    assert (m["weights"] > 0).all()
    np.testing.assert_allclose(m["scores"] * math.sqrt(8), m["queries"] @ m["keys"].T, atol=1e-12)
    np.testing.assert_allclose(m["outputs"], m["weights"] @ m["values"], atol=1e-12)
    np.testing.assert_array_equal(m["tokens"].sum(axis=1), 1.0)
    assert list(m) == list(STEP_NAMES)


def test_rope_scores_of_one_repeated_word_depend_on_the_distance_alone():
    scores = walk(["same"] * 6, "RoPE").matrices["scores"]
    for offset in range(-5, 6):
        diagonal = np.diagonal(scores, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-12)
    assert np.ptp(scores[0]) > 0.1  # and the distance does matter


def test_the_positions_step_adds_what_each_scheme_adds():
    words = "the dog bites the man".split()
    x = token_vectors(words, 8)
    np.testing.assert_allclose(walk(words, "sinusoidal").matrices["positions"], x + sinusoidal(5, 8), atol=1e-15)
    for scheme in ("RoPE", "none"):
        np.testing.assert_array_equal(walk(words, scheme).matrices["positions"], x)
    learned = walk(words, "learned (random init)").matrices["positions"] - x
    assert np.abs(learned).max() <= 2.0 + 1e-12  # truncated at 2 standard deviations, at the words' scale of 1
    assert 0.5 < learned.std() < 1.0  # a unit normal cut at ±2σ has std 0.88
    longer = walk(words + ["again"], "learned (random init)").matrices["positions"][:5] - x
    np.testing.assert_allclose(longer, learned, atol=1e-15)  # a position's row does not depend on the length


@pytest.mark.parametrize("sentence", SENTENCES)
def test_without_a_position_signal_the_shuffled_weights_are_the_original_weights_permuted(sentence):
    words = sentence.split()
    for seed in range(4):
        order = shuffle_order(words, seed)
        comparison = compare_shuffle(words, order, "none")
        assert comparison.largest_difference <= IDENTICAL_WITHIN and comparison.identical
        original = comparison.original.matrices["weights"]
        np.testing.assert_allclose(comparison.shuffled.matrices["weights"], original[np.ix_(order, order)], atol=1e-12)


@pytest.mark.parametrize("scheme", ["sinusoidal", "learned (random init)", "RoPE"])
@pytest.mark.parametrize("sentence", SENTENCES)
def test_with_a_position_signal_the_shuffle_changes_the_weights(scheme, sentence):
    comparison = compare_shuffle(sentence.split(), shuffle_order(sentence.split()), scheme)
    assert comparison.largest_difference > 1e-3 and not comparison.identical
    assert comparison.largest_difference == pytest.approx(np.abs(comparison.difference).max())


def test_no_shuffle_changes_nothing_under_any_scheme():
    words = "the dog bites the man".split()
    for scheme in SCHEMES:
        assert compare_shuffle(words, range(5), scheme).largest_difference == 0.0


def test_the_shuffle_always_changes_a_sentence_of_two_different_words():
    for sentence in ["a b", "a a b", "a b a b", "x x x x y"]:
        words = sentence.split()
        for seed in range(20):
            order = shuffle_order(words, seed)
            assert sorted(order) == list(range(len(words)))
            assert [words[i] for i in order] != words, (sentence, seed)
    assert shuffle_order(["a", "b"], 0).tolist() == [1, 0]


def test_the_sentence_is_bounded_and_one_word_is_refused_with_one_line():
    assert parse_sentence("the dog bites") == (["the", "dog", "bites"], 0)
    assert parse_sentence(" ".join("w" + str(i) for i in range(15))).left_off == 15 - MAX_TOKENS
    for text in ["alone", "", "   "]:
        with pytest.raises(SentenceRefused, match="Type at least two words"):
            parse_sentence(text)
    with pytest.raises(BudgetExceeded, match="over the limit of 500 characters"):
        parse_sentence("x " * 300)
    with pytest.raises(ValueError, match="permutation"):
        compare_shuffle(["a", "b"], [0, 0], "none")
    with pytest.raises(ValueError, match="scheme"):
        walk(["a", "b"], "ALiBi")
    with pytest.raises(ValueError, match="1 to 12 words, got 13"):
        walk(["w"] * 13, "none")


def test_every_step_has_one_plain_sentence_and_rope_explains_its_turn():
    for scheme in SCHEMES:
        sentences = [step_sentence(step, scheme) for step in STEP_NAMES]
        assert all(s.endswith(".") and "\n" not in s for s in sentences)
    assert "turns each pair" in step_sentence("queries", "RoPE")
    assert "turns each pair" not in step_sentence("queries", "sinusoidal")
    assert step_sentence("positions", "none") != step_sentence("positions", "sinusoidal")


def test_the_data_for_the_browser_holds_every_view_as_plain_json_and_matches_the_computation():
    words = "the dog bites the man".split()
    data = json.loads(json.dumps(walkthrough_data(words)))  # JSON-able as it is
    order = shuffle_order(words)
    assert data["order"] == order.tolist() and data["words"]["shuffled"] == [words[i] for i in order]
    assert [step["name"] for step in data["steps"]] == list(STEP_NAMES)
    assert set(data["schemes"]) == set(SCHEMES) and data["vocabulary"] == ["bites", "dog", "man", "the"]
    for scheme in SCHEMES:
        comparison = compare_shuffle(words, order, scheme)
        view = data["schemes"][scheme]
        for variant in ("original", "shuffled"):
            computed = getattr(comparison, variant).matrices
            for name in STEP_NAMES:
                shown = (data["shared"] if name in walkthrough.SHARED_STEPS else view)[variant][name]
                np.testing.assert_allclose(shown, computed[name], rtol=1e-11, atol=1e-12)
        assert view["identical"] is (scheme == "none")
        assert view["largest_difference"] == comparison.largest_difference
        assert view["sentences"]["keys"] == step_sentence("keys", scheme)
