"""The Fault lab's decisions that moved out of ui/ into core, checked against hand-computed values: the shipped
studies (core.lab.shipped), a study's command line (core.lab.study.command), the wait before a run
(core.lab.wait), the confusion matrices summed over seeds (core.lab.report) and the table of a visitor's own
files read back into a DataSpec (core.lab.files_table)."""

from __future__ import annotations

import io
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.io

from core.lab.cli_args import train_config
from core.lab.data_spec import DataSpec, FileRef
from core.lab.files_table import COLUMNS, proposed_table, spec_from_table
from core.lab.models import ModelConfig
from core.lab.report import confusion_frame, mean_per_class_f1, summed_confusion
from core.lab.shipped import SHIPPED_STUDIES, read_shipped_studies, results_dir
from core.lab.study.cli import build_parser
from core.lab.study.command import study_command
from core.lab.study.folds import make_folds
from core.lab.training import TrainConfig
from core.lab.vibration import DataError, Recording, synthetic_bearing_set
from core.lab.vibration.inspect import inspect_vibration_file, propose
from core.lab.vibration.matlab import inspect_mat
from core.lab.vibration.windows import make_windows
from core.lab.wait import (
    Workload,
    describe_wait,
    estimate,
    fold_training_windows,
    page_refusal,
    plan_training_windows,
    windows_per_second,
)
from core.limits import MAX_PAGE_RUNS
from tests.apptest_utils import ROOT

# --- the shipped studies -------------------------------------------------------------------------------------


def test_the_shipped_studies_are_the_protocols_five_files_in_the_repositorys_results_folder():
    assert results_dir() == ROOT / "results"
    assert list(SHIPPED_STUDIES) == [
        "study_order_control.json",
        "study_cwru_0hp_time-cv.json.gz",
        "study_spectraquest_load-out.json",
        "study_cwru_load-out.json.gz",
        "study_cwru_fault-size.json",
    ]
    assert all((results_dir() / name).is_file() for name in SHIPPED_STUDIES)
    with pytest.raises(TypeError):  # the page reads it on every visit: nothing may change it
        SHIPPED_STUDIES["mine.json"] = "mine"  # type: ignore[index]


def test_a_shipped_study_that_is_missing_or_refused_is_left_out_and_the_others_keep_their_titles(tmp_path):
    first, second, *_ = SHIPPED_STUDIES
    (tmp_path / second).write_bytes((results_dir() / second).read_bytes())
    (tmp_path / first).write_bytes(b"{not json")  # refused by core.lab.reopen; the others are missing
    studies = read_shipped_studies(tmp_path)
    assert list(studies) == [SHIPPED_STUDIES[second]]
    study = studies["CWRU bearings at 0 HP, each recording cut in time (5 folds, 3 repeats)"]
    primary = study["comparisons"][0]
    assert study["kind"] == "study" and (primary["a"], primary["b"], primary["primary"]) == ("B-noPE", "B", True)


# --- the study's command line ----------------------------------------------------------------------------------

PAGE_DEFAULTS = (
    "python -m core.study --dataset synthetic --loads 0 --duration 10 --data-seed 0 --window 1024 --design time-cv "
    "--folds 5 --models A,B --tokens time --patch 32 --heads 4 --layers 2 --dropout 0.1 --pe-base 10000 "
    "--pe-scale 1 --input-dropout-for-all --seeds 0,1,2 --epochs 40 --batch-size 64 "
    "--learning-rate 0.003 --lr-schedule constant --weight-decay 0.01 --patience 10 --warmup-epochs 1 --threads 1 "
    "--out study.json"
)


def test_the_study_command_of_the_pages_defaults_is_written_out_in_full():
    command = study_command(DataSpec(), "time-cv", 5, range(3), ("A", "B"), 1024, TrainConfig())
    assert command == PAGE_DEFAULTS
    # the same command as the page printed it before --learning-rate (--lr) still runs, to the same settings
    parser = build_parser()
    printed_before = PAGE_DEFAULTS.replace("--learning-rate", "--lr")
    assert parser.parse_args(printed_before.split()[3:]) == parser.parse_args(PAGE_DEFAULTS.split()[3:])


