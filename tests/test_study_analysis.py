"""The study's statistics: hand-computed cases, then simulated studies with a known truth (per-window
correctness with seed, fold and window components, window difficulty shared by both models): coverage,
type-I error, power and equivalence, at a fixed RNG seed."""

import math

import numpy as np
import pytest
from scipy import stats

from core.lab.stats import words
from core.lab.stats.intervals import (
    Components as IntervalParts,
)
from core.lab.stats.intervals import (
    Interval,
    bonferroni_confidence,
    holm,
    paired_interval,
    verdict,
)
from core.lab.stats.simulation import Components, simulate_differences
from core.lab.stats.words import MODEL_ROLES, verdict_phrase

CWRU_SIZED = Components()  # accuracy near 98 %, a run moving about 2 points with its seed
ROOM_TO_IMPROVE = Components(accuracy=0.90, window_b=0.15, fold=0.05, run=0.1)  # A at 90 %: +5 points can exist
STUDIES = 300


def test_the_interval_of_a_hand_made_table():
    # fold means 1, 3, 5 (over two seeds each): diff 3, sd of fold means 2, SE 2 / sqrt(3), 2 df
    d = np.array([[0.0, 2.0], [3.0, 3.0], [4.0, 6.0]])
    interval = paired_interval(d)
    se = 2 / math.sqrt(3)
    assert (interval.diff, interval.df) == (3.0, 2) and interval.se == pytest.approx(se)
    assert interval.ci(0.95) == pytest.approx([3 - 4.302652729911275 * se, 3 + 4.302652729911275 * se])
    assert interval.p == pytest.approx(2 * stats.t.sf(3 / se, 2))
    assert interval.mde80 == pytest.approx((stats.t.ppf(0.975, 2) + stats.t.ppf(0.8, 2)) * se)
    # seed part: the within-fold variances 2, 0, 2 average 4/3; the fold part is what remains of 4 beyond 4/3/2
    assert interval.components.seed_sd == pytest.approx(math.sqrt(4 / 3))
    assert interval.components.fold_sd == pytest.approx(math.sqrt(4 - 2 / 3))
    assert interval.components.standard_error(3, 2) == pytest.approx(se)


def test_one_fold_counts_the_seeds_alone_and_one_run_gives_no_interval():
    interval = paired_interval(np.array([[1.0, 2.0, 3.0]]))
    assert (interval.diff, interval.df, interval.se) == (2.0, 2, pytest.approx(1 / math.sqrt(3)))
    single = paired_interval(np.array([[1.5]]))
    assert single.ci(0.95) is None and single.mde80 is None and verdict(single, 2.0) == "inconclusive"
    with pytest.raises(ValueError, match="complete"):
        paired_interval(np.array([[1.0, np.nan]]))


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ([[0.1, -0.1], [0.2, 0.0], [-0.1, 0.1]], "equivalent"),  # 90 % CI well inside ±2
        ([[3.0, 3.2], [2.9, 3.1], [3.1, 3.0]], "better"),  # clearly above 0, outside the margin
        ([[-3.0, -3.2], [-2.9, -3.1], [-3.1, -3.0]], "worse"),
        ([[5.0, -4.0], [-6.0, 7.0], [2.0, -3.0]], "inconclusive"),
    ],
)
def test_the_verdict_rules_in_their_order(table, expected):
    assert verdict(paired_interval(np.array(table)), margin=2.0) == expected


def test_lower_is_better_turns_better_and_worse_around():
    lower_loss = paired_interval(np.array([[-3.0, -3.2], [-2.9, -3.1], [-3.1, -3.0]]))
    assert verdict(lower_loss, 2.0, lower_is_better=True) == "better"


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def sentence(a, b, interval, word, population, error_ratio=None):
    """The sentence words.verdict_sentence writes for the comparison `interval` gives, as compare() stores it."""
    stored = {"a": a, "b": b, "metric": "accuracy", "diff": interval.diff, "ci95": interval.ci(0.95)}
    stored.update(ci90=interval.ci(0.90), margin=2.0, mde80=interval.mde80, verdict=word, error_rate_ratio=error_ratio)
    design = words.Design(population, interval.seeds, interval.folds, interval.repeats, interval.method)
    return words.verdict_sentence(stored, design)


