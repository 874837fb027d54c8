"""Adding an evaluation is adding a module: one registered from a temporary file runs through run_plan, the
results validator, the report and the CLI (flag, printout, reproducing command) with no other file edited."""

import importlib.util
import shlex
import textwrap

import pytest

from core.lab import evaluations
from core.lab.experiment.cli import command_line, main, report_text
from core.lab.experiment.plan import Plan, run_plan
from core.lab.experiment.results import load_results, validate_results
from core.lab.models import ModelConfig
from core.lab.runs import RunFinished
from core.lab.training import TrainConfig
from core.lab.vibration import synthetic_bearing_set

DUMMY = '''
"""A dummy evaluation: every run also scores the first half of its test windows, and a second stage trains
the models again on the same windows with a smaller learning rate."""

import dataclasses

import pandas as pd

from core.lab.contract import check_keys, require
from core.lab.evaluations import Evaluation, Setting, register
from core.lab.runs import MAIN


class HalfTest(Evaluation):
    key = "half_test"
    title = "First half of the test block"
    settings = (Setting("half_test", "flag", "also score the first half of the test windows", flag="--half-test",
                        default=False, label="Score the first half too", key="half"),)

    @classmethod
    def check(cls, values, plan):
        return {"half_test": True} if values["half_test"] else None

    def runs_per_seed(self, plan):
        return len(plan.models)

    def prepare(self, context):
        slower = dataclasses.replace(context.plan.config, learning_rate=context.plan.config.learning_rate / 10)
        context.add_stage(self.stage_key("slow"), context.main.windows, context.plan.models, config=slower)

    def run_test_sets(self, stage, seed):
        x, y = stage.windows.x_test, stage.windows.y_test
        return {"first half": (x[: len(x) // 2], y[: len(y) // 2])} if stage.key == MAIN else {}

    def block(self, plan, runs):
        return {
            "accuracy": {m: [r["extra_tests"]["first half"]["accuracy"] for r in runs[MAIN] if r["model"] == m]
                         for m in plan.models},
            "slow_runs": len(runs[self.stage_key("slow")]),
        }

    @classmethod
    def validate(cls, block, results):
        check_keys("half_test", block, ("accuracy", "slow_runs"))
        require(block["slow_runs"] == len(results["runs"]), "half_test.slow_runs must count one per run")

    @classmethod
    def tables(cls, block):
        return [("First-half accuracy per seed", pd.DataFrame(block["accuracy"]))]


register(HalfTest)
'''


@pytest.fixture
def dummy_registered(tmp_path):
    path = tmp_path / "dummy_half_test.py"
    path.write_text(textwrap.dedent(DUMMY))
    spec = importlib.util.spec_from_file_location("dummy_half_test", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    yield
    evaluations.unregister("half_test")


def test_a_registered_evaluation_runs_validates_and_reports(dummy_registered):
    recordings = synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007"))
    config = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=1, threads=1)
    plan = Plan(
        data=recordings,
        cutting={"window": 128},
        models=["A", "B"],
        seeds=[0],
        config=config,
        evaluations={"half_test": True},
        keep_weights=False,
    )
    stages = []
    results = run_plan(plan, progress=lambda e: stages.append(e.run["stage"]) if isinstance(e, RunFinished) else None)
    assert stages == ["main", "main", "half_test slow", "half_test slow"] and plan.run_count() == 4
    assert results["config"]["evaluations"]["half_test"] is True
    assert set(results["half_test"]["accuracy"]) == {"A", "B"} and results["half_test"]["slow_runs"] == 2
    validate_results(results)
    results["half_test"]["slow_runs"] = 3
    with pytest.raises(ValueError, match="half_test.slow_runs must count one per run"):
        validate_results(results)
    results["half_test"]["slow_runs"] = 2
    assert "First-half accuracy per seed:" in report_text(results)


def test_a_registered_evaluation_has_its_cli_flag_printout_and_reproducing_command(dummy_registered, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = [
        *(
            "--duration 1.0 --models A --seeds 0 --epochs 1 --window 128 --patch 16 --heads 2 "
            "--layers 1 --threads 1 --half-test --out"
        ).split(),
        str(out),
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "First-half accuracy per seed:" in printed and "[half_test slow]" in printed
    config = load_results(out)["config"]
    assert "--half-test" in shlex.split(command_line(config))


def test_an_evaluation_once_unregistered_is_unknown_again():
    assert "half_test" not in evaluations.block_keys()
    with pytest.raises(ValueError, match="unknown evaluation settings"):
        Plan(data=[], models=["A"], seeds=[0], evaluations={"half_test": True})
