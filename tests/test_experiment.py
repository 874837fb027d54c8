"""The experiment CLI: schema-valid JSON from a tiny synthetic run, clean errors, and CWRU when it is there."""

import json
from pathlib import Path

import pytest

from core.experiment import main
from core.results import load_results

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"
TINY = ["--window", "256", "--patch", "16", "--heads", "2", "--layers", "1", "--threads", "1", "--quiet"]


def test_a_tiny_synthetic_run_writes_schema_valid_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(
        ["--dataset", "synthetic", "--duration", "1.5", "--models", "A,B", "--seeds", "0,1", "--epochs", "2",
         "--tokens", "fft", "--out", str(out), *TINY]
    )
    assert code == 0
    results = load_results(out)  # validates against the contract
    assert [(run["model"], run["seed"]) for run in results["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    assert all(run["epochs"] <= 2 for run in results["runs"])
    config = results["config"]
    assert config["data"]["dataset"] == "synthetic" and config["data"]["window"] == 256
    assert config["data"]["split_mode"] == "time" and config["data"]["shares"] == [0.7, 0.2, 0.1]
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
    code = main(["--dataset", "cwru", "--models", "A", "--seeds", "0", "--epochs", "1", "--threads", "1",
                 "--quiet", "--out", str(out)])
    assert code == 0
    results = load_results(out)
    assert results["class_names"][0] == "normal" and len(results["class_names"]) == 10
    # 0 HP, 1024-sample windows, time split: about 10 test windows per class
    assert 90 <= sum(map(sum, results["runs"][0]["confusion_matrix"])) <= 120