def test_sentences_name_the_design_and_the_population():
    inconclusive = paired_interval(np.array([[5.0, -4.0], [-6.0, 7.0], [2.0, -3.0]]))
    text = sentence("A", "B", inconclusive, "inconclusive", "930 test windows of these ten recordings")
    assert text.startswith("B (embedding + sinusoidal encoding) vs A (raw patches, no encoding): inconclusive, ")
    assert f"this study could only detect differences of {inconclusive.mde80:.1f} points or more" in text
    assert text.endswith(
        "; 2 seeds × 3 folds, 930 test windows of these ten recordings; fold means taken as independent)."
    )
    one_split = paired_interval(np.array([[1.0, 2.0, 3.0]]))
    assert "3 seeds on one split, x; the test windows are fixed, so only training noise is counted" in sentence(
        "A", "B", one_split, "inconclusive", "x"
    )


def hand_made(diff: float, se: float) -> Interval:
    """An interval on 10,000 df (a normal reference): 95 % CI diff ± 1.960 se, 90 % CI diff ± 1.645 se."""
    return Interval(diff, se, 10_000, 5, 3, IntervalParts(0.0, 0.0), method="corrected resampled t, 3 x 5 folds")


@pytest.mark.parametrize(
    ("diff", "se", "value", "said"),
    [
        (0.5, 0.5, "equivalent", "equivalent"),  # 90 % CI -0.32 to +1.32, inside ±2
        (5.0, 1.0, "better", "better by more than the margin"),  # 95 % CI +3.04 to +6.96, all above +2
        (2.5, 1.0, "better", "better, possibly by less than the margin"),  # 95 % CI +0.54 to +4.46 crosses +2
        (-5.0, 1.0, "worse", "worse by more than the margin"),
        (-2.5, 1.0, "worse", "worse, possibly by less than the margin"),
        (1.0, 2.0, "inconclusive", "inconclusive"),  # 95 % CI -2.92 to +4.92 holds 0; 90 % CI leaves ±2
    ],
)
def test_each_verdict_rule_of_the_issue_on_a_hand_made_interval(diff, se, value, said):
    interval = hand_made(diff, se)
    assert verdict(interval, 2.0) == value and verdict_phrase(value, interval.ci(0.95), 2.0) == said


def test_lower_is_better_keeps_the_margin_nuance():
    lower = [hand_made(-5.0, 1.0), hand_made(2.5, 1.0)]  # a loss falls by 5 (better) or rises by 2.5 (worse)
    words_of = [verdict_phrase(verdict(i, 2.0, lower_is_better=True), i.ci(0.95), 2.0) for i in lower]
    assert words_of == ["better by more than the margin", "worse, possibly by less than the margin"]


def test_the_study_sentence_names_the_models_the_error_ratio_and_the_interval():
    interval = hand_made(-2.5, 1.0)
    text = sentence("B-noPE", "B", interval, "worse", "1,090 test windows", error_ratio=1.94)
    assert text == (
        "B (embedding + sinusoidal encoding) vs B-noPE (embedding, no encoding): B is worse, possibly by less than "
        "the 2-point margin, -2.5 points (95 % CI -4.5 to -0.5; B makes 1.9x B-noPE's errors; 3 seeds × 5 folds, "
        "1,090 test windows; corrected resampled t, 3 x 5 folds)."
    )
    beyond = sentence("A", "B", hand_made(5.0, 1.0), "better", "x")
    assert "B is better by more than the 2-point margin, +5.0 points (95 % CI +3.0 to +7.0;" in beyond
    unsure = sentence("A", "CNN", hand_made(1.0, 2.0), "inconclusive", "x")
    mde = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * 2.0  # 5.6 points at 10,000 df
    assert unsure.startswith("CNN (1-D CNN baseline) vs A (raw patches, no encoding): inconclusive, +1.0 points")
    assert f"this study could only detect differences of {mde:.1f} points or more" in unsure
    assert set(MODEL_ROLES) == {"A", "A+PE", "B-noPE", "B", "B-learned", "B-concat", "CNN"}


