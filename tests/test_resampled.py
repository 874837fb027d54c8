"""Intervals for repeated K-fold studies (core.lab.stats.resampled): hand-computed cases, then simulated studies
whose folds share training data and retest the same windows (core.lab.stats.simulation), at a known truth."""

import math

import numpy as np
import pytest
from scipy import stats

from core.lab.stats.resampled import error_rate_ratio, independent_interval, leave_one_fold_out, resampled_interval
from core.lab.stats.simulation import OverlapComponents, simulate_overlapping_folds, training_effects

# 2 repeats x 2 folds x 2 seeds; fold means 1, 3, 5, 7 (repeat-major): diff 4, sample variance 20/3
CELLS = np.array([[[0.0, 2.0], [3.0, 3.0]], [[4.0, 6.0], [7.0, 7.0]]])
T975 = {2: 4.302652729911275, 3: 3.182446305284263}


def test_the_corrected_resampled_t_of_a_hand_made_table():
    interval = resampled_interval(CELLS, test_train_ratio=0.25)
    se = math.sqrt((1 / 4 + 0.25) * 20 / 3)
    assert (interval.diff, interval.df, interval.repeats, interval.folds, interval.seeds) == (4.0, 3, 2, 2, 2)
    assert interval.se == pytest.approx(se)
    assert interval.ci(0.95) == pytest.approx([4 - T975[3] * se, 4 + T975[3] * se])
    assert interval.method.startswith("corrected resampled t")
    # a ratio of 0 is the plain t of the fold means: the independent interval's SE, sqrt(20/3 / 4)
    assert resampled_interval(CELLS, 0.0).se == pytest.approx(math.sqrt(5 / 3))


def test_the_independent_interval_takes_all_repeats_fold_means_as_independent():
    interval = independent_interval(CELLS)
    assert (interval.diff, interval.df, interval.repeats) == (4.0, 3, 2)
    assert interval.se == pytest.approx(math.sqrt(5 / 3)) and "independent" in interval.method


def test_bad_tables_and_ratios_are_refused_in_words():
    with pytest.raises(ValueError, match="repeats, folds, seeds"):
        resampled_interval(CELLS[0], 0.25)
    with pytest.raises(ValueError, match="test_train_ratio"):
        resampled_interval(CELLS, -0.1)
    assert resampled_interval(CELLS[:1, :1], 0.25).ci(0.95) is None  # one fold mean: no spread to measure


def test_leaving_one_fold_out_gives_the_interval_of_the_rest():
    rows = leave_one_fold_out(CELLS, test_train_ratio=0.25)
    assert [(row["repeat"], row["fold"]) for row in rows] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [row["diff"] for row in rows] == pytest.approx([5.0, 13 / 3, 11 / 3, 3.0])
    # without the first fold mean: 3, 5, 7 -> variance 4, SE sqrt((1/3 + 1/4) * 4), t on 2 df
    half = T975[2] * math.sqrt((1 / 3 + 0.25) * 4)
    assert rows[0]["ci95"] == pytest.approx([5 - half, 5 + half])
    assert rows[3]["ci95"] == pytest.approx([3 - half, 3 + half])  # 1, 3, 5: the same spread
    # without the fold mean 3: 1, 5, 7 -> mean 13/3, variance 28/3
    half = T975[2] * math.sqrt((1 / 3 + 0.25) * 28 / 3)
    assert rows[1]["ci95"] == pytest.approx([13 / 3 - half, 13 / 3 + half])


def test_the_error_rate_ratio_by_hand():
    assert error_rate_ratio(0.98, 0.962) == pytest.approx(1.9)  # 3.8 % of errors against 2 %
    assert error_rate_ratio(0.90, 1.0) == 0.0
    assert error_rate_ratio(1.0, 0.9) is None  # a makes no error: no ratio
    with pytest.raises(ValueError, match="fraction"):
        error_rate_ratio(98.0, 96.2)


# --- simulated studies whose folds share training data -------------------------------------------------------


def test_training_effects_correlate_by_the_share_of_training_blocks():
    # K = 5, one block a fold, validation on the next: fold 0 trains on {2, 3, 4}, fold 1 on {0, 3, 4} (2 of 3
    # shared), fold 2 on {0, 1, 4} (1 of 3 shared with fold 0)
    rng = np.random.default_rng(0)
    assignment = np.broadcast_to(np.arange(5), (20000, 1, 5))
    effects = training_effects(rng, assignment, folds=5, validation=True, count=1)[0, :, 0]  # (studies, K)
    corr = np.corrcoef(effects.T)
    assert effects.std(axis=0) == pytest.approx(np.ones(5), abs=0.03)
    assert corr[0, 1] == pytest.approx(2 / 3, abs=0.03) and corr[0, 2] == pytest.approx(1 / 3, abs=0.03)


def test_the_simulated_truth_is_exact_and_the_mean_difference_finds_it():
    parts = OverlapComponents()
    assert parts.true_difference(parts.shift_for(1.0)) == pytest.approx(1.0, abs=1e-9)
    sim = simulate_overlapping_folds(np.random.default_rng(1), 1000, 1, 5, 3, 120, 1.0, parts)
    assert sim["diff"].shape == (1000, 1, 5, 3)
    # 1,000 studies: a study's mean difference has sd 1.8 points, so the Monte-Carlo SE is 0.06 (measured 1.06)
    assert sim["diff"].mean() == pytest.approx(1.0, abs=0.25)
    assert sim["a"].mean() == pytest.approx(100 * parts.accuracy, abs=0.3)


STUDIES = 1000
BAND = [bound / STUDIES for bound in stats.binom.interval(0.99, STUDIES, 0.95)]  # [0.931, 0.967]: P = 0.9929


def coverage(tables: np.ndarray, interval) -> float:
    """Share of the tables whose 95 % CI holds the true difference 0."""
    cis = np.array([interval(table).ci(0.95) for table in tables])
    return float(np.mean((cis[:, 0] <= 0) & (0 <= cis[:, 1])))


def test_the_v2_corrected_interval_is_over_wide_and_the_independent_one_under_covers():
    # N = 1,000 studies at a true 0, R = 3 repeats x K = 5 folds x S = 3 seeds, 120 test windows a fold, time-cv
    # style (a validation block held out, so n_test / n_train = 1/3). A method that truly covers 95 % lands in
    # BAND = [0.931, 0.967] with probability >= 99 % (binomial, exact: 0.9929). Neither v2 interval does:
    # measured, the corrected resampled t 0.999, ABOVE the band (over-wide: its factor 1/J + n_test/n_train
    # multiplies the seed noise too, which is independent across folds; the protocol-3 interval replaces it,
    # tests/test_variance_components.py), the independent-folds interval 0.830, BELOW it (the retested windows
    # and shared training blocks it ignores). Both ends are asserted: what is true of v2 is that it is too wide.
    assert BAND == [0.931, 0.967]
    sim = simulate_overlapping_folds(np.random.default_rng(2026), STUDIES, 3, 5, 3, 120, 0.0, OverlapComponents())
    corrected = coverage(sim["diff"], lambda table: resampled_interval(table, test_train_ratio=1 / 3))
    independent = coverage(sim["diff"], independent_interval)
    assert BAND[1] < corrected <= 1.0
    assert independent < BAND[0]
