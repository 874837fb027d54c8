"""AppTest of pages/fault_lab.py: defaults, a tiny training run to the verdict, every source, bad uploads,
Stop, and results that survive a page switch. AppTest does not drive `run_every`, so the tests rerun the
script until the background job has finished."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.lab.data_spec import DataSpec
from core.lab.experiment import results as results_json
from core.lab.figures.study import MAP_TRACES
from core.lab.jobs import JobStatus
from core.lab.models import ModelConfig, check_model_settings
from core.lab.shipped import read_map
from core.lab.study.leak import study_leak
from core.lab.vibration import example_csv
from core.safe_text import markdown_literal
from tests.apptest_utils import (
    ROOT,
    as_array,
    errors,
    figure_traces,
    open_lab,
    set_tiny,
    trace_array,
    train_to_the_end,
)
from tests.apptest_utils import figures as page_figures
from ui.lab import experiment as lab
from ui.lab import keys
from ui.lab.data import LoadedData

CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
MAP_TRACE_NAMES = {name for _, name in MAP_TRACES}


def _is_map(figure: dict) -> bool:
    return any(trace.get("name") in MAP_TRACE_NAMES for trace in figure["data"])


def figures(at: AppTest) -> list[dict]:
    """The page's figures below the short answer's map, in order."""
    return [figure for figure in page_figures(at) if not _is_map(figure)]


def test_the_first_figure_is_the_map_of_the_shipped_version_3_studies_with_its_sentence():
    points, sentence, missing = read_map()
    if not points:
        pytest.skip(f"no version-3 study is shipped in results/ ({', '.join(missing)} missing): the map is not drawn")
    at = open_lab()
    first = page_figures(at)[0]
    assert _is_map(first)
    shown = {(trace["name"], label) for trace in first["data"] for label in trace.get("text") or []}
    assert len(shown) == len(points)  # one labelled point per shipped study and curve level
    xs = sorted(x for trace in first["data"] for x in as_array(trace["x"]))
    np.testing.assert_allclose(xs, sorted(point["x"] for point in points))
    assert sentence in " ".join(m.value for m in at.markdown).replace("\\", "")  # markdown_literal's escapes
    captions = " ".join(c.value for c in at.caption)
    assert all(name in captions for name in missing)  # a study not shipped is named, not silently left out
    assert "Each line is one version-3 study's verdict" in captions  # the lines below the map are version 3's too


@pytest.fixture(scope="module")
def trained() -> AppTest:
    """One tiny A-vs-B run on the synthetic set, shared by the tests that need earlier results."""
    at = open_lab(through_app=True)
    at.multiselect(key="models").set_value(["A", "B"]).run()
    set_tiny(at)
    train_to_the_end(at)
    return at


def test_defaults_show_the_synthetic_data_and_its_signals():
    at = open_lab()
    text = " ".join(m.value for m in at.markdown)
    assert "**Current data:** the built-in synthetic set (seed 0, loads 0 HP): 10 recordings" in text
    charts = figures(at)
    waveform = trace_array(charts[0]["data"][0], "y")
    assert waveform.size == 3000  # the first 0.25 s at 12 kHz
    envelope = charts[2]
    normal = at.session_state[keys.DATA_KEY].recordings[0]
    assert normal.label == "normal"
    assert [s["x0"] for s in envelope["layout"]["shapes"]] == pytest.approx([normal.meta["rpm"] / 60])  # shaft only
    counts = charts[3]["data"]
    assert [trace["name"] for trace in counts] == ["train", "val", "test"]
    assert at.multiselect(key="models").value == list(at.session_state[keys.DEFAULT_MODELS_KEY])
    assert at.radio(key="windowing").value == "time"
    assert at.slider(key="n_seeds").value == 3
    assert at.slider(key="epochs").value == 40  # the CLI's default: at 8 the synthetic set's B had not converged
    assert not any("may not have converged" in caption.value for caption in at.caption)
    assert any(caption.value.startswith("Device: cpu") for caption in at.caption)


def test_fewer_epochs_than_the_default_warn_that_the_models_may_not_have_converged():
    at = open_lab()
    at.slider(key="epochs").set_value(8).run()
    assert any("may not have converged" in caption.value for caption in at.caption)


@pytest.mark.parametrize(("cpus", "workers"), [(1, 1), (2, 2), (16, 2)])
def test_the_page_trains_runs_side_by_side_on_up_to_two_cpus(monkeypatch, cpus, workers):
    monkeypatch.setattr("core.lab.training.usable_cpus", lambda: cpus)
    assert lab.training_workers() == workers


def test_explorer_marks_the_fault_rate_of_the_chosen_class():
    at = open_lab()
    at.selectbox(key="explore_class").set_value("OR014").run()
    shapes = figures(at)[2]["layout"]["shapes"]
    bpfo = [s["x0"] for s in shapes][1]
    assert bpfo / (at.session_state[keys.DATA_KEY].recordings[8].meta["rpm"] / 60) == pytest.approx(3.5848)


def test_the_page_job_trains_side_by_side_with_one_torch_thread_per_run(monkeypatch):
    plans = []
    real_start = lab.jobs.start
    monkeypatch.setattr(
        lab.jobs, "start", lambda plan, owner, workload=None: plans.append(plan) or real_start(plan, owner, workload)
    )
    monkeypatch.setattr("core.lab.training.usable_cpus", lambda: 2)
    at = open_lab({"models": ["A", "B"]})
    set_tiny(at)
    results = train_to_the_end(at)
    assert [plan.workers for plan in plans] == [2]
    assert results["config"]["train"]["threads"] == 1
    assert [(run["model"], run["seed"]) for run in results["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]


def test_a_tiny_run_ends_with_the_metrics_table_and_the_verdict(trained):
    at = trained
    results = at.session_state[keys.RESULTS_KEY]
    results_json.validate_results(results)
    assert [(run["model"], run["seed"]) for run in results["runs"]] == [("A", 0), ("B", 0), ("A", 1), ("B", 1)]
    table = next(frame.value for frame in at.dataframe if "accuracy %" in frame.value.columns)
    assert list(table["model"]) == ["A", "B"]
    accuracies = [run["accuracy"] for run in results["runs"] if run["model"] == "A"]
    mean, sd = np.mean(accuracies), np.std(accuracies, ddof=1)
    assert table.loc[0, "accuracy %"] == f"{100 * mean:.1f} ± {100 * sd:.1f}"
    assert table.loc[1, "vs A (95 % CI, points)"].count("to") == 1
    assert results["verdict"] in [info.value for info in at.info]
    assert "seeds on one split" in results["verdict"] and "within the spread" not in results["verdict"]
    labels = [button.label for button in at.get("download_button")]
    assert {"Results (JSON)", "Runs (CSV)", "Trained weights (torch)"} <= set(labels)
    weights = torch.load(io.BytesIO(at.session_state[keys.WEIGHTS_KEY]), weights_only=True)
    assert sorted(weights) == ["A/seed0", "A/seed1", "B/seed0", "B/seed1"]
    assert all(isinstance(tensor, torch.Tensor) for tensor in weights["B/seed1"].values())
    assert results["config"]["data"]["windowing"] == "time" and results["config"]["data"]["window"] == 256


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("empty.csv", b"", "empty"),
        ("binary.csv", bytes(range(256)) * 8, "binary"),
        ("words.csv", b"signal,label\nabc,normal\ndef,normal\n", "numeric"),
        ("nan.csv", b"signal\n" + b"1.0\n" * 50 + b"nan\n" + b"2.0\n" * 50, "NaN"),
    ],
    ids=["empty", "binary", "non-numeric", "non-finite"],
)
def test_bad_uploads_show_an_error_and_keep_data_and_results(trained, name, content, message):
    at = trained
    before_data = at.session_state[keys.DATA_KEY]
    before_results = at.session_state[keys.RESULTS_KEY]
    at.radio(key="dataset").set_value("csv").run()
    at.file_uploader(key="csv_files").set_value((name, content, "text/csv")).run()
    at.button(key="load_csv").click().run()
    assert not at.exception
    shown = errors(at)
    assert shown and name in shown[0] and message.lower() in shown[0].lower(), shown
    assert at.session_state[keys.DATA_KEY] is before_data
    assert at.session_state[keys.RESULTS_KEY] is before_results
    assert before_results["verdict"] in [info.value for info in at.info]  # the results are still on the page


def test_one_class_upload_is_refused_when_training_starts():
    at = open_lab({"dataset": "csv"})
    one_class = "signal\n" + "\n".join(f"{np.sin(i / 3):.5f}" for i in range(30_000))
    at.file_uploader(key="csv_files").set_value(("normal.csv", one_class.encode(), "text/csv")).run()
    at.button(key="load_csv").click().run()
    assert at.session_state[keys.DATA_KEY].labels == ["normal"]
    assert any("two classes" in e for e in errors(at)), errors(at)
    assert at.button(key="train").disabled


def test_csv_upload_happy_path_trains():
    at = open_lab({"dataset": "csv"})
    at.file_uploader(key="csv_files").set_value(("example.csv", example_csv(), "text/csv")).run()
    at.button(key="load_csv").click().run()
    assert not errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.source == "csv" and data.labels == ["normal", "IR007", "OR007"]
    set_tiny(at, n_seeds=1)
    at.multiselect(key="models").set_value(["A"]).run()
    at.checkbox(key="accept_wide").check().run()  # the example's 33 test windows detect 21 points at best
    results = train_to_the_end(at)
    assert results["class_names"] == ["normal", "IR007", "OR007"]
    assert results["config"]["data"]["dataset"] == "csv"


def test_stop_during_training_keeps_the_page_alive():
    at = open_lab()
    set_tiny(at, epochs=50, n_seeds=5, window=1024)
    at.button(key="train").click().run()
    job = at.session_state[keys.JOB_KEY]
    deadline = time.time() + 60
    while job.status().state != "running" and time.time() < deadline:
        time.sleep(0.1)
    at.run()
    at.button(key="stop").click().run()
    assert job.wait(timeout=60), "the job did not stop"
    assert job.status().state == "stopped"
    at.run()
    assert not at.exception
    assert keys.JOB_KEY not in at.session_state
    assert any("Stopped" in s.value for s in at.success)


class TwoRunsTraining:
    """A job handle whose two runs train side by side, frozen at one moment (AppTest polls it once)."""

    done = False
    plan = None  # not an experiment's Plan: no interim result

    def status(self) -> JobStatus:
        histories = {
            ("B", 1): [{"epoch": 1, "train_loss": 1.0, "val_loss": 1.1, "val_accuracy": 0.4}],
            ("A", 2): [
                {"epoch": 1, "train_loss": 0.9, "val_loss": 1.0, "val_accuracy": 0.5},
                {"epoch": 2, "train_loss": 0.8, "val_loss": 0.9, "val_accuracy": 0.6},
            ],
        }
        return JobStatus(
            job_id=1, state="running", jobs_ahead=0, model="A", seed=2, run_index=2, n_runs=6, epoch=2,
            max_epochs=30, latest=histories[("A", 2)][-1], history=histories[("A", 2)], runs=[], error=None,
            elapsed_seconds=5.0, stage="main", workers=2, training=list(histories), histories=histories,
        )  # fmt: skip

    def stop(self) -> None:
        self.done = True


def test_the_progress_panel_names_both_runs_training_and_draws_both_curves():
    at = open_lab()
    at.session_state[keys.JOB_KEY] = TwoRunsTraining()
    at.run()
    [progress] = at.get("progress")
    assert progress.proto.text.startswith("2 of 6 runs done; training B seed 1 and A seed 2 · ")
    [curves] = [chart for chart in at.get("plotly_chart") if chart.proto.id.endswith("training_curves")]
    accuracy = [as_array(trace["y"]).tolist() for trace in json.loads(curves.proto.spec)["data"][2::3]]
    assert accuracy == [[40.0], [50.0, 60.0]]  # validation accuracy in %: B seed 1's epoch, A seed 2's two


def test_results_survive_switching_pages(trained):
    at = trained
    results = at.session_state[keys.RESULTS_KEY]
    at.switch_page("pages/wavelengths.py").run()
    assert not at.exception
    at.switch_page("pages/fault_lab.py").run()
    assert not at.exception
    assert at.session_state[keys.RESULTS_KEY] is results
    assert results["verdict"] in [info.value for info in at.info]


def test_deep_link_restores_the_experiment_controls():
    at = open_lab(
        {
            "models": ["A", "B-noPE", "CNN"],
            "tokens": "fft",
            "windowing": "random",
            "window": "512",
            "heads": "2",
            "n_seeds": "2",
        }
    )
    assert at.multiselect(key="models").value == ["A", "B-noPE", "CNN"]
    assert at.radio(key="tokens").value == "fft"
    assert at.radio(key="windowing").value == "random"
    assert any("leaks" in w.value for w in at.warning)
    assert at.selectbox(key="window").value == 512
    assert at.selectbox(key="heads").value == 2
    assert at.slider(key="n_seeds").value == 2


def test_plan_problems_are_named_in_core_words_before_training():
    def problem(models, window, patch, d_model, heads):
        return lab.LabSettings(models=tuple(models), window=window, patch=patch, d_model=d_model, heads=heads).problem(
            LoadedData(recordings=[], spec=DataSpec())
        )

    assert problem([], 1024, 32, None, 4) == "Choose at least one model."
    assert "do not cut into patches of 32" in problem(["A"], 1000, 32, None, 4)
    assert "must divide d_model=12" in problem(["B"], 1024, 32, 12, 8)
    assert problem(["A", "B", "CNN"], 1024, 32, 64, 4) is None
    assert problem(["CNN"], 1024, 32, None, 3) is None  # the CNN has no heads
    with pytest.raises(ValueError, match="must divide d_model=12"):  # the same rule guards the CLI's models
        check_model_settings(["B"], 1024, ModelConfig(d_model=12, heads=8))


def test_cwru_folder_happy_path():
    if not CWRU_DIR.is_dir():
        pytest.skip(f"real CWRU files not found at {CWRU_DIR} (see ../shared/data/README.md)")
    at = open_lab({"dataset": "cwru"})
    at.text_input(key="cwru_dir").set_value(str(CWRU_DIR)).run()
    at.button(key="load_cwru").click().run()
    assert not errors(at), errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.source == "cwru" and len(data.labels) == 10
    assert {r.sample_rate for r in data.recordings} == {12000.0}
    at.selectbox(key="explore_class").set_value("IR007").run()
    markers = [s["x0"] for s in figures(at)[2]["layout"]["shapes"]]
    assert markers[1] == pytest.approx(5.4152 * 1797 / 60, rel=0.01)


def test_seu_page_says_it_was_not_run_on_real_files(tmp_path: Path):
    at = open_lab({"dataset": "seu"})
    assert any("has not been run on the real files here" in w.value for w in at.warning)
    at.text_input(key="seu_dir").set_value(str(tmp_path)).run()
    at.button(key="load_seu").click().run()
    assert not at.exception
    assert errors(at)  # an empty folder is a clear error, not a traceback


def test_cwru_uploaded_mat_files():
    if not CWRU_DIR.is_dir():
        pytest.skip(f"real CWRU files not found at {CWRU_DIR} (see ../shared/data/README.md)")
    at = open_lab({"dataset": "cwru"})
    at.radio(key="cwru_from").set_value("uploaded .mat files").run()
    uploads = [(name, (CWRU_DIR / name).read_bytes(), "application/octet-stream") for name in ("97.mat", "130.mat")]
    at.file_uploader(key="cwru_files").set_value(uploads).run()
    at.button(key="load_cwru_files").click().run()
    assert not errors(at), errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.labels == ["normal", "OR007"]
    assert data.recordings[0].meta["resampling"]  # 97.mat: 48 kHz brought down to 12 kHz
    assert any("Not uploaded" in c.value for c in at.caption)


def test_cwru_upload_of_a_renamed_file_is_refused_and_keeps_the_data():
    at = open_lab({"dataset": "cwru"})
    before = at.session_state[keys.DATA_KEY]
    at.radio(key="cwru_from").set_value("uploaded .mat files").run()
    at.file_uploader(key="cwru_files").set_value(
        ("105.mat", b"not a mat file at all", "application/octet-stream")
    ).run()
    at.button(key="load_cwru_files").click().run()
    assert not at.exception
    assert errors(at) and "105.mat" in errors(at)[0]
    assert at.session_state[keys.DATA_KEY] is before


def test_a_link_with_the_old_keys_opens_with_their_values_under_the_new_keys():
    at = open_lab({"split": "random", "cmp": "true", "dloads": ["0", "1"], "trl": "0", "dms": ["16", "32"]})
    assert at.radio(key="windowing").value == "random"
    assert at.checkbox(key="compare_windowings").value is True
    assert at.multiselect(key="train_loads").value == [0]
    assert at.multiselect(key="d_model_sweep").value == [16, 32]
    assert not {"split", "cmp", "dloads", "trl", "dms"} & set(at.query_params)  # the old keys left the link


def test_evaluations_beyond_one_experiment_show_their_tables_and_the_cli_command():
    query = {
        "loads": ["0", "1"],
        "compare_windowings": "true",
        "snr": ["0", "8"],
        "train_loads": ["0", "1"],
        "test_loads": ["1"],
        "d_model_sweep": ["16", "32"],
        "pe_scale_sweep": ["0.0", "1.0"],
    }
    at = open_lab(query)
    assert at.session_state[keys.DATA_KEY].loads == [0, 1]  # the shared link's synthetic loads were loaded
    set_tiny(at)
    results = train_to_the_end(at)
    assert {"windowing_comparison", "noise", "cross_load", "d_model_sweep"} <= set(results)
    subheaders = [s.value for s in at.subheader]
    start = subheaders.index("Time windowing vs random windowing")
    assert subheaders[0] == "The short answer" and start == 3  # after the order test and the attention maps
    assert subheaders[start : start + 4] == [
        "Time windowing vs random windowing",
        "Robustness to noise",
        "Across motor loads",
        "Width of the embedding (d_model)",
    ]
    assert results["d_model_sweep"]["d_models"] == [16, 32] and results["config"]["train"]["model"]["d_model"] == 16
    assert results["noise"]["snr_db"] == [0.0, 8.0]
    study = at.session_state[keys.ONE_FOLD_KEY]  # the press as a study holds the same noisy scores, per seed
    assert study["config"]["snr_db"] == [0.0, 8.0]
    b_at_0 = [run["noise"]["accuracy"][0] for run in study["runs"] if run["model"] == "B"]
    assert b_at_0 == results["noise"]["accuracy"]["B"][0]["values"]
    assert any(m.value.startswith("**The pairs compared with noise**") for m in at.markdown)
    other = at.session_state[keys.OTHER_STUDIES_KEY]["random"]  # the windowing comparison's second windowing
    assert other["config"]["cutting"]["windowing"] == "random" and "dl_one_fold_other" in _download_keys(at)
    leak = study_leak(study, other)
    assert {model: row["diff"] for model, row in leak.items()} == {
        model: row["diff"] for model, row in results["windowing_comparison"]["leak"].items()
    }
    field = study["config"]["sweep"]["field"]  # the first sweep: a study sweeps one field, with its intervals
    assert field in ("d_model", "pe_scale") and study["sweep_runs"]
    second = ({"d_model", "pe_scale"} - {field}).pop()  # the second sweep, a one-fold study of its own
    assert at.session_state[keys.OTHER_STUDIES_KEY][f"{second}_sweep"]["config"]["sweep"]["field"] == second
    assert f"dl_{second}_sweep" in _download_keys(at)
    for each in (field, second):
        assert any(
            m.value.startswith(f"**The encoding's effect at each {markdown_literal(each)}**") for m in at.markdown
        )
    assert results["cross_load"]["train_loads"] == [0, 1] and results["cross_load"]["test_loads"] == [1]
    assert (study["config"]["train_loads"], study["config"]["test_loads"]) == ([0], [1])  # the study's cell
    at_1 = at.session_state[keys.OTHER_STUDIES_KEY]["load1"]  # the further train load's runs, a study of their own
    assert (at_1["config"]["train_loads"], at_1["config"]["test_loads"]) == ([1], [1]) and "dl_load1" in _download_keys(
        at
    )
    for row, each in enumerate((study, at_1)):  # each train load's row of the block is its study's cell, per seed
        b_at_1 = [run["cross_load"]["accuracy"][0] for run in each["runs"] if run["model"] == "B"]
        assert b_at_1 == results["cross_load"]["accuracy"]["B"][row][0]["values"]
    assert any(m.value.startswith("**The pairs compared at each test load**") for m in at.markdown)
    table = next(frame.value for frame in at.dataframe if "trained at" in frame.value.columns)
    assert list(table["trained at"]) == ["load 0", "load 1"] and list(table["test set"]) == ["at load 1"] * 2
    assert set(results["windowing_comparison"]["windowings"]) == {"time", "random"}
    command = at.code[0].value
    assert command.startswith("python -m core.experiment --dataset synthetic")
    assert (
        "--snr=0,8" in command
        and "--train-loads 0,1 --test-loads 1" in command
        and "--windowing time,random" in command
    )
    assert "--d-model-sweep 16,32" in command and "--pe-scale-sweep 0,1" in command
    assert results["pe_scale_sweep"]["scales"] == [0.0, 1.0] and results["pe_scale_sweep"]["models"] == ["B"]


def test_half_chosen_cross_load_is_refused_before_training():
    at = open_lab({"loads": ["0", "1"], "train_loads": "0"})
    assert any("both" in e for e in errors(at)), errors(at)
    assert at.button(key="train").disabled


@pytest.mark.parametrize("folder", ["/etc", "../../..", str(ROOT)])
def test_a_server_folder_outside_the_data_roots_is_refused_and_nothing_is_read(folder):
    at = open_lab({"dataset": "cwru"})
    before = at.session_state[keys.DATA_KEY]
    at.text_input(key="cwru_dir").set_value(folder).run()
    at.button(key="load_cwru").click().run()
    assert not at.exception
    assert errors(at) and "PE_LAB_DATA_DIR" in errors(at)[0], errors(at)
    assert at.session_state[keys.DATA_KEY] is before


def upload(at: AppTest, files: dict[str, bytes]) -> None:
    at.file_uploader(key="csv_files").set_value([(name, content, "text/csv") for name, content in files.items()]).run()


def test_files_of_sensor_columns_load_as_one_recording_each_and_the_preview_decides():
    from tests.test_inspect import four_sensor_file

    at = open_lab({"dataset": "csv", "window": "256"})
    upload(at, {"healthy_load0.csv": four_sensor_file(0), "faulty_load0.csv": four_sensor_file(1, fault=True)})
    preview = at.session_state["csv_preview"]
    assert preview["edited_rows"] == {}
    at.button(key="load_csv").click().run()
    assert not errors(at), errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.labels == ["healthy_load0", "faulty_load0"] and data.recordings[0].meta["column"] == "s1"
    text = " ".join(m.value for m in at.markdown)
    assert "classes healthy_load0, faulty_load0." in text
    set_tiny(at, n_seeds=1)
    at.multiselect(key="models").set_value(["A"]).run()
    at.checkbox(key="accept_wide").check().run()  # a few seconds of data: too few test windows, and it says so
    results = train_to_the_end(at)
    assert results["class_names"] == ["healthy_load0", "faulty_load0"]
    # a role changed in the keyed preview: the class and the channel follow, and the command carries them
    at.session_state["csv_preview"] = {
        "edited_rows": {0: {"class": "healthy", "channel": "s3"}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    at.button(key="load_csv").click().run()
    data = at.session_state[keys.DATA_KEY]
    assert data.labels == ["healthy", "faulty_load0"] and data.recordings[0].meta["column"] == "s3"
    assert data.spec.files[0].choices() == {"label": "healthy", "channel": "s3"}
    assert "--files-spec pe_lab_files.json" in " ".join(data.spec.argv())
    results = train_to_the_end(at)
    assert "--files-spec pe_lab_files.json" in at.code[0].value
    assert any(b.label.startswith("Per-file choices") for b in at.get("download_button"))
    assert results["config"]["data"]["files"][0]["label"] == "healthy"


def test_the_class_prefix_switch_and_a_flat_channel_refused_at_load_keeping_the_data_there_was():
    rows = "s1,s2\n" + "\n".join(f"{np.sin(i / 3):.4f},0.0" for i in range(20_000))
    at = open_lab({"dataset": "csv"})
    before = at.session_state[keys.DATA_KEY]
    upload(at, {"healthy_load0.csv": rows.encode(), "healthy_load50.csv": rows.encode()})
    at.checkbox(key="class_prefix").check().run()
    at.session_state["csv_preview"] = {"edited_rows": {1: {"channel": "s2"}}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.button(key="load_csv").click().run()
    assert any(e.startswith("Not loaded: healthy_load50.csv, channel s2 is flat") for e in errors(at)), errors(at)
    assert at.session_state[keys.DATA_KEY] is before  # refused data is dropped; the data the visitor had stays
    at.session_state["csv_preview"] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
    at.run()
    at.button(key="load_csv").click().run()
    assert not any(e.startswith("Not loaded") for e in errors(at)), errors(at)
    assert at.session_state[keys.DATA_KEY].labels == ["healthy_load"]  # both files, one class by the prefix


def test_inside_the_trained_models_order_test_and_attention_maps(trained):
    at = trained
    results = at.session_state[keys.RESULTS_KEY]
    order = next(frame.value for frame in at.dataframe if "drop, shuffled tokens (points)" in frame.value.columns)
    assert list(order["model"]) == ["A", "B"] and order.loc[0, "drop, shuffled tokens (points)"].startswith("+0.0")
    assert set(results["order_summary"]) == {"A", "B"}
    assert not any(c.proto.id.endswith("fig_attention_layer1") for c in at.get("plotly_chart"))  # on request only
    at.toggle(key="att_show").set_value(True).run()
    names = [chart.proto.id for chart in at.get("plotly_chart")]
    assert any(n.endswith("fig_attention_layer1") for n in names)
    assert any(n.endswith("fig_attention_offset") for n in names)
    at.slider(key="att_window").set_value(3).run()
    at.checkbox(key="att_heads").check().run()
    assert not at.exception
    maps = figure_traces(at, "attention_layer1")
    assert len(maps) == 2 * 4  # A and B, four heads each
    assert any(c.value.startswith("Window 3: class") for c in at.caption)


def test_a_reopened_results_file_shows_the_order_test_and_asks_to_retrain_for_attention(trained):
    at = trained
    saved = json.dumps(at.session_state[keys.RESULTS_KEY]).encode()
    fresh = open_lab()
    fresh.file_uploader(key="open_json").set_value(("results.json", saved, "application/json")).run()
    fresh.button(key="open_file").click().run()
    assert not fresh.exception
    assert any("drop, shuffled tokens (points)" in frame.value.columns for frame in fresh.dataframe)
    fresh.toggle(key="att_show").set_value(True).run()
    assert any("Attention maps need the trained weights" in i.value for i in fresh.info)


def test_a_press_offers_its_runs_as_a_one_fold_study_and_a_reopened_file_does_not(trained):
    from core.lab.study.contract import validate_study

    at = trained
    results, study = at.session_state[keys.RESULTS_KEY], at.session_state[keys.ONE_FOLD_KEY]
    validate_study(study)
    assert study["config"]["design"] == "one-fold" and "dl_one_fold" in _download_keys(at)
    key = ("model", "seed", "accuracy", "confusion_matrix")
    assert [tuple(r[k] for k in key) for r in study["runs"]] == [tuple(r[k] for k in key) for r in results["runs"]]
    assert study["comparisons"][0]["ci95"] == results["comparisons"][0]["ci95"]
    assert study["config"]["command"].startswith("python -m core.experiment")
    fresh = open_lab()
    fresh.file_uploader(key="open_json").set_value(("r.json", json.dumps(results).encode(), "application/json")).run()
    fresh.button(key="open_file").click().run()
    assert fresh.session_state[keys.ONE_FOLD_KEY] is None and "dl_one_fold" not in _download_keys(fresh)


def _download_keys(at: AppTest) -> list[str]:
    """The keys of the page's download buttons (the user key ends each element id)."""
    return [button.proto.id.rsplit("-", 1)[-1] for button in at.get("download_button")]


