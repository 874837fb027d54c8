"""The studies shipped in results/ are valid, small, and reproducible: the cheapest (model, seed, fold) cell of
each, and the cheapest cell of model B (so the Transformer training path is retrained too, not only the CNN),
retrained from the shared CWRU files.

On the machine the file's fingerprint names, the retrained cell gives the stored per-window predictions bit
for bit. Everywhere, its accuracy lands within TOLERANCE_POINTS of the range the study's own seeds span for
that model and fold: on another CPU a retrain is one more draw of training noise, not a copy.
(Both skip, with the reason, where the CWRU files are absent.)"""

from __future__ import annotations

import functools

import pytest

from core.lab.data_spec import DataSpec
from core.lab.shipped import SHIPPED_STUDIES
from core.lab.study import load_study
from core.lab.study.folds import make_folds
from core.lab.training import TrainConfig, train
from tests.apptest_utils import ROOT
from tests.reproducibility import skip_unless_same_machine

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
MAX_BYTES = 3_000_000
TOLERANCE_POINTS = 5.0


@pytest.mark.parametrize("name", list(SHIPPED_STUDIES))
def test_a_shipped_study_is_valid_small_and_compares_b_with_a(name):
    path = ROOT / "results" / name
    assert path.stat().st_size <= MAX_BYTES, f"{name} is {path.stat().st_size:,} bytes"
    study = load_study(path)
    primary = study["comparisons"][0]
    assert (primary["a"], primary["b"], primary["margin"]) == ("A", "B", 2.0)
    assert len(study["config"]["seeds"]) >= 6 and {"A", "B", "B-noPE", "CNN"} <= set(study["config"]["models"])


# model B's cheapest cell of the load-out study trains for about 8 s; the other two cover the same code path
CELLS = [(name, None) for name in SHIPPED_STUDIES] + [
    (name, "B") for name in SHIPPED_STUDIES if name != "study_cwru_load-out.json.gz"
]


@functools.cache
def retrained_cheapest_cell(name: str, model: str | None) -> tuple[dict, dict, dict]:
    """(the study, its cheapest stored cell of `model` or of any model, that cell trained again here)."""
    if not CWRU_DIR.is_dir():
        pytest.skip(f"CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
    study = load_study(ROOT / "results" / name)
    config = study["config"]
    cell = min(
        (run for run in study["runs"] if model is None or run["model"] == model), key=lambda r: r["train_seconds"]
    )
    spec = DataSpec.from_dict({**config["data"], "data": str(CWRU_DIR)})
    folds = make_folds(config["design"], spec.load(), config["window"], config["folds"], config["stride"])
    run = train(folds[cell["fold"]].windows, cell["model"], TrainConfig.from_dict(config["train"]), cell["seed"], "cpu")
    return study, cell, run


@pytest.mark.slow
@pytest.mark.parametrize(("name", "model"), CELLS)
def test_the_cheapest_cell_of_a_shipped_study_retrains_to_its_stored_predictions(name, model):
    study, cell, run = retrained_cheapest_cell(name, model)
    skip_unless_same_machine(study["config"].get("fingerprint"), name)
    assert run["predictions"] == cell["predictions"], (cell["model"], cell["seed"], cell["fold"])
    assert (run["accuracy"], run["best_epoch"]) == (cell["accuracy"], cell["best_epoch"])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "model"), CELLS)
def test_the_cheapest_cell_retrains_to_an_accuracy_within_its_seeds_spread_on_any_machine(name, model):
    study, cell, run = retrained_cheapest_cell(name, model)
    same_cell = [r["accuracy"] for r in study["runs"] if (r["model"], r["fold"]) == (cell["model"], cell["fold"])]
    low, high = min(same_cell) - TOLERANCE_POINTS / 100, max(same_cell) + TOLERANCE_POINTS / 100
    assert low <= run["accuracy"] <= high, (cell["model"], cell["fold"], run["accuracy"], (low, high))
    assert len(run["predictions"]["true"]) == len(cell["predictions"]["true"])
    assert run["predictions"]["true"] == cell["predictions"]["true"]  # the same test windows, in the same order