def test_bonferroni_confidence_by_hand():
    assert bonferroni_confidence(0.95, 5) == pytest.approx(0.99)
    assert bonferroni_confidence(0.90, 1) == pytest.approx(0.90)
    with pytest.raises(ValueError, match="at least 1"):
        bonferroni_confidence(0.95, 0)


# --- simulated studies ---------------------------------------------------------------------------------------


def simulate(
    seed: int, folds: int, seeds: int, windows: int, points: float, parts: Components, studies: int = STUDIES
) -> tuple[float, float, dict[str, float], float]:
    """(share of 95 % CIs holding the truth, share with the CI above 0, verdict shares at margin 2, median mde80)."""
    tables = simulate_differences(np.random.default_rng(seed), studies, folds, seeds, windows, points, parts)
    intervals = [paired_interval(table) for table in tables]
    covered = np.mean([iv.ci(0.95)[0] <= points <= iv.ci(0.95)[1] for iv in intervals])
    above = np.mean([iv.ci(0.95)[0] > 0 for iv in intervals])
    words = [verdict(iv, 2.0) for iv in intervals]
    shares = {word: words.count(word) / studies for word in set(words)}
    return covered, above, shares, float(np.median([iv.mde80 for iv in intervals]))


def test_the_truth_of_a_simulation_is_exact():
    for parts in (CWRU_SIZED, ROOM_TO_IMPROVE):
        assert parts.true_difference(parts.shift_for(1.5)) == pytest.approx(1.5, abs=1e-9)
    assert CWRU_SIZED.true_difference(0.0) < 0  # b's window part alone costs it accuracy at the same shift


def test_a_small_design_covers_the_truth_and_rarely_calls_a_null_difference():
    covered, _, shares, _ = simulate(1, folds=3, seeds=4, windows=300, points=0.0, parts=CWRU_SIZED)
    assert 0.91 <= covered <= 0.985
    assert shares.get("better", 0) + shares.get("worse", 0) <= 0.09


def test_coverage_holds_when_the_window_component_dominates():
    parts = Components(window_b=1.5, run=0.1, fold=0.05)
    covered, _, shares, _ = simulate(2, folds=3, seeds=4, windows=300, points=0.0, parts=parts)
    assert 0.91 <= covered <= 0.985 and shares.get("better", 0) + shares.get("worse", 0) <= 0.09


def test_the_shipped_design_finds_five_points_and_calls_a_null_difference_equivalent():
    _, _, shares, _ = simulate(3, folds=5, seeds=6, windows=225, points=5.0, parts=ROOM_TO_IMPROVE)
    assert shares.get("better", 0) >= 0.90
    # 600 studies: the share sits near 0.83, and 300 would leave it within two Monte-Carlo errors of the bound
    _, _, shares, _ = simulate(4, folds=5, seeds=6, windows=225, points=0.0, parts=CWRU_SIZED, studies=600)
    assert shares.get("equivalent", 0) >= 0.80


def test_power_at_the_reported_detectable_difference_is_about_80_percent():
    _, _, _, mde80 = simulate(5, folds=5, seeds=6, windows=225, points=0.0, parts=ROOM_TO_IMPROVE)
    _, power, _, _ = simulate(6, folds=5, seeds=6, windows=225, points=mde80, parts=ROOM_TO_IMPROVE)
    assert 0.68 <= power <= 0.92


def test_an_error_ratio_that_would_print_as_zero_says_what_it_is():
    from core.lab.stats.words import error_words

    assert error_words("B-noPE", "B", 0.0) == "B makes no errors"
    assert error_words("A", "A+PE", 0.004) == "A+PE makes under 0.05x A's errors"
    assert error_words("A", "B", 1.94) == "B makes 1.9x A's errors"