def test_a_new_data_seed_loads_at_once_and_a_link_with_it_opens_the_same_view():
    at = open_lab()
    at.number_input(key="data_seed").set_value(4).run()
    assert not at.exception
    assert at.number_input(key="data_seed").value == 4  # bound: the browser writes it to the link as ?data_seed=4
    assert at.session_state[keys.DATA_KEY].spec.data_seed == 4  # loaded without pressing "Use the synthetic set"
    text = " ".join(m.value for m in at.markdown)
    assert "**Current data:** the built-in synthetic set (seed 4, loads 0 HP)" in text
    changed = trace_array(figures(at)[0]["data"][0], "y")
    seed0 = trace_array(figures(open_lab())[0]["data"][0], "y")
    assert not np.array_equal(changed, seed0)  # another set of signals, not seed 0 relabelled
    link = open_lab({"data_seed": "4"})  # a fresh session opened from that link
    assert link.session_state[keys.DATA_KEY].spec.data_seed == 4
    assert "(seed 4, loads 0 HP)" in " ".join(m.value for m in link.markdown)
    assert np.array_equal(trace_array(figures(link)[0]["data"][0], "y"), changed)  # the view the link names


def test_new_synthetic_loads_load_at_once():
    at = open_lab()
    at.multiselect(key="loads").set_value([0, 2]).run()
    assert not at.exception
    assert at.session_state[keys.DATA_KEY].loads == [0, 2]
    assert "(seed 0, loads 0, 2 HP)" in " ".join(m.value for m in at.markdown)


