"""The Ray backend: a tiny study and a tiny experiment give the numbers of the local backend bit for bit, in plan
order, on a local Ray cluster started here; without Ray, asking for it is one line naming the install command."""

from __future__ import annotations

import os
import sys

import pytest

from core.lab.backends import INSTALL, BackendError, RayBackend, backend
from core.lab.models import ModelConfig
from core.lab.study import StudyPlan, run_study
from core.lab.training import TrainConfig
from core.lab.vibration import synthetic_bearing_set

ray = pytest.importorskip("ray", reason="Ray is not installed (requirements-dev.txt lists it)")

TIMING = ("train_seconds", "windows_per_second")


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def without_timing(runs: list[dict]) -> list[dict]:
    return [{key: value for key, value in run.items() if key not in TIMING} for run in runs]


@pytest.mark.slow
def test_a_study_on_ray_equals_the_local_study_bit_for_bit(cluster):
    recordings = synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007"))
    config = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1), epochs=2)
    settings = dict(models=["A", "B"], seeds=[0], folds=3, window=128, config=config, workers=2)
    local = run_study(StudyPlan(recordings, **settings))
    finished = []
    remote = run_study(StudyPlan(recordings, **settings, backend="ray"), progress=finished.append)
    assert without_timing(remote["runs"]) == without_timing(local["runs"])
    assert [(r["fold"], r["model"]) for r in remote["runs"]] == [(f, m) for f in range(3) for m in ("A", "B")]
    assert remote["comparisons"] == local["comparisons"] and remote["profiles"] == local["profiles"]
    assert sum(type(e).__name__ == "RunFinished" for e in finished) == 6


@pytest.mark.slow
def test_the_experiment_cli_runs_on_ray_with_the_local_numbers(cluster, tmp_path):
    from core.lab.experiment.cli import main
    from core.lab.experiment.results import load_results

    argv = "--duration 1.0 --models A,CNN --seeds 0 --epochs 1 --window 128 --patch 16 --heads 2 --layers 1 --quiet"
    assert main([*argv.split(), "--out", str(tmp_path / "local.json")]) == 0
    assert main([*argv.split(), "--backend", "ray", "--out", str(tmp_path / "ray.json")]) == 0
    local, remote = (load_results(tmp_path / name) for name in ("local.json", "ray.json"))
    assert without_timing(remote["runs"]) == without_timing(local["runs"]) and remote["summary"] == local["summary"]
    assert backend("ray").workers(1) == 2 and "2 CPUs" in backend("ray").where()


def test_without_ray_the_backend_is_refused_with_the_install_command(monkeypatch, tmp_path, capsys):
    from core.lab.study.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(BackendError, match="pip install -r requirements-cluster.txt"):
        backend("ray")
    assert main(["--backend", "ray", "--duration", "1", "--out", str(tmp_path / "s.json")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and INSTALL in error


@pytest.mark.slow
def test_a_server_pointed_at_a_cluster_trains_there_and_says_so(cluster, monkeypatch):
    from tests.apptest_utils import open_lab, set_tiny, train_to_the_end

    monkeypatch.setenv("PE_LAB_RAY_ADDRESS", "local")  # the cluster this test started
    sent = []
    real_train = RayBackend.train
    monkeypatch.setattr(
        RayBackend, "train", lambda self, *args, **kw: sent.append(args[1]) or real_train(self, *args, **kw)
    )
    at = open_lab()
    assert any("Runs execute on a Ray cluster of 2 CPUs" in c.value for c in at.caption)
    at.multiselect(key="models").set_value(["A", "B"]).run()
    set_tiny(at, n_seeds=1)
    results = train_to_the_end(at)
    assert [run["model"] for run in results["runs"]] == ["A", "B"]
    assert sorted(sent) == ["A", "B"]  # each run a Ray task, not a thread of the page's server
