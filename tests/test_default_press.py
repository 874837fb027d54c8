"""The Fault lab's default press asks the short answer's question (B against B-noPE, with A beside them when the
told wait allows, or one line saying why not), tells the wait of the runs it will start, and shows each finished
seed's accuracies as an interim result until the verdict replaces it."""

from __future__ import annotations

import threading
import time

import pytest

from core.lab import runs as lab_runs
from core.lab.report import interim_table
from core.lab.wait import DEFAULT_PRESS_SECONDS, describe_wait, press_models
from tests.apptest_utils import finish_job, open_lab, set_tiny
from ui.lab import experiment as lab
from ui.lab import keys
from ui.lab.press import question_line


def test_the_default_press_trains_a_beside_the_question_only_when_its_told_wait_allows():
    assert press_models(DEFAULT_PRESS_SECONDS) == ("A", "B-noPE", "B")
    assert press_models(DEFAULT_PRESS_SECONDS + 0.1) == ("B-noPE", "B")
    assert press_models(None) == ("B-noPE", "B")  # data the default press cannot run: the question alone


def test_the_press_says_in_one_line_what_it_asks_or_why_it_asks_another():
    asks = "This press asks the short answer's question, B against B-noPE (the encoding alone)"
    assert question_line(("A", "B-noPE", "B")) == f"{asks}, with A beside them."
    assert question_line(("B-noPE", "B")) == f"{asks}."
    assert question_line(("B-noPE", "B"), beside_wait=115) == (
        f"{asks}. A is left out to keep the wait short: with it the wait here would be about 115 s. Add it under "
        "Models to compare with A too."
    )
    assert question_line(("A", "B")) == (
        "This press does not ask the short answer's question, B against B-noPE (the encoding alone): add B-noPE "
        "under Models to ask it. It compares each model with A instead."
    )
    assert "add B-noPE and B under Models" in question_line(("CNN",))


def _captions(at) -> list[str]:
    return [caption.value for caption in at.caption]


@pytest.mark.parametrize(
    ("seconds_with_a", "models", "runs"),
    [(30.0, ["A", "B-noPE", "B"], 9), (400.0, ["B-noPE", "B"], 6)],
    ids=["a-beside", "a-left-out"],
)
def test_the_page_opens_on_the_press_its_wait_allows_and_tells_the_wait_of_those_runs(
    monkeypatch, seconds_with_a, models, runs
):
    monkeypatch.setattr(lab, "press_seconds", lambda data, chosen: seconds_with_a)
    at = open_lab()
    assert at.multiselect(key="models").value == models
    (asked,) = [text for text in _captions(at) if text.startswith("This press")]
    assert asked.startswith("This press asks the short answer's question, B against B-noPE")
    assert ("with A beside them" in asked) == ("A" in models)
    assert ("A is left out to keep the wait short" in asked) == ("A" not in models)
    data = at.session_state[keys.DATA_KEY]
    plan, seconds = lab.estimated(data, lab.LabSettings(models=tuple(models)))
    assert plan.run_count() == runs
    told = [text for text in _captions(at) if "training run" in text and "on this server" in text]
    assert told and told[0].startswith(f"{runs} training runs: {describe_wait(seconds)} on this server")
    # decided once a session: a server that has since got faster or slower does not change the widget's default
    monkeypatch.setattr(lab, "press_seconds", lambda data, chosen: 430.0 - seconds_with_a)
    at.run()
    assert at.multiselect(key="models").value == models


def test_the_interim_table_counts_the_seeds_the_question_has_finished():
    finished = [
        {"model": "B-noPE", "seed": 0, "accuracy": 0.90},
        {"model": "B", "seed": 0, "accuracy": 0.925},
        {"model": "B", "seed": 1, "accuracy": 0.5},  # B-noPE seed 1 still training
    ]
    table, done = interim_table(finished, ["A", "B-noPE", "B"], [0, 1, 2])
    assert done == 1  # A has not finished seed 0, but the question (B against B-noPE) has
    assert table.to_dict("records") == [
        {"model": "A", "seed 0": "…", "seed 1": "…", "seed 2": "…"},
        {"model": "B-noPE", "seed 0": "90.0", "seed 1": "…", "seed 2": "…"},
        {"model": "B", "seed 0": "92.5", "seed 1": "50.0", "seed 2": "…"},
        {"model": "B − B-noPE (points)", "seed 0": "+2.5", "seed 1": "…", "seed 2": "…"},
    ]
    _, done = interim_table(finished, ["A", "B"], [0, 1])
    assert done == 0  # without B-noPE every model must have finished a seed: A has finished none


def _interim(at) -> list[str]:
    return [markdown.value for markdown in at.markdown if markdown.value.startswith("**Interim: ")]


def test_a_press_shows_each_finished_seeds_accuracies_as_interim_until_the_verdict_replaces_them(monkeypatch):
    gate = threading.Event()  # seed 1 trains only once the test has seen the interim result of seed 0
    real_train = lab_runs.train

    def train_seed_1_when_let(windows, model, config, seed, *rest):
        if seed == 1:
            gate.wait(timeout=300)
        return real_train(windows, model, config, seed, *rest)

    monkeypatch.setattr(lab_runs, "train", train_seed_1_when_let)
    monkeypatch.setattr("core.lab.training.usable_cpus", lambda: 2)
    at = open_lab({"models": ["B-noPE", "B"]})
    set_tiny(at)  # two seeds, one epoch
    at.button(key="train").click().run()
    try:
        deadline = time.time() + 240
        while not _interim(at) and time.time() < deadline:
            time.sleep(0.3)
            at.run()
        assert not at.exception, [e.message for e in at.exception]
        assert _interim(at) == ["**Interim: 1 of 2 seeds**, accuracy % on the test windows"]
        assert keys.RESULTS_KEY not in at.session_state  # the interim result comes before the verdict
        table = next(frame.value for frame in at.dataframe if "seed 1" in frame.value.columns)
        seed_0 = {run["model"]: 100 * run["accuracy"] for run in at.session_state[keys.JOB_KEY].status().runs}
        assert list(table["model"]) == ["B-noPE", "B", "B − B-noPE (points)"]
        assert list(table["seed 0"]) == [f"{seed_0['B-noPE']:.1f}", f"{seed_0['B']:.1f}", table["seed 0"][2]]
        assert float(table["seed 0"][2]) == pytest.approx(seed_0["B"] - seed_0["B-noPE"], abs=0.051)
        assert list(table["seed 1"]) == ["…", "…", "…"]
        assert any("not a verdict" in text for text in _captions(at))
    finally:
        gate.set()
    results = finish_job(at)
    assert _interim(at) == []  # replaced by the results
    (primary,) = results["comparisons"]  # no A: nothing against A
    assert (primary["a"], primary["b"], primary["primary"]) == ("B-noPE", "B", True)
    assert results["verdict"].startswith(primary["sentence"]) and "model A was not run" not in results["verdict"]
    final = next(frame.value for frame in at.dataframe if "accuracy %" in frame.value.columns)
    assert list(final["model"]) == ["B-noPE", "B"] and "vs B-noPE" in final.columns and "vs A" not in final.columns
