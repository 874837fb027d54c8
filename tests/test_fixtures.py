"""The pipeline's regression guard: fixed tiny plans give the stored results JSON.

The fixtures under tests/data/ were written by tests/data/make_fixtures.py. On the machine whose fingerprint
the file stores (core.fingerprint), the JSON must be the same bit for bit, except the fields that measure
time (and schema_version). On any other machine that test skips and names what differs, and the tolerance
test beside it still runs: the same plan, the same structure and settings, training losses equal to
TRAIN_LOSS_RELATIVE, validation losses to VAL_LOSS_ABSOLUTE, and every rate (accuracy, F1, ...) of a run
within RATE_ABSOLUTE (measured with MKL's compatible code path forced and with torch's AVX2 kernels: the
training losses moved by at most 1e-7, validation losses by 2e-3, a run's accuracy by 2 of 90 windows).
"""

import functools
import json

import pytest

from tests.data import make_fixtures
from tests.reproducibility import skip_unless_same_machine

TRAIN_LOSS_RELATIVE = 1e-4
VAL_LOSS_ABSOLUTE = 0.02
RATE_ABSOLUTE = 0.1


def stored_fixture(name: str) -> dict:
    return json.loads(make_fixtures.fixture_path(name).read_text(encoding="utf-8"))


@functools.cache
def rerun(name: str) -> dict:
    return make_fixtures.run_plan_argv(make_fixtures.PLANS[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(make_fixtures.PLANS))
def test_a_fixed_plan_gives_the_stored_json_bit_for_bit(name):
    stored = stored_fixture(name)
    skip_unless_same_machine(stored["environment"], f"fixture {name}")
    assert stored["argv"] == make_fixtures.PLANS[name], "the plan changed: regenerate the fixture in its own commit"
    difference = make_fixtures.first_difference(
        make_fixtures.without_timing(stored["results"]), make_fixtures.without_timing(rerun(name))
    )
    assert difference is None, f"{name} differs from its fixture at {difference}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(make_fixtures.PLANS))
def test_a_fixed_plan_gives_the_stored_json_within_tolerance_on_any_machine(name):
    stored, results = stored_fixture(name)["results"], rerun(name)
    strip = make_fixtures.without_timing
    assert strip(results["config"]) == strip(stored["config"])
    assert [(r["model"], r["seed"], r["epochs"]) for r in results["runs"]] == [
        (r["model"], r["seed"], r["epochs"]) for r in stored["runs"]
    ]
    for new, old in zip(results["runs"], stored["runs"]):
        where = (old["model"], old["seed"])
        for key in ("accuracy", "precision", "recall", "f1"):
            assert abs(new[key] - old[key]) <= RATE_ABSOLUTE, (where, key, new[key], old[key])
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
