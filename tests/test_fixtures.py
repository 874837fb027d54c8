"""The pipeline's regression guard: fixed tiny plans give the stored results JSON, bit for bit.

The fixtures under tests/data/ were written by tests/data/make_fixtures.py. Only the fields that measure
time (and schema_version) may differ; every metric, history row, confusion matrix and config value must not.
On a machine whose torch or CPU differs from the one that wrote them, the test skips and names the difference:
floating-point sums there may round differently without anything being wrong.
"""

import json

import pytest

from tests.data import make_fixtures


@pytest.mark.parametrize("name", list(make_fixtures.PLANS))
def test_a_fixed_plan_gives_the_stored_json_bit_for_bit(name):
    stored = json.loads(make_fixtures.fixture_path(name).read_text(encoding="utf-8"))
    here = make_fixtures.environment()
    differing = [key for key, value in stored["environment"].items() if here.get(key) != value]
    if differing:
        made_with = ", ".join(f"{key}={stored['environment'][key]!r:.60}" for key in differing)
        pytest.skip(
            f"fixture {name} was made with another {', '.join(differing)} ({made_with}); "
            f"regenerate it with tests/data/make_fixtures.py to compare on this machine"
        )
    assert stored["argv"] == make_fixtures.PLANS[name], "the plan changed: regenerate the fixture in its own commit"
    results = make_fixtures.run_plan_argv(stored["argv"])
    difference = make_fixtures.first_difference(
        make_fixtures.without_timing(stored["results"]), make_fixtures.without_timing(results)
    )
    assert difference is None, f"{name} differs from its fixture at {difference}"


def test_the_comparison_finds_a_changed_number_and_ignores_timing():
    one = {"runs": [{"accuracy": 0.5, "train_seconds": 1.0, "history": [{"val_loss": 0.25}]}], "schema_version": 1}
    timing_only = {"runs": [{"accuracy": 0.5, "train_seconds": 9.0, "history": [{"val_loss": 0.25}]}]}
    moved = {"runs": [{"accuracy": 0.5, "train_seconds": 1.0, "history": [{"val_loss": 0.25000000000000006}]}]}
    strip = make_fixtures.without_timing
    assert make_fixtures.first_difference(strip(one), strip(timing_only)) is None
    assert make_fixtures.first_difference(strip(one), strip(moved)) == (
        "results.runs[0].history[0].val_loss: 0.25 != 0.25000000000000006"
    )
