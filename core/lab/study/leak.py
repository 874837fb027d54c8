"""The windowing comparison as two studies: how much a random deal of windows flatters a model.

A one-fold study cuts each recording in time (`--windowing time`) or deals its windows at random (`--windowing
random`, leaky: a test window lies beside training windows of the same recording). Two such studies of the same
data, models, seeds and training are the experiment's windowing comparison (core.lab.evaluations.
windowing_comparison) made of study files: `study_leak` compares each model with itself, random against time,
paired by seed (a seed starts both runs from the same weights), as a one-fold comparison, exactly as the
experiment's `leak_comparisons` does from its per-seed accuracies. `python -m core.study --leak TIME RANDOM`
prints it from two saved studies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.names import ONE_FOLD, WINDOWINGS
from core.lab.stats import words
from core.lab.study.comparisons import compare, one_fold_view

LEAK_POPULATION = "the test windows of each windowing"
SAME = ("models", "seeds", "window", "stride", "train", "data")  # what two studies of one comparison share


def leak_by_model(
    runs_by_windowing: Mapping[str, Sequence[Mapping[str, Any]]], margin: float = 2.0
) -> dict[str, dict[str, Any]]:
    """Per model: its runs under the random windowing against its runs under the time windowing (each a list of
    runs with model, seed and accuracy), a one-fold comparison paired by seed (the seeds both windowings ran)."""
    models = list(dict.fromkeys(run["model"] for runs in runs_by_windowing.values() for run in runs))
    leak = {}
    for model in models:
        runs = [
            {"model": windowing, "seed": run["seed"], "accuracy": run["accuracy"]}
            for windowing in WINDOWINGS
            for run in runs_by_windowing[windowing]
            if run["model"] == model
        ]
        leak[model] = compare(one_fold_view(runs, LEAK_POPULATION), "time", "random", "accuracy", margin)
    return leak


def leak_comparisons(block: Mapping[str, Any], seeds: Sequence[int], margin: float = 2.0) -> dict[str, dict[str, Any]]:
    """The leak of an experiment's windowing comparison (its block: per model, an accuracy cell per windowing whose
    values follow `seeds`), as `leak_by_model` makes it from two studies' runs."""
    runs_by_windowing = {
        windowing: [
            {"model": model, "seed": seed, "accuracy": value}
            for model, cells in block["accuracy"].items()
            for seed, value in zip(seeds, cells[index]["values"])
        ]
        for index, windowing in enumerate(block["windowings"])
    }
    return leak_by_model(runs_by_windowing, margin)


def study_leak(time_study: Mapping[str, Any], random_study: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per model, random − time accuracy in points with its interval over seeds (see `leak_by_model`), from two
    one-fold studies that differ in their windowing alone; ValueError, in words, for any other pair."""
    studies = {"time": time_study, "random": random_study}
    for windowing, study in studies.items():
        config = study["config"]
        given = config.get("cutting", {}).get("windowing")
        if config["design"] != ONE_FOLD or given != windowing:
            raise ValueError(
                f"the leak compares a one-fold study cut in time with one dealt at random; the {windowing} study "
                f"given is a {config['design']} study{f' with {given} windowing' if given else ''}"
            )
    differ = [key for key in SAME if time_study["config"].get(key) != random_study["config"].get(key)]
    differ += ["the loads trained at"] if _trained_at(time_study) != _trained_at(random_study) else []
    shares = [study["config"]["cutting"]["shares"] for study in studies.values()]
    if differ or shares[0] != shares[1]:
        raise ValueError(f"the two studies must differ in their windowing alone; they differ in {differ or ['shares']}")
    return leak_by_model({w: s["runs"] for w, s in studies.items()}, float(time_study["config"]["margin"]))


def _trained_at(study: Mapping[str, Any]) -> set[Any]:
    """The motor loads a one-fold study trained at: its one train load where it has cross-load tests (its recordings
    list every load then), else the loads of its recordings (an experiment's other windowing lists the train load's
    alone)."""
    loads = study["config"].get("train_loads")
    return set(loads) if loads is not None else {recording.get("load_hp") for recording in study["recordings"]}


def leak_frame(leak: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """A row per model: the leak (random − time accuracy) in points, its 95 % CI and its verdict."""
    return pd.DataFrame(
        [
            {
                "model": model,
                "leak (random − time), points": words.points(comparison["diff"], 2),
                "95 % CI": words.interval(comparison["ci95"]),
                "verdict": comparison["verdict"],
            }
            for model, comparison in leak.items()
        ]
    )
