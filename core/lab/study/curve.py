"""The order-dose curve's results file: one study per level of the order curve (core.lab.vibration.order_curve,
`--dataset order_curve --level k`), combined with a one-patch RMS check per level, and the checks it must pass.

    curve = build_curve([study_level_0, study_level_1, ...], command)
    save_curve(curve, "results/study_order_curve.json.gz")     # checked; at most MAX_CURVE_BYTES on disk
    load_curve(path)                                            # read back and checked
    reanalyse_curve(curve)                                      # every level's comparisons again, no retraining

The curve JSON:

    kind, schema_version   "order_curve", CURVE_SCHEMA_VERSION
    command                the command that assembled it (each level's study keeps its own in its config)
    levels                 easiest first, each: level, parameters (the level's difficulty, as its study's
                           config.data.order_curve), chance (1 / classes), accuracy {model: pooled over runs},
                           one_patch_rms {accuracy, n_test, positions}, checks {name: passed}, primary (the
                           study's primary comparison, B vs B-noPE with its interval), study (the whole study
                           JSON: its runs with per-window predictions, folds and comparisons)

A model's accuracy is recounted from its runs' per-window predictions: every window of every run counts once.
The one-patch RMS check is a logistic regression on the RMS of one patch position of each window, fitted on a
fold's training windows, the position chosen by the fold's validation windows, scored on its test windows; a
task whose class lives only in the order leaves it at chance, as it leaves the spectrum baseline.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.lab.contract import read_json, require
from core.lab.data_spec import DataSpec
from core.lab.study.contract import validate_study
from core.lab.study.folds import Fold, make_folds
from core.lab.study.migration import migrate
from core.lab.study.runner import reanalyse

CURVE_KIND = "order_curve"
CURVE_SCHEMA_VERSION = 1
MIN_LEVELS = 4
MAX_CURVE_BYTES = 1_000_000  # on disk (gzip allowed)
MAX_EXPANDED_BYTES = 50_000_000
CHANCE_MARGIN = 0.05  # order-blind checks: within 5 points of chance
BLIND_CHECKS = {  # check name -> the model (or the one-patch check) that must stay within the margin of chance
    "spectrum-LR near chance": "spectrum-LR",
    "one-patch RMS near chance": "one_patch_rms",
}
LEVEL_KEYS = ("level", "parameters", "chance", "accuracy", "one_patch_rms", "checks", "primary", "study")


def pooled_accuracies(study: Mapping[str, Any]) -> dict[str, float]:
    """Each model's accuracy over all its runs' test windows, counted from the per-window predictions."""
    correct: dict[str, int] = {}
    counted: dict[str, int] = {}
    for run in study["runs"]:
        predictions = run["predictions"]
        hits = int(np.sum(np.asarray(predictions["true"]) == np.asarray(predictions["predicted"])))
        correct[run["model"]] = correct.get(run["model"], 0) + hits
        counted[run["model"]] = counted.get(run["model"], 0) + len(predictions["true"])
    return {model: correct[model] / counted[model] for model in correct}


def _patch_rms(windows: np.ndarray, patch: int) -> np.ndarray:
    return np.sqrt(np.mean(windows.reshape(len(windows), -1, patch) ** 2, axis=2))  # (windows, tokens)


def _one_patch_fold(windows: Any, patch: int) -> tuple[int, np.ndarray]:
    """The patch position whose RMS best classifies the fold's validation windows, and its test predictions."""
    train, val, test = (_patch_rms(getattr(windows, f"x_{role}"), patch) for role in ("train", "val", "test"))
    best = None
    for position in range(train.shape[1]):
        model = make_pipeline(StandardScaler(), LogisticRegression()).fit(train[:, [position]], windows.y_train)
        score = model.score(val[:, [position]], windows.y_val)
        if best is None or score > best[0]:
            best = (score, position, model)
    _, position, model = best
    return position, model.predict(test[:, [position]])


