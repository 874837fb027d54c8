"""The pipeline's regression guard: fixed tiny plans give the stored results JSON.

The fixtures under tests/data/ were written by tests/data/make_fixtures.py. On the machine whose fingerprint
the file stores (core.fingerprint), the JSON must be the same bit for bit, except the fields that measure
time (and schema_version). On any other machine that test skips and names what differs, and the tolerance
test beside it still runs: the same plan, the same structure and settings (every float of the config, such as
the normalisation's mean, within RECOMPUTED_RELATIVE: numpy sums in another order on another CPU), training
losses equal to TRAIN_LOSS_RELATIVE, validation losses to VAL_LOSS_ABSOLUTE, a run's accuracy and recall
within RATE_ABSOLUTE and its macro precision and F1 within MACRO_RATE_ABSOLUTE (measured with MKL's compatible
code path forced, with torch's AVX2 and default kernels, and on an AVX2 machine: the training losses moved by at
most 1e-7, validation losses by 2e-3, a run's accuracy by 3 of 90 windows).
"""

import functools
import json

import pytest

from core.lab.study.migration import migrate
from tests.data import make_fixtures
from tests.reproducibility import assert_same_json_within, skip_unless_same_machine

TRAIN_LOSS_RELATIVE = 1e-4
VAL_LOSS_ABSOLUTE = 0.02
RATE_ABSOLUTE = 0.1
# Macro precision and F1 average over the classes, and a class nothing is predicted as scores 0: one test window
# that lands there moves the average by 1/classes (0.1 of 10). On numpy's and torch's narrower kernels
# (tools/numeric_path.py) the barely trained CNN moved 3 of 90 windows and its precision by 0.103, so these get
# two such windows' worth.
MACRO_RATE_ABSOLUTE = 0.2


def stored_fixture(name: str) -> dict:
    return json.loads(make_fixtures.fixture_path(name).read_text(encoding="utf-8"))


@functools.cache
def rerun(name: str) -> dict:
    return make_fixtures.run_plan_argv(make_fixtures.PLANS[name])


@pytest.mark.slow
@pytest.mark.any_machine  # on .ci/run's narrower numeric path it skips, naming what differs
@pytest.mark.parametrize("name", list(make_fixtures.PLANS))
def test_a_fixed_plan_gives_the_stored_json_bit_for_bit(name):
    stored = stored_fixture(name)
    skip_unless_same_machine(stored["environment"], f"fixture {name}")
    assert stored["argv"] == make_fixtures.PLANS[name], "the plan changed: regenerate the fixture in its own commit"
    # stored at results schema 4: read through the one migration, its comparisons made again from its runs
    difference = make_fixtures.first_difference(
        make_fixtures.without_timing(migrate(stored["results"])), make_fixtures.without_timing(rerun(name))
    )
    assert difference is None, f"{name} differs from its fixture at {difference}"


@pytest.mark.slow
@pytest.mark.any_machine
@pytest.mark.parametrize("name", list(make_fixtures.PLANS))
def test_a_fixed_plan_gives_the_stored_json_within_tolerance_on_any_machine(name):
    stored, results = migrate(stored_fixture(name)["results"]), rerun(name)  # a stored file reads as today's
    strip = make_fixtures.without_timing
    assert_same_json_within(strip(stored["config"]), strip(results["config"]), "config")
    assert [(r["model"], r["seed"], r["epochs"]) for r in results["runs"]] == [
        (r["model"], r["seed"], r["epochs"]) for r in stored["runs"]
    ]
    for new, old in zip(results["runs"], stored["runs"]):
        where = (old["model"], old["seed"])
        for key in ("accuracy", "recall"):
            assert abs(new[key] - old[key]) <= RATE_ABSOLUTE, (where, key, new[key], old[key])
        for key in ("precision", "f1"):
            assert abs(new[key] - old[key]) <= MACRO_RATE_ABSOLUTE, (where, key, new[key], old[key])
        assert len(new["history"]) == len(old["history"]), where
        for row, old_row in zip(new["history"], old["history"]):
            assert row["train_loss"] == pytest.approx(old_row["train_loss"], rel=TRAIN_LOSS_RELATIVE), where
            assert abs(row["val_loss"] - old_row["val_loss"]) <= VAL_LOSS_ABSOLUTE, where
            assert abs(row["val_accuracy"] - old_row["val_accuracy"]) <= RATE_ABSOLUTE, where


def test_the_comparison_finds_a_changed_number_and_ignores_timing():
    one = {"runs": [{"accuracy": 0.5, "train_seconds": 1.0, "history": [{"val_loss": 0.25}]}], "schema_version": 1}
    timing_only = {"runs": [{"accuracy": 0.5, "train_seconds": 9.0, "history": [{"val_loss": 0.25}]}]}
    moved = {"runs": [{"accuracy": 0.5, "train_seconds": 1.0, "history": [{"val_loss": 0.25000000000000006}]}]}
    strip = make_fixtures.without_timing
    assert make_fixtures.first_difference(strip(one), strip(timing_only)) is None
    assert make_fixtures.first_difference(strip(one), strip(moved)) == (
        "results.runs[0].history[0].val_loss: 0.25 != 0.25000000000000006"
    )


def test_the_tolerant_comparison_lets_a_last_digit_pass_and_names_a_real_change():
    # the normalisation mean an AVX-512 machine stored, and what an AVX2 one computes from the same windows
    stored = {"data": {"normalisation": {"mean": -0.0022694205113295523, "std": 1.0}, "window": 128, "tokens": "t"}}
    here = {"data": {"normalisation": {"mean": -0.0022694205113295528, "std": 1.0}, "window": 128, "tokens": "t"}}
    assert_same_json_within(stored, here, "config")
    for changed in ({"mean": -0.00227, "std": 1.0}, {"mean": -0.0022694205113295523, "std": 1}):
        with pytest.raises(AssertionError, match=r"config\.data\.normalisation\.(mean|std)"):
            assert_same_json_within(stored, {"data": {**here["data"], "normalisation": changed}}, "config")
    with pytest.raises(AssertionError, match=r"config\.data\.tokens: 't' != 'fft'"):
        assert_same_json_within(stored, {"data": {**here["data"], "tokens": "fft"}}, "config")
    with pytest.raises(AssertionError, match=r"config\.data\.window: 128 != 129"):
        assert_same_json_within(stored, {"data": {**here["data"], "window": 129}}, "config")