def test_every_setting_of_a_study_command_parses_back_to_the_same_value():
    spec = DataSpec(dataset="synthetic", data_seed=3, loads=(0, 2), synthetic_duration_s=4.5)
    model = ModelConfig(
        patch=16, tokens="fft", d_model=64, heads=2, layers=3, ff_dim=96, dropout=0.2, pe_scale=0.3, embed_scale=True
    )
    config = TrainConfig(
        model=model, epochs=7, batch_size=32, learning_rate=1e-3, patience=4, warmup_epochs=0, lr_schedule="cosine"
    )
    command = study_command(
        spec,
        "load-out",
        4,
        [0, 1, 5],
        ["A", "B", "CNN"],
        512,
        config,
        stride=256,
        margin=1.5,
        metric="f1",
        tune_lr=True,
    )
    words = shlex.split(command)
    assert words[:3] == ["python", "-m", "core.study"]
    args = build_parser().parse_args(words[3:])
    assert (args.design, args.folds, args.seeds, args.models) == ("load-out", 4, [0, 1, 5], ["A", "B", "CNN"])
    assert (args.window, args.stride, args.margin, args.metric, args.tune_lr) == (512, 256, 1.5, "f1", True)
    assert args.out == Path("study.json")
    assert DataSpec.from_args(args) == spec
    assert train_config(args) == config


def test_a_study_command_quotes_a_file_name_with_spaces_so_the_shell_reads_it_whole():
    spec = DataSpec(dataset="csv", files=(FileRef(name="my run; rm -rf.csv", sha256="0" * 64),))
    command = study_command(spec, "time-cv", 3, [0], ["A"], 256, TrainConfig(), out="out dir/study.json")
    assert "--data 'my run; rm -rf.csv'" in command and command.endswith("--out 'out dir/study.json'")
    args = build_parser().parse_args(shlex.split(command)[3:])
    assert args.data == ["my run; rm -rf.csv"] and args.out == Path("out dir/study.json")


# --- the wait before a run ---------------------------------------------------------------------------------------


def two_classes(length: int) -> list[Recording]:
    """Two recordings of `length` samples at 12 kHz, one per class."""
    rng = np.random.default_rng(0)
    return [Recording(rng.normal(size=length), 12_000.0, label) for label in ("normal", "IR007")]


def test_the_expected_seconds_are_runs_times_windows_times_epochs_at_the_speed_side_by_side():
    assert windows_per_second(1024) == 4_800 and windows_per_second(256) == 19_200
    assert estimate(Workload(10, 1_000, 40, workers=2)) == pytest.approx(10 * 1_000 * 40 / 4_800 / 2)
    assert estimate(Workload(1, 480, 10)) == pytest.approx(1.0)
    assert estimate(Workload(1, 480, 10, workers=0)) == pytest.approx(1.0)  # no workers: one at a time
    assert estimate(Workload(3, 480, 10, workers=2)) == pytest.approx(2.0)  # 3 runs on 2 workers: 2 rounds
    assert estimate(Workload(1, 480, 10, window=256)) == pytest.approx(0.25)  # a quarter of the samples


def test_a_plans_training_windows_are_those_of_its_real_cut():
    # 10,000 samples, 256-sample windows: the train block ends at round(0.7 * (10,000 - 2 * 256)) = 6,642, so
    # its windows start at 0, 256, ..., 6,144: 25 per recording
    assert plan_training_windows(two_classes(10_000), {"window": 256, "windowing": "time"}) == 50
    synthetic = synthetic_bearing_set(duration_s=2.0)
    for cutting in ({"window": 512, "windowing": "time"}, {"window": 256, "windowing": "random", "seed": 3}):
        assert plan_training_windows(synthetic, cutting) == len(make_windows(synthetic, **cutting).x_train)


def test_a_studys_training_windows_are_those_of_each_real_fold_for_3_and_5_folds():
    # 12,000 samples, 200-sample windows; training windows keep one window clear of the test and validation
    # blocks. 3 blocks of 4,000: fold 0 trains on 8,200..11,800 (19), fold 1 on 0..3,600 (19), fold 2 on
    # 4,200..7,600 (18). 5 blocks of 2,400: 35, 11 + 23, 23 + 11, 35 and 34, per recording.
    assert fold_training_windows(two_classes(12_000), "time-cv", 200, 3) == [38, 38, 36]
    assert fold_training_windows(two_classes(12_000), "time-cv", 200, 5) == [70, 68, 68, 70, 68]
    synthetic = synthetic_bearing_set(duration_s=2.0)
    for folds in (3, 5):
        real = [len(fold.windows.x_train) for fold in make_folds("time-cv", synthetic, 256, folds)]
        assert fold_training_windows(synthetic, "time-cv", 256, folds) == real