def one_patch_check(study: Mapping[str, Any], folds: Sequence[Fold] | None = None) -> dict[str, Any]:
    """The one-patch RMS classifier on the study's folds of its first repeat (every test window once):
    {accuracy, n_test, positions (chosen per fold)}. Without `folds` they are rebuilt from the study's config
    with the design's own validation windows (the test windows are the same under every protocol)."""
    config = study["config"]
    if folds is None:
        recordings = DataSpec.from_dict(config["data"]).load()
        folds = make_folds(config["design"], recordings, config["window"], config["folds"], config["stride"], 1)
    patch = int(config["train"]["model"]["patch"])
    positions, hits, counted = [], 0, 0
    for fold in (f for f in folds if f.repeat == 0):
        position, predicted = _one_patch_fold(fold.windows, patch)
        positions.append(position)
        hits += int(np.sum(predicted == fold.windows.y_test))
        counted += len(predicted)
    return {"accuracy": hits / counted, "n_test": counted, "positions": positions}


def _level_checks(accuracy: Mapping[str, float], one_patch: Mapping[str, Any], chance: float) -> dict[str, bool]:
    scores = {**accuracy, "one_patch_rms": one_patch["accuracy"]}
    return {
        name: abs(scores[source] - chance) < CHANCE_MARGIN for name, source in BLIND_CHECKS.items() if source in scores
    }


