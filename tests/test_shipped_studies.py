"""The studies shipped in results/ are valid, small, and reproducible: the cheapest (model, seed, fold) cell of
each, and the cheapest cell of model B (so the Transformer training path is retrained too, not only the CNN),
retrained from the shared CWRU files, give the stored per-window predictions bit for bit on the CPU and torch
the file records (skipped, with the reason, where the files are absent or the machine differs)."""

from __future__ import annotations

import pytest

from core.data_spec import DataSpec
from core.study import load_study
from core.study.folds import make_folds
from core.study.runner import environment
from core.training import TrainConfig, train
from tests.apptest_utils import ROOT
from ui.lab_study import SHIPPED

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
MAX_BYTES = 3_000_000


@pytest.mark.parametrize("name", list(SHIPPED))
def test_a_shipped_study_is_valid_small_and_compares_b_with_a(name):
    path = ROOT / "results" / name
    assert path.stat().st_size <= MAX_BYTES, f"{name} is {path.stat().st_size:,} bytes"
    study = load_study(path)
    primary = study["comparisons"][0]
    assert (primary["a"], primary["b"], primary["margin"]) == ("A", "B", 2.0)
    assert len(study["config"]["seeds"]) >= 6 and {"A", "B", "B-noPE", "CNN"} <= set(study["config"]["models"])


# model B's cheapest cell of the load-out study trains for about 8 s; the other two cover the same code path
CELLS = [(name, None) for name in SHIPPED] + [(name, "B") for name in SHIPPED if name != "study_cwru_load-out.json.gz"]


@pytest.mark.parametrize(("name", "model"), CELLS)
def test_the_cheapest_cell_of_a_shipped_study_retrains_to_its_stored_predictions(name, model):
    if not CWRU_DIR.is_dir():
        pytest.skip(f"CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
    study = load_study(ROOT / "results" / name)
    config, here = study["config"], environment()
    for key in ("torch", "cpu"):
        if config[key] != here[key]:
            pytest.skip(f"{name} was made with {key} {config[key]}; this machine has {here[key]}")
    cells = [run for run in study["runs"] if model is None or run["model"] == model]
    cell = min(cells, key=lambda run: run["train_seconds"])
    spec = DataSpec.from_dict({**config["data"], "data": str(CWRU_DIR)})
    folds = make_folds(config["split"], spec.load(), config["window"], config["folds"], config["stride"])
    run = train(folds[cell["fold"]].windows, cell["model"], TrainConfig.from_dict(config["train"]), cell["seed"], "cpu")
    assert run["predictions"] == cell["predictions"], (cell["model"], cell["seed"], cell["fold"])
    assert (run["accuracy"], run["best_epoch"]) == (cell["accuracy"], cell["best_epoch"])