@pytest.mark.parametrize("design", ["time-cv", "load-out", "fault-size"])
def test_every_designs_counted_training_windows_equal_its_cut_folds_and_copy_no_window(design):
    import tracemalloc

    recordings = synthetic_bearing_set(loads=(0, 1), duration_s=4.0)
    real = [len(fold.windows.x_train) for fold in make_folds(design, recordings, 128, 4, stride=64)]
    tracemalloc.start()
    counted = fold_training_windows(recordings, design, 128, 4, stride=64)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert counted == real
    # the cut windows of one fold (float32, 128 samples each) against what counting them took at its peak
    assert peak < sum(real) * 128 * 4 / len(real) / 10


def test_counting_a_plans_training_windows_copies_no_window_and_refuses_as_the_cut_does():
    import tracemalloc

    recordings = synthetic_bearing_set(loads=(0, 1, 2, 3), duration_s=4.0)
    cutting = {"window": 64, "stride": 32, "windowing": "random", "seed": 1}
    tracemalloc.start()
    counted = plan_training_windows(recordings, cutting)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert counted == len(make_windows(recordings, **cutting).x_train)
    assert peak < counted * 64 * 4 / 10
    with pytest.raises(ValueError, match="windowing must be one of"):
        plan_training_windows(recordings, {"window": 64, "windowing": "sideways"})


def test_a_wait_reads_in_seconds_under_three_minutes_and_in_minutes_from_three():
    assert describe_wait(40) == "about 40 s"
    assert describe_wait(0.2) == "about 1 s"
    assert describe_wait(59.4) == "about 59 s"
    assert describe_wait(59.6) == "about 60 s"
    assert describe_wait(66) == "about 65 s"  # issue 31: a 66 s press was told "about 1 min", a 75 s one "about 2 min"
    assert describe_wait(75) == "about 75 s"
    assert describe_wait(90) == "about 90 s"
    assert describe_wait(170) == "about 170 s"
    assert describe_wait(177.4) == "about 175 s"
    assert describe_wait(177.6) == "about 3 min"
    assert describe_wait(200) == "about 3 min"
    assert describe_wait(3_600) == "about 60 min"


def test_the_page_refuses_more_runs_or_seconds_than_one_press_may_start_in_one_line():
    assert page_refusal(MAX_PAGE_RUNS, 600) is None
    runs = page_refusal(MAX_PAGE_RUNS + 1, 10)
    assert runs.startswith(f"Too large for a shared page ({MAX_PAGE_RUNS + 1} training runs, about 10 s; one press")
    seconds = page_refusal(6, 601)
    assert "(6 training runs, about 10 min;" in seconds and "\n" not in seconds


# --- confusion matrices and per-class F1 over seeds ----------------------------------------------------------


RESULTS = {
    "runs": [
        {"model": "A", "seed": 0, "confusion_matrix": [[5, 1], [0, 4]], "per_class_f1": [0.9, 0.8]},
        {"model": "B", "seed": 0, "confusion_matrix": [[6, 0], [2, 2]], "per_class_f1": [0.8, 0.6]},
        {"model": "A", "seed": 1, "confusion_matrix": [[3, 3], [1, 3]], "per_class_f1": [0.7, 0.6]},
        {"model": "A", "seed": 2, "confusion_matrix": [[6, 0], [0, 4]], "per_class_f1": [1.0, 1.0]},
    ]
}


def test_confusion_matrices_are_summed_over_each_models_seeds():
    matrices = summed_confusion(RESULTS)
    assert list(matrices) == ["A", "B"]
    assert matrices["A"].tolist() == [[14, 4], [1, 11]]  # 5+3+6, 1+3+0; 0+1+0, 4+3+4
    assert matrices["B"].tolist() == [[6, 0], [2, 2]]
    assert RESULTS["runs"][0]["confusion_matrix"] == [[5, 1], [0, 4]]  # the runs are not changed


def test_per_class_f1_is_averaged_over_each_models_seeds():
    f1 = mean_per_class_f1(RESULTS)
    assert f1["A"] == pytest.approx([(0.9 + 0.7 + 1.0) / 3, (0.8 + 0.6 + 1.0) / 3])
    assert f1["B"] == pytest.approx([0.8, 0.6])


def test_the_confusion_frame_lists_every_cell_of_every_model():
    frame = confusion_frame(summed_confusion(RESULTS), ["normal", "IR007"])
    assert list(frame.columns) == ["model", "true", "predicted", "windows"]
    assert frame.values.tolist()[:4] == [
        ["A", "normal", "normal", 14],
        ["A", "normal", "IR007", 4],
        ["A", "IR007", "normal", 1],
        ["A", "IR007", "IR007", 11],
    ]
    assert len(frame) == 8 and frame["windows"].sum() == 30 + 10


# --- a visitor's own files: the table and the DataSpec it gives -----------------------------------------------