def curve_level_entry(study: Mapping[str, Any], one_patch: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One level of the curve from its study (and its one-patch check, computed here when not given)."""
    data = study["config"]["data"]
    require(data.get("dataset") == "order_curve", "a curve level must be a study of --dataset order_curve")
    one_patch = dict(one_patch if one_patch is not None else one_patch_check(study))
    chance = 1 / len(study["class_names"])
    accuracy = pooled_accuracies(study)
    primary = next((c for c in study["comparisons"] if c["primary"]), None)
    return {
        "level": int(data["order_level"]),
        "parameters": dict(data["order_curve"]),
        "chance": chance,
        "accuracy": accuracy,
        "one_patch_rms": one_patch,
        "checks": _level_checks(accuracy, one_patch, chance),
        "primary": primary,
        "study": dict(study),
    }


def build_curve(
    studies: Sequence[Mapping[str, Any]], command: str = "", one_patch: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """The curve JSON of one study per level (any order; sorted easiest first), checked."""
    checks = list(one_patch) if one_patch is not None else [None] * len(studies)
    levels = sorted((curve_level_entry(s, c) for s, c in zip(studies, checks, strict=True)), key=lambda e: e["level"])
    curve = {"kind": CURVE_KIND, "schema_version": CURVE_SCHEMA_VERSION, "command": command, "levels": levels}
    validate_curve(curve)
    return curve


def validate_curve(curve: Any, models: Sequence[str] = ("B", "B-noPE")) -> None:
    """ValueError naming the first thing wrong: the kind and version, at least MIN_LEVELS distinct levels, each
    a valid study of the order curve running `models`, whose stored accuracies and checks recount exactly."""
    try:
        _validate_curve(curve, models)
    except ValueError as error:  # the shared checks (core.lab.contract) speak of a results JSON
        raise ValueError(str(error).replace("invalid results JSON", "invalid order curve", 1)) from None


def _validate_curve(curve: Any, models: Sequence[str]) -> None:
    require(isinstance(curve, Mapping), "an order curve must be an object")
    require(curve.get("kind") == CURVE_KIND, f"an order curve's kind is {CURVE_KIND!r}")
    require(curve.get("schema_version") == CURVE_SCHEMA_VERSION, f"order curve schema_version {CURVE_SCHEMA_VERSION}")
    levels = curve.get("levels")
    require(isinstance(levels, list) and len(levels) >= MIN_LEVELS, f"an order curve has at least {MIN_LEVELS} levels")
    numbers = [level.get("level") if isinstance(level, Mapping) else None for level in levels]
    require(all(isinstance(n, int) for n in numbers), "every level must be an object with its integer level")
    require(all(a < b for a, b in zip(numbers, numbers[1:])), f"levels must be distinct, easiest first: {numbers}")
    for level in levels:
        _validate_level(level, models)


def _validate_level(level: Mapping[str, Any], models: Sequence[str]) -> None:
    where = f"levels[{level.get('level')}]"
    require(sorted(level) == sorted(LEVEL_KEYS), f"{where} keys must be {', '.join(LEVEL_KEYS)}")
    study = level["study"]
    validate_study(study)
    data = study["config"]["data"]
    require(data.get("dataset") == "order_curve" and data.get("order_level") == level["level"], f"{where}: its study")
    require(level["parameters"] == data.get("order_curve"), f"{where}.parameters must be its study's")
    missing = set(models) - set(study["config"]["models"])
    require(not missing, f"{where}: its study lacks {', '.join(sorted(missing))}")
    require(level["accuracy"] == pooled_accuracies(study), f"{where}.accuracy must recount from the predictions")
    one_patch = level["one_patch_rms"]
    require(
        isinstance(one_patch, Mapping) and 0 <= one_patch.get("accuracy", -1) <= 1 and one_patch.get("n_test", 0) > 0,
        f"{where}.one_patch_rms must hold an accuracy and its test windows",
    )
    require(level["checks"] == _level_checks(level["accuracy"], one_patch, level["chance"]), f"{where}.checks recount")


def failed_checks(curve: Mapping[str, Any]) -> list[str]:
    """The order-blind checks that failed, as "level k: check name", in level order (empty: all passed)."""
    levels = curve["levels"]
    return [f"level {level['level']}: {name}" for level in levels for name, ok in level["checks"].items() if not ok]


def save_curve(curve: Mapping[str, Any], path: str | Path, models: Sequence[str] = ("B", "B-noPE")) -> Path:
    """Write the checked curve as compact JSON (gzip-compressed when the name ends in .gz); ValueError, and no
    file, when it would take more than MAX_CURVE_BYTES on disk."""
    validate_curve(curve, models)
    path = Path(path)
    text = json.dumps(curve, separators=(",", ":"), allow_nan=False).encode("utf-8")
    data = gzip.compress(text, compresslevel=9, mtime=0) if path.suffix == ".gz" else text
    require(
        len(data) <= MAX_CURVE_BYTES,
        f"the order curve would take {len(data):,} bytes, over {MAX_CURVE_BYTES:,}: fewer seeds or a .gz name",
    )
    path.write_bytes(data)
    return path


def load_curve(path: str | Path, models: Sequence[str] = ("B", "B-noPE")) -> dict[str, Any]:
    """The curve of a file (plain or .gz), checked, its size on disk included."""
    raw = Path(path).read_bytes()
    require(len(raw) <= MAX_CURVE_BYTES, f"{Path(path).name} takes {len(raw):,} bytes, over {MAX_CURVE_BYTES:,}")
    curve = read_json(raw, MAX_EXPANDED_BYTES)
    # each level's study is a study file: an earlier schema opens through the one migration every file takes
    if isinstance(curve, dict) and isinstance(curve.get("levels"), list):
        for level in curve["levels"]:
            if isinstance(level, dict) and isinstance(level.get("study"), dict):
                level["study"] = migrate(level["study"])
    validate_curve(curve, models)
    return curve


def reanalyse_curve(curve: Mapping[str, Any]) -> dict[str, Any]:
    """The curve with every level's study re-analysed from its stored runs (core.lab.study.runner.reanalyse: no
    retraining) and its level rebuilt around it, the one-patch checks and the command kept; checked."""
    levels = curve["levels"]
    studies = [reanalyse(dict(level["study"])) for level in levels]
    return build_curve(studies, curve["command"], [level["one_patch_rms"] for level in levels])