def test_the_signals_and_the_result_figures_each_offer_one_download(trained):
    at = trained
    downloads = _download_keys(at)
    assert "csv_signals" in downloads and "csv_result_figures" in downloads
    assert not {"csv_waveform", "csv_spectrum", "csv_envelope_spectrum", "csv_metrics", "csv_per_class_f1"} & set(
        downloads
    )  # no button under each small figure
    labels = {button.proto.id.rsplit("-", 1)[-1]: button.proto.label for button in at.get("download_button")}
    assert labels["csv_result_figures"] == "Download the data of this section (zip of CSVs)"


def test_an_uploaded_file_is_your_signal_and_the_file_name_box_shows_only_where_a_file_name_gives_a_class():
    from tests.test_inspect import four_sensor_file

    at = open_lab({"dataset": "csv"})
    upload(at, {"example.csv": example_csv()})  # a label column names the classes: the file name names none
    assert "class_prefix" not in [box.key for box in at.checkbox]
    at.button(key="load_csv").click().run()
    assert at.session_state[keys.DATA_KEY].source == "csv"
    assert figures(at)[0]["layout"]["yaxis"]["title"]["text"] == "your signal (as in your file)"
    words = [element.value for kind in (at.markdown, at.caption) for element in kind]
    assert not [text for text in words if "ball" in text]  # no bearing talk about the visitor's own signal
    assert any(
        text.startswith("The **envelope** spectrum shows how often bursts") and "your signal" in text for text in words
    )
    upload(at, {"healthy_load0.csv": four_sensor_file(0), "faulty_load0.csv": four_sensor_file(1, fault=True)})
    assert "class_prefix" in [box.key for box in at.checkbox]  # one recording per file: its name is its class


def test_the_synthetic_bearings_keep_their_acceleration_axis_and_the_fault_that_strikes_per_ball():
    at = open_lab()
    assert figures(at)[0]["layout"]["yaxis"]["title"]["text"] == "acceleration"
    assert any("once per passing ball" in m.value for m in at.markdown)


def test_controls_that_do_not_apply_are_hidden_d_model_without_an_embedding_and_folds_outside_time_cv():
    at = open_lab({"models": ["A"], "d_model": "64"})  # no model with an embedding: no width to choose
    assert "d_model" not in [box.key for box in at.selectbox]
    assert dict(at.query_params)["d_model"] == "64"  # the link's width is kept, not dropped, for when it applies again
    at.multiselect(key="models").set_value(["A", "B"]).run()
    assert at.selectbox(key="d_model").value == 64
    assert "study_folds" in [slider.key for slider in at.slider]
    at.radio(key="study_design").set_value("load-out").run()  # one fold per load held out: no count to choose
    assert "study_folds" not in [slider.key for slider in at.slider]