def csv_file(header: str, columns: int, rows: int = 200) -> bytes:
    values = np.random.default_rng(columns).normal(size=(rows, columns))
    return (header + "\n" + "\n".join(",".join(f"{v:.4f}" for v in row) for row in values)).encode()


def mat_file() -> bytes:
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"acc": np.sin(np.arange(5_000) / 3.0), "other": np.cos(np.arange(300) / 2.0), "fs": 48e3})
    return buffer.getvalue()


FILES = {
    "normal_load0.csv": csv_file("s1,s2", 2),
    "IR007.csv": csv_file("signal", 1),
    "both.csv": csv_file("normal,IR007", 2),
    "ball_1.mat": mat_file(),
}
DIGESTS = [(name, f"{index:064x}") for index, name in enumerate(FILES)]


def inspected() -> list:
    found = [
        inspect_mat(content, name) if name.endswith(".mat") else inspect_vibration_file(content, name=name)
        for name, content in FILES.items()
    ]
    tables = iter(propose([i for i in found if not name_is_mat(i)]))
    return [i if name_is_mat(i) else next(tables) for i in found]


def name_is_mat(inspection) -> bool:
    return inspection.name.endswith(".mat")


def test_the_proposed_table_has_one_row_per_file_with_the_readers_proposal():
    table = proposed_table(list(FILES), [*inspected()[:3], "bad.bin: not a vibration file"], False, 12_000.0)
    assert list(table.columns) == list(COLUMNS)
    assert table[["file", "layout", "class", "channel", "sample rate (Hz)"]].values.tolist() == [
        ["normal_load0.csv", "channels", "normal_load0", "s1", 12_000.0],
        ["IR007.csv", "single", "IR007", "", 12_000.0],
        ["both.csv", "classes", "", "", 12_000.0],
        ["ball_1.mat", "unreadable", "", "", 0.0],
    ]
    assert table["found"].iloc[3] == "bad.bin: not a vibration file"
    by_prefix = proposed_table(list(FILES), inspected(), True, 12_000.0)
    assert by_prefix["class"].tolist() == ["normal_load", "IR", "", "ball"]
    assert by_prefix.iloc[3][["layout", "channel", "sample rate (Hz)"]].tolist() == ["mat", "acc", 48_000.0]


def test_an_unedited_table_gives_a_spec_without_choices():
    found = inspected()
    spec = spec_from_table(DIGESTS, found, proposed_table(list(FILES), found, False, 12_000.0), None)
    assert spec == DataSpec(dataset="csv", files=tuple(FileRef(name=n, sha256=d) for n, d in DIGESTS))


def test_each_edited_cell_becomes_a_choice_of_its_file_and_nothing_else_does():
    found = inspected()
    table = proposed_table(list(FILES), found, True, 6_000.0)  # as the page proposes it with 6 kHz typed
    table.loc[0, ["channel", "sample rate (Hz)"]] = ["s2", 24_000.0]
    table.loc[2, "layout"] = "channels"
    table.loc[3, ["channel", "sample rate (Hz)"]] = ["other", np.nan]  # a cleared rate keeps the file's
    spec = spec_from_table(DIGESTS, found, table, 6_000.0)
    assert spec.sample_rate_override == 6_000.0
    assert [ref.choices() for ref in spec.files] == [
        {"label": "normal_load", "channel": "s2", "sample_rate": 24_000.0},
        {"label": "IR"},  # classes by the name's prefix differ from the names
        {"interpretation": "channels"},  # no class typed: the file's name gives it
        {"variable": "other", "label": "ball"},
    ]


def test_a_row_whose_file_cannot_be_read_or_no_files_at_all_is_refused_naming_it():
    found = [*inspected()[:3], "not a MATLAB file"]
    table = proposed_table(list(FILES), found, False, 12_000.0)
    with pytest.raises(DataError, match=r"^ball_1\.mat: not a MATLAB file$"):
        spec_from_table(DIGESTS, found, table, None)
    with pytest.raises(DataError, match="Choose one or more files first"):
        spec_from_table([], [], pd.DataFrame(columns=list(COLUMNS)), None)


def test_an_unreadable_file_is_named_once_in_its_refusal():
    from core.lab.files_table import file_choices
    from core.lab.vibration import DataError

    with pytest.raises(DataError) as named:
        file_choices("bomb.mat", "bomb.mat expands to more than 64 MB when read", {}, None)
    assert str(named.value) == "bomb.mat expands to more than 64 MB when read"
    with pytest.raises(DataError) as unnamed:
        file_choices("x.csv", "no numeric column", {}, None)
    assert str(unnamed.value) == "x.csv: no numeric column"
