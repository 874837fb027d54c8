"""The experiment CLI: schema-valid JSON from a tiny synthetic run, clean errors, and CWRU when it is there."""

import json
import shlex
from pathlib import Path

import pytest
import torch

from core.lab.data_spec import DataSpec, FileRef
from core.lab.experiment.cli import build_parser, command_line, main, make_plan
from core.lab.experiment.results import load_results
from core.lab.training import default_workers
from core.lab.vibration import DataError
from core.lab.wait import plan_wait_line

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"
TINY = ["--window", "256", "--patch", "16", "--heads", "2", "--layers", "1", "--threads", "1", "--quiet"]


def test_a_tiny_synthetic_run_writes_schema_valid_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(
        [
            *("--dataset synthetic --duration 1.5 --models A,B --seeds 0,1 --epochs 2 --tokens fft --out").split(),
            str(out),
            *TINY,
        ]
    )
    assert code == 0
    results = load_results(out)  # validates against the contract
    assert [(run["model"], run["seed"]) for run in results["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    assert all(run["epochs"] <= 2 for run in results["runs"])
    config = results["config"]
    assert config["data"]["dataset"] == "synthetic" and config["data"]["window"] == 256
    assert config["data"]["windowing"] == "time" and config["data"]["shares"] == [0.7, 0.2, 0.1]
    assert config["train"]["model"]["tokens"] == "fft" and config["train"]["epochs"] == 2
    assert config["seeds"] == [0, 1]
    assert len(results["class_names"]) == 10
    printed = capsys.readouterr().out
    assert results["verdict"] in printed
    assert "accuracy %" in printed and "\nB " in printed


def test_the_same_settings_reproduce_the_same_numbers(tmp_path):
    args = ["--duration", "1.5", "--models", "CNN", "--seeds", "5", "--epochs", "1", *TINY]
    main([*args, "--out", str(tmp_path / "first.json")])
    main([*args, "--out", str(tmp_path / "second.json")])
    first, second = (json.loads((tmp_path / name).read_text()) for name in ("first.json", "second.json"))
    for key in ("accuracy", "f1", "confusion_matrix", "history"):
        assert first["runs"][0][key] == second["runs"][0][key]


def test_workers_default_to_filling_the_cores_and_do_not_change_the_numbers(tmp_path, monkeypatch):
    monkeypatch.setattr("core.lab.training.usable_cpus", lambda: 8)
    assert make_plan(build_parser().parse_args(["--duration", "1.5", *TINY])).workers == 8
    assert make_plan(build_parser().parse_args(["--duration", "1.5", *TINY, "--threads", "3"])).workers == 2
    assert make_plan(build_parser().parse_args(["--duration", "1.5", *TINY, "--workers", "1"])).workers == 1
    assert default_workers(1, cap=2) == 2  # the Fault lab caps the runs side by side
    monkeypatch.setattr("core.lab.training.pick_device", lambda device: torch.device("cuda"))
    assert default_workers(1) == 1  # a GPU takes one run at a time
    monkeypatch.undo()
    args = ["--duration", "1.5", "--models", "A,B", "--seeds", "0,1", "--epochs", "2", *TINY]
    main([*args, "--workers", "1", "--out", str(tmp_path / "alone.json")])
    main([*args, "--workers", "4", "--out", str(tmp_path / "side_by_side.json")])
    alone, side_by_side = (json.loads((tmp_path / name).read_text()) for name in ("alone.json", "side_by_side.json"))
    assert [run["history"] for run in alone["runs"]] == [run["history"] for run in side_by_side["runs"]]
    assert alone["summary"] == side_by_side["summary"]


def test_bad_data_is_one_line_and_exit_status_2(tmp_path, capsys):
    assert main(["--dataset", "csv", "--out", str(tmp_path / "r.json")]) == 2
    assert "needs --data PATH" in capsys.readouterr().err
    assert main(["--dataset", "cwru", "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["--duration", "0.5", "--out", str(tmp_path / "r.json")]) == 2  # too short for 1024-sample windows
    assert "too short" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_bad_settings_exit_with_status_2(tmp_path, capsys):
    assert main(["--duration", "1.5", "--heads", "3", *TINY[:4], "--out", str(tmp_path / "r.json")]) == 2
    assert "must divide" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--models", "A,Z"])
    assert exit_info.value.code == 2


@pytest.mark.skipif(not CWRU_DIR.is_dir(), reason=f"CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
def test_one_epoch_on_cwru_0hp(tmp_path):
    out = tmp_path / "cwru.json"
    code = main([*"--dataset cwru --models A --seeds 0 --epochs 1 --threads 1 --quiet --out".split(), str(out)])
    assert code == 0
    results = load_results(out)
    assert results["class_names"][0] == "normal" and len(results["class_names"]) == 10
    # 0 HP, 1024-sample windows, time windowing: about 10 test windows per class
    assert 90 <= sum(map(sum, results["runs"][0]["confusion_matrix"])) <= 120


def test_every_evaluation_from_the_command_line_with_the_snr_written_with_an_equals_sign(tmp_path, capsys):
    out = tmp_path / "evaluations.json"
    argv = [
        *(
            "--duration 1.0 --loads 0 --models A,B --seeds 0 --epochs 1 --window 128 --patch "
            "16 --heads 2 --layers 1 --threads 1 --windowing time,random --train-loads 0 "
            "--test-loads 1 --snr=-4,0,4,8 --d-model-sweep 16,32 --out"
        ).split(),
        str(out),
    ]
    code = main(argv)
    assert code == 0
    results = load_results(out)
    assert results["noise"]["snr_db"] == [-4.0, 0.0, 4.0, 8.0]
    assert results["cross_load"]["train_loads"] == [0] and results["cross_load"]["test_loads"] == [1]
    assert results["config"]["data"]["loads"] == [0, 1]  # the cross-load loads are the ones read
    assert results["windowing_comparison"]["windowings"] == ["time", "random"]
    assert results["d_model_sweep"]["d_models"] == [16, 32]
    printed = capsys.readouterr().out
    for heading in ("Windowing comparison", "Cross-load accuracy % on 10 classes", "white noise", "d_model sweep"):
        assert heading in printed
    assert "[random windowing]" in printed and "[d_model 32]" in printed
    # before training, the wait of every run the evaluations add, by the one estimate (core.lab.wait)
    plan = make_plan(build_parser().parse_args(argv))
    assert plan_wait_line(plan) in printed.splitlines() and plan.run_count() > 2


def test_the_command_line_of_a_results_config_reproduces_its_settings(tmp_path):
    out = tmp_path / "r.json"
    argv = [
        *(
            "--duration 1.0 --models A,B --seeds 3 --epochs 1 --window 128 --stride 96 "
            "--patch 16 --heads 2 --layers 1 --ff-dim 24 --dropout 0.05 --pe-scale 0.5 "
            "--embed-scale --threads 1 --lr 0.0025 --lr-schedule cosine --patience 3 --shares "
            "0.6,0.2,0.2 --data-seed 4 --split-seed 7 --windowing random,time --train-loads 1 "
            "--test-loads 0,1 --snr=-2.5,6 --d-model-sweep 16,32 --quiet --out"
        ).split(),
        str(out),
    ]
    assert main(argv) == 0
    config = load_results(out)["config"]
    command = command_line(config)
    assert command.startswith("python -m core.experiment ") and "--snr=-2.5,6" in command
    assert "--windowing random,time" in command and "--d-model-sweep 16,32" in command and "--split " not in command
    args = build_parser().parse_args(shlex.split(command)[3:])
    plan = make_plan(args)
    assert plan.config.to_dict() == config["train"]
    assert (plan.models, plan.seeds, plan.metric) == (config["models"], config["seeds"], config["metric"])
    assert plan.evaluations == config["evaluations"]
    assert plan.cutting == {
        "window": 128,
        "stride": 96,
        "shares": (0.6, 0.2, 0.2),
        "windowing": "random",
        "windowing_seed": 7,
    }
    for key, value in plan.data_settings.items():
        assert config["data"][key] == value, key


SPECS = {
    "synthetic": DataSpec("synthetic", data_seed=2, loads=(0, 1), synthetic_duration_s=2.5),
    "cwru folder": DataSpec("cwru", loads=(0, 2), channel="FE", folder="data/cwru"),
    "cwru default folder": DataSpec("cwru"),
    "cwru uploads": DataSpec("cwru", loads=(0,), files=(FileRef("97.mat", "a" * 64), FileRef("105.mat", "b" * 64))),
    "seu": DataSpec("seu", folder="seu files", channel=6, seu_condition="30_2", sample_rate_override=5120.5),
    "csv": DataSpec(
        "csv",
        sample_rate_override=48828.125,
        files=(FileRef("normal run.csv", "c" * 64), FileRef("IR007.csv", "d" * 64)),
    ),
}


@pytest.mark.parametrize("name", list(SPECS))
def test_a_data_spec_round_trips_through_its_dict_and_the_command_line(name, tmp_path, monkeypatch):
    spec = SPECS[name]
    assert DataSpec.from_dict(spec.to_dict()) == spec
    assert DataSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    # files named on the command line are read to record their hash: write files with those hashes' stand-ins
    monkeypatch.chdir(tmp_path)
    contents = {}
    for ref in spec.files:
        contents[ref.name] = f"content of {ref.name}".encode()
        (tmp_path / ref.name).write_bytes(contents[ref.name])
    expected = DataSpec(**{**spec.__dict__, "files": tuple(FileRef.of(n, c) for n, c in contents.items())})
    args = build_parser().parse_args(expected.argv())
    assert DataSpec.from_args(args) == expected


def test_data_spec_loads_uploaded_files_by_content_and_refuses_another_file(tmp_path):
    from core.lab.vibration import example_csv

    content = example_csv()
    spec = DataSpec("csv", files=(FileRef.of("example.csv", content),))
    recordings = spec.load(files={"example.csv": content})
    assert [r.label for r in recordings] == ["normal", "IR007", "OR007"]
    with pytest.raises(DataError, match="example.csv is not the file these settings were made with"):
        spec.load(files={"example.csv": content + b"\n"})
    assert spec.describe(3) == "3 recordings from example.csv"
    with pytest.raises(DataError, match="needs --data PATH"):
        DataSpec("csv")


@pytest.mark.skipif(not CWRU_DIR.is_dir(), reason=f"CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
def test_cross_load_on_cwru_uses_the_nine_fault_classes(tmp_path):
    out = tmp_path / "cross.json"
    code = main(
        [
            *(
                "--dataset cwru --models A --seeds 0 --epochs 1 --threads 1 --train-loads 0 "
                "--test-loads 1 --quiet --out"
            ).split(),
            str(out),
        ]
    )
    assert code == 0
    block = load_results(out)["cross_load"]
    assert block["dropped_classes"] == ["normal"] and len(block["classes"]) == 9
    # 9 files of about 122,000 samples at 1 HP: 118 or 119 whole 1024-sample windows each
    assert 9 * 118 <= block["test_windows"][0] <= 9 * 119


def test_a_cli_run_and_its_reproducing_command_give_the_same_summary(tmp_path):
    first = tmp_path / "first.json"
    argv = (
        "--duration 1.0 --loads 0,1 --models A,B-noPE --seeds 0,1 --epochs 2 --window 128 "
        "--patch 16 --heads 2 --layers 1 --threads 1 --workers 1 --windowing time,random "
        "--snr=-3 --train-loads 0 --test-loads 1 --quiet"
    ).split()
    assert main([*argv, "--out", str(first)]) == 0
    results = load_results(first)
    command = command_line(results["config"])
    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "core.experiment"]
    second = tmp_path / "second.json"
    assert main([*words[3:], "--quiet", "--out", str(second)]) == 0
    again = load_results(second)
    assert again["summary"] == results["summary"] and again["comparisons"] == results["comparisons"]
    for block in ("windowing_comparison", "noise", "cross_load"):
        assert again[block] == results[block], block
    assert command_line(again["config"]) == command
