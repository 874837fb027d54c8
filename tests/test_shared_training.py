"""Seeds as the unit where every fold shares one training set (core.lab.stats.shared_training): each seed's
difference pooled over every test window, a t interval over seeds, by hand and on simulated studies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.lab.stats.shared_training import (
    SeedStudyParts,
    pooled_seed_differences,
    seed_interval,
    seed_leave_one_out,
    simulate_seed_coverage,
    simulated_studies,
)

# two test loads (100 and 300 windows), three seeds: d[fold, seed] in points
CELLS = np.array([[[1.0, 2.0, 3.0], [5.0, 2.0, 8.0]]])
WEIGHTS = [100, 300]


def test_a_seeds_difference_is_pooled_over_every_test_window_and_the_t_runs_over_seeds():
    pooled = [(100 * 1 + 300 * 5) / 400, (100 * 2 + 300 * 2) / 400, (100 * 3 + 300 * 8) / 400]  # 4, 2, 6.75
    assert pooled_seed_differences(CELLS, WEIGHTS) == pytest.approx(pooled)
    interval = seed_interval(CELLS, WEIGHTS)
    sd = math.sqrt(((4 - 4.25) ** 2 + (2 - 4.25) ** 2 + (6.75 - 4.25) ** 2) / 2)  # 2.3848
    assert interval.diff == pytest.approx(4.25) and interval.df == 2 and interval.se == pytest.approx(sd / math.sqrt(3))
    half = 4.302653 * sd / math.sqrt(3)  # t(0.975, 2 df)
    assert interval.ci(0.95) == pytest.approx([4.25 - half, 4.25 + half], abs=1e-5)
    assert interval.mde80 == pytest.approx((4.302653 + 1.060660) * sd / math.sqrt(3), abs=1e-5)
    assert (interval.folds, interval.seeds) == (2, 3) and "conditional on these test windows" in interval.method
    # the unweighted mean over cells (3.5) is not what a seed's windows say
    assert CELLS.mean() == pytest.approx(3.5)


def test_leaving_a_test_load_out_pools_the_others_and_one_seed_gives_no_interval():
    first, second = seed_leave_one_out(CELLS, WEIGHTS)
    # fold 0 left out: fold 1 alone, 5, 2, 8 (sd 3); fold 1 left out: 1, 2, 3 (sd 1)
    assert (first["repeat"], first["fold"], first["diff"]) == (0, 0, pytest.approx(5.0))
    assert first["ci95"] == pytest.approx([5 - 4.302653 * math.sqrt(3), 5 + 4.302653 * math.sqrt(3)], abs=1e-5)
    assert second["diff"] == pytest.approx(2.0) and second["ci95"][1] == pytest.approx(2 + 4.302653 / math.sqrt(3))
    assert seed_leave_one_out(CELLS, WEIGHTS, bound=8.0)[0]["ci95"][1] == 8.0
    alone = seed_leave_one_out(CELLS[:, :1], [100])
    assert alone == [{"repeat": 0, "fold": 0, "diff": None, "ci95": None}]
    one_seed = seed_interval(CELLS[:, :, :1], WEIGHTS)
    assert one_seed.se is None and one_seed.ci(0.95) is None and one_seed.diff == pytest.approx(4.0)


def test_a_table_with_a_weight_per_fold_missing_or_not_finite_is_refused():
    with pytest.raises(ValueError, match="one positive number"):
        seed_interval(CELLS, [100])
    with pytest.raises(ValueError, match="one positive number"):
        seed_interval(CELLS, [100, 0])
    with pytest.raises(ValueError, match="finite numbers"):
        seed_interval(np.array([[[1.0, np.nan]]]), [10])


CEILING = SeedStudyParts(accuracy=0.985, loads=(1.0, 0.0, -0.5, -1.0), windows=200, seed=0.6, seed_load=0.3, noise=0.2)


@pytest.mark.parametrize(
    ("parts", "difference"),
    [(SeedStudyParts(), 0.0), (SeedStudyParts(), 5.0), (CEILING, 2.0)],
    ids=["three loads, no difference", "three loads, 5 points", "four loads near the ceiling, 2 points"],
)
def test_the_seed_interval_covers_the_seed_population_mean_inside_the_band_at_both_ends(parts, difference):
    """Conditional on each simulated study's test windows (drawn once per study and then fixed), with the seeds
    the only noise: the truth is the mean pooled difference over the population of seeds on those windows."""
    result = simulate_seed_coverage(parts, difference, seeds=5, studies=2000, rng_seed=1)
    assert result["n"] >= 1000
    assert 0.931 <= result["coverage"] <= 0.967, result


def test_the_simulated_truth_is_the_mean_over_many_seeds_on_the_same_windows():
    cells, truth = simulated_studies(SeedStudyParts(), 5.0, seeds=4000, studies=1, rng=np.random.default_rng(3))
    pooled = pooled_seed_differences(cells[0][None], np.full(3, 300))
    # 4,000 seeds: the mean's standard error is sd / 63
    assert pooled.mean() == pytest.approx(truth[0], abs=3 * pooled.std() / math.sqrt(4000))
    assert 3.0 < truth[0] < 7.0  # about the 5 points asked for
