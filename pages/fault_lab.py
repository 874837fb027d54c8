"""Fault lab: train bearing-fault classifiers with and without positional encoding and compare them honestly."""

import json

import pandas as pd
import streamlit as st

from core import evaluation
from core import results as results_json
from core.experiment import command_line
from core.explorer import signal_views
from core.figures import fault_lab as figures
from core.models import MODEL_NAMES
from core.vibration import DataError, example_csv
from core.vibration.seu import DEFAULT_SAMPLE_RATE as SEU_DEFAULT_RATE
from ui import fault_lab as lab
from ui.common import page_intro, show_figure
from ui.entry import use_app_navigation

use_app_navigation()

SOURCES = {
    "synthetic": "built-in, ready at once",
    "cwru": "Case Western bearing data",
    "seu": "Southeast University gearbox",
    "csv": "your own CSV files",
}
MODEL_HELP = {
    "A": "Transformer encoder on the raw tokens (d_model = patch), no positional encoding",
    "B": "input embedding + sinusoidal PE + the same encoder",
    "B-noPE": "B without the PE: the embedding alone",
    "A+PE": "A plus the PE: the PE alone",
    "B-learned": "B with a learned position table instead of the sinusoids",
    "B-concat": "B with the PE concatenated to the embedding instead of added",
    "CNN": "a small wide-first-kernel 1-D CNN (WDCNN style), the practitioner's baseline",
}
DEFAULT_DATA_DIR = "../shared/data/cwru"

page_intro(
    "Fault lab",
    "Does positional encoding help a Transformer tell bearing faults apart? Model **A** feeds the signal's "
    "tokens straight into a Transformer encoder; model **B** first embeds them and adds the sinusoidal "
    "encoding. Every number below comes from a stated split and several seeds (mean ± sd), and the same run "
    "can be repeated headless with `python -m core.experiment`.",
)

# --- 1. Data ---------------------------------------------------------------------------------------
st.header("1 · Data")
# Options are the short codes (they go into shared links as ?src=csv); the captions say what they are.
source = st.radio("Source", list(SOURCES), captions=list(SOURCES.values()), horizontal=True, key="src", bind="query-params")
if source == "synthetic":
    left, right = st.columns(2)
    seed = left.number_input("Data seed", 0, 999, 0, key="dseed", bind="query-params")
    loads = right.multiselect("Motor loads (HP)", [0, 1, 2, 3], default=[0], key="dloads", bind="query-params")
    st.caption("Ten CWRU-like classes modelled from the SKF 6205 geometry: impacts at the fault rate ring a "
               "structural resonance, with slip, load-zone modulation and the real files' levels.")
    if st.button("Use the synthetic set", key="load_synthetic"):
        lab.replace_data(lambda: lab.synthetic(int(seed), loads))
elif source == "cwru":
    how = st.radio("From", ["a local folder", "the official site (download)", "uploaded .mat files"], horizontal=True, key="cwru_from")
    left, right = st.columns(2)
    loads = left.multiselect("Motor loads (HP)", [0, 1, 2, 3], default=[0], key="cloads", bind="query-params")
    channel = right.selectbox("Channel", ["DE", "FE", "BA"], key="cch", bind="query-params",
                              help="Drive end, fan end, base. The normal file 97 has no BA channel.")
    st.caption("12 kHz drive-end set. The normal file 97.mat was sampled at 48 kHz and is resampled to 12 kHz, "
               "or every model would learn the sample rate instead of the fault. At 1-3 HP only the nine fault "
               "classes exist here (no normal files 98-100).")
    if how == "a local folder":
        folder = st.text_input("Folder with 97.mat, 105.mat, …", DEFAULT_DATA_DIR, key="cwru_dir")
        if st.button("Load CWRU", key="load_cwru"):
            lab.replace_data(lambda: lab.cwru_folder(folder, loads, channel))
    elif how == "the official site (download)":
        target = st.text_input("Save to folder", str(lab.DOWNLOAD_DIR), key="cwru_target")
        if st.button("Download and load", key="download_cwru"):
            bar = st.progress(0.0, text="Downloading…")
            lab.replace_data(lambda: lab.cwru_download(target, loads, channel, bar))
    else:
        files = st.file_uploader("CWRU .mat files, with their official names", type=["mat"], accept_multiple_files=True, key="cwru_files")
        if st.button("Load uploaded files", key="load_cwru_files"):
            lab.replace_data(lambda: lab.cwru_uploads(files, loads, channel))
elif source == "seu":
    st.warning("The SEU comparison has not been run on the real files here: they could not be obtained. "
               "The loader follows the publishers' documented layout and is tested on files in that layout.")
    folder = st.text_input("Folder with health_20_0.csv, ball_20_0.csv, …", key="seu_dir")
    left, middle, right = st.columns(3)
    condition = left.selectbox("Condition (speed Hz _ load V)", ["20_0", "30_2"], key="scond", bind="query-params")
    channel = middle.number_input("Channel (1-8)", 1, 8, 2, key="sch", bind="query-params",
                                  help="1 motor, 2-4 planetary gearbox x/y/z, 5 torque, 6-8 parallel gearbox x/y/z")
    rate = right.number_input("Sample rate (Hz, not published)", 100.0, 1e6, SEU_DEFAULT_RATE, key="srate")
    if st.button("Load SEU", key="load_seu"):
        lab.replace_data(lambda: lab.seu_folder(folder, condition, int(channel), float(rate)))
else:
    files = st.file_uploader("CSV files: one per class, or one labelled table", type=["csv", "txt", "tsv"],
                             accept_multiple_files=True, key="csv_files")
    rate = st.number_input("Sample rate in Hz (0: from a time column, else 12 000)", 0.0, 1e6, 0.0, key="crate")
    left, right = st.columns([1, 2])
    if left.button("Load CSV files", key="load_csv"):
        lab.replace_data(lambda: lab.csv_uploads(files, float(rate) or None))
    right.download_button("Download an example CSV", example_csv(), "pe_lab_example.csv", "text/csv",
                          key="example_csv", on_click="ignore", icon=":material/download:")
    with st.expander("Accepted formats"):
        st.markdown(
            "- **Long table**: a numeric signal column and a `label` column (optional `time` column in seconds, "
            "from which the sample rate is derived).\n"
            "- **Wide table**: one numeric column per class, the header naming the class.\n"
            "- **One column per file**: upload one file per class; the file name is the class (`IR007.csv`).\n\n"
            "Comma, semicolon, tab or whitespace separated; decimal commas, a header or none, `#` comments "
            "are fine. Each class needs enough samples for windows in train, validation and test."
        )

if lab.current_data() is None:  # a fresh visit starts on the synthetic set: ready at once, no files needed
    # a shared link's synthetic seed and loads apply; any other source waits for its Load button
    lab.replace_data(lambda: lab.synthetic(int(seed), loads) if source == "synthetic" else lab.synthetic(0, [0]))
    st.session_state.pop(lab.MESSAGE_KEY, None)
lab.show_message()
data = lab.current_data()
st.markdown(f"**Current data:** {data.description}: {len(data.recordings)} recordings, classes "
            f"{', '.join(data.labels)}.")
for note in data.notes:
    st.caption(note)

# --- 2. Explore ------------------------------------------------------------------------------------
st.header("2 · Explore the signals")
label = st.selectbox("Class", data.labels, key="explore_class")
recording = next(r for r in data.recordings if r.label == label)
views = signal_views(recording)
st.caption(f"{recording.meta.get('file', label)} · {recording.sample_rate:g} Hz · {recording.duration_s:.1f} s"
           + (f" · {recording.meta['rpm']:.0f} rpm" if recording.meta.get("rpm") else ""))
show_figure(figures.waveform(views.time_s, views.excerpt, f"{label}: the first {views.time_s[-1] + 1 / recording.sample_rate:.2f} s"),
            pd.DataFrame({"time_s": views.time_s, "signal": views.excerpt}), "waveform")
left, right = st.columns(2)
with left:
    show_figure(figures.spectrum(views.frequencies, views.amplitudes, "Spectrum", log_y=True),
                pd.DataFrame({"hz": views.frequencies, "amplitude": views.amplitudes}), "spectrum")
with right:
    if views.envelope_frequencies.size:
        show_figure(
            figures.spectrum(views.envelope_frequencies, views.envelope_amplitudes,
                             f"Envelope spectrum ({views.band[0]:g}-{views.band[1]:g} Hz band)", views.markers, max_hz=600),
            pd.DataFrame({"hz": views.envelope_frequencies, "amplitude": views.envelope_amplitudes}), "envelope_spectrum",
        )
    if views.note:
        st.caption(views.note)
st.markdown("A local fault strikes once per passing ball, and each strike rings a resonance of a few kHz: the "
            "fault rate shows in the **envelope** of that ringing, marked where the class and speed are known.")

# --- 3. Experiment ---------------------------------------------------------------------------------
st.header("3 · Experiment")
left, middle, right = st.columns(3)
models = left.multiselect("Models", list(MODEL_NAMES), default=["A", "B"], key="models", bind="query-params",
                          help="\n".join(f"- **{m}**: {h}" for m, h in MODEL_HELP.items()))
tokens = middle.radio("Tokens", ["time", "fft"], horizontal=True, key="tok", bind="query-params",
                      help="time: the window cut into patches of samples. fft: the window's spectrum cut into bands, "
                           "so a token's index means a frequency band.")
split = right.radio("Split", ["time", "random"], horizontal=True, key="split", bind="query-params",
                    help="time: each recording cut into train / validation / test blocks in time (honest). "
                         "random: windows shuffled (leaky: neighbouring windows are near copies).")
if split == "random":
    st.warning("The random split leaks: windows cut from one continuous recording land in both train and test, "
               "so its scores flatter every model. Use it only to see how much.")
left, middle, right, far = st.columns(4)
window = left.selectbox("Window (samples)", [256, 512, 1024, 2048], index=2, key="win", bind="query-params")
patch = middle.selectbox("Patch (samples or bins per token)", [8, 16, 32, 64], index=2, key="patch", bind="query-params")
d_model_choice = right.selectbox("d_model (embedding models)", ["= patch", 16, 32, 64, 128], key="dm", bind="query-params",
                                 help="A's d_model is the patch length: it has no embedding.")
n_heads = far.selectbox("Heads", [1, 2, 4, 8], index=2, key="heads", bind="query-params")
left, middle, right, far = st.columns(4)
n_layers = left.slider("Layers", 1, 4, 2, key="layers", bind="query-params")
epochs = middle.slider("Epochs (max; early stopping)", 1, 50, lab.DEFAULT_EPOCHS, key="epochs", bind="query-params")
n_seeds = right.slider("Seeds", 1, 5, 3, key="seeds", bind="query-params")
learning_rates = sorted({3e-4, 1e-3, 3e-3, 1e-2, lab.DEFAULT_LEARNING_RATE})
learning_rate = far.selectbox("Learning rate", learning_rates, index=learning_rates.index(lab.DEFAULT_LEARNING_RATE),
                              key="lr", bind="query-params", help="AdamW; the CLI's default is the same.")

if epochs < lab.BENCHMARK_EPOCHS:
    st.caption(f"{epochs} epochs keep a run short, but the models may not have converged: on the synthetic set "
               f"B still trails A after 8 epochs and catches up by {lab.BENCHMARK_EPOCHS} (the CLI's default, "
               f"chosen on the validation split). Early stopping ends a run sooner when it has converged.")
with st.expander("Evaluate beyond one split (more runs, same seeds)"):
    compare_splits = st.checkbox("Also train on the other split (time ↔ random) and show the leak", key="cmp", bind="query-params")
    snr_db = st.multiselect("Noise robustness: test SNR (dB)", [-4, 0, 4, 8, 12], default=[], key="snr", bind="query-params",
                            help="White noise added to each test window at SNR = 10·log10(P_signal / P_noise).")
    train_loads = test_loads = []
    if len(data.loads) >= 2:
        left, right = st.columns(2)
        train_loads = left.multiselect("Cross-load: train at (HP)", data.loads, default=[], key="trl", bind="query-params")
        test_loads = right.multiselect("… test at (HP)", data.loads, default=[], key="tel", bind="query-params")
        st.caption("Only the classes recorded at every chosen load are used (CWRU has no normal file at 1-3 HP "
                   "here); the experiment itself then runs at the first train load.")
    else:
        st.caption("Cross-load needs data at two or more motor loads (synthetic or CWRU with several loads).")
evaluations = lab.evaluation_settings(compare_splits, snr_db, train_loads, test_loads)

plan_error = lab.plan_problem(models, int(window), int(patch), d_model_choice, int(n_heads)) or evaluations.get("error")
try:
    counts = lab.window_counts(data.uid, data.recordings, int(window), split)
except DataError as error:  # one class, or a class too short for a window in every split
    plan_error = plan_error or f"These data cannot be split for training: {error}"
else:
    show_figure(figures.windows_per_class(counts, data.labels),
                pd.DataFrame(counts).fillna(0).astype(int).rename_axis("class").reset_index(), "windows_per_class")
st.caption(f"Device: {lab.device_name()}.")

if plan_error:
    st.error(plan_error)
busy = st.session_state.get(lab.JOB_KEY) is not None
if st.button("Train and compare", type="primary", disabled=bool(plan_error) or busy, key="train"):
    try:
        st.session_state[lab.JOB_KEY] = lab.start_experiment(
            data, models, tokens, split, int(window), int(patch), d_model_choice, int(n_heads), int(n_layers),
            int(epochs), int(n_seeds), float(learning_rate), evaluations,
        )
    except (DataError, ValueError) as error:
        st.error(str(error))
# Decided after the button, so the run that starts a job already polls it.
running = st.session_state.get(lab.JOB_KEY) is not None


def progress_panel() -> None:
    job = st.session_state.get(lab.JOB_KEY)
    if job is None:
        return
    status = job.status()
    if status.state == "queued":
        st.info(f"Waiting in the queue: {status.jobs_ahead} experiment(s) ahead of yours on this server.")
    elif status.state == "running" and status.model is None:
        st.progress(0.0, text=f"Cutting the windows… · {status.elapsed_seconds:.0f} s")
    elif status.state == "running":
        done = status.run_index + (status.epoch / max(1, status.max_epochs))
        stage = "" if status.stage in (None, "experiment") else f" ({status.stage})"
        workers = getattr(getattr(job, "plan", None), "workers", 1)
        where = f"Run {status.run_index + 1} of {status.n_runs}" if workers == 1 else (
            f"{status.run_index} of {status.n_runs} runs done, {workers} training side by side; the newest is")
        st.progress(min(1.0, done / status.n_runs),
                    text=f"{where}{stage}: model {status.model}, seed {status.seed}, "
                         f"epoch {status.epoch} of at most {status.max_epochs} · {status.elapsed_seconds:.0f} s")
    if status.state in ("queued", "running") and st.button("Stop", key="stop"):
        job.stop()
    histories = {f"{run['model']} · seed {run['seed']}": run["history"] for run in status.runs}
    if status.state == "running" and status.history:
        histories[f"{status.model} · seed {status.seed}"] = status.history
    if histories:
        st.plotly_chart(figures.training_curves(histories), key="training_curves")
    if job.done:
        lab.collect(job)
        st.rerun(scope="app")


st.fragment(progress_panel, run_every=1.0 if running else None)()

# --- 4. Results ------------------------------------------------------------------------------------
results = st.session_state.get(lab.RESULTS_KEY)
if results is not None:
    st.header("4 · Results")
    config = results["config"]
    data_settings = config.get("data", {})
    st.caption(
        f"{data_settings.get('dataset', '?')} data · {data_settings.get('split_mode', '?')} split · window "
        f"{data_settings.get('window', '?')} · seeds {config.get('seeds')} · {results['runs'][0]['device']}"
    )
    if data_settings.get("split_mode") == "random":
        st.warning("These numbers come from the leaky random split.")
    table = results_json.summary_table(results)
    st.dataframe(lab.display_table(results), hide_index=True)
    st.info(results["verdict"])
    summary = results["summary"]
    show_figure(figures.metric_bars(summary, list(results_json.METRICS)),
                table, "metrics")
    matrices, per_class = lab.per_model(results)
    show_figure(figures.confusion_matrices(matrices, results["class_names"]),
                lab.confusion_frame(matrices, results["class_names"]), "confusion_matrices")
    show_figure(figures.per_class_f1(per_class, results["class_names"]),
                pd.DataFrame(per_class, index=results["class_names"]).rename_axis("class").reset_index(), "per_class_f1")
    if "split_comparison" in results:
        st.subheader("Time split vs random split")
        st.dataframe(evaluation.split_table(results["split_comparison"]))
        st.caption("The leak: random-split minus time-split accuracy, paired by seed, in points with its 95 % interval.")
    if "noise" in results:
        st.subheader("Robustness to noise")
        noise = results["noise"]
        st.dataframe(evaluation.noise_table(noise))
        show_figure(
            figures.noise_curve(noise["snr_db"], {m: [c["mean"] for c in cells] for m, cells in noise["accuracy"].items()},
                                {m: [c["sd"] or 0.0 for c in cells] for m, cells in noise["accuracy"].items()}),
            evaluation.noise_table(noise).rename_axis("model").reset_index(), "noise_curve",
        )
    if "cross_load" in results:
        st.subheader("Across motor loads")
        block = results["cross_load"]
        st.caption(f"Classes used: {', '.join(block['classes'])}"
                   + (f" (left out, not recorded at every load: {', '.join(block['dropped_classes'])})" if block["dropped_classes"] else ""))
        for model in block["accuracy"]:
            st.markdown(f"**{model}**: accuracy, mean ± sd over seeds")
            st.dataframe(evaluation.cross_load_table(block, model))
    st.markdown("**Reproduce these numbers headless** (same code path, same JSON):")
    st.code(command_line(results["config"]), language="bash")
    left, middle, right = st.columns(3)
    left.download_button("Results (JSON)", json.dumps(results, indent=1), "pe_lab_results.json", "application/json",
                         key="dl_json", on_click="ignore", icon=":material/download:")
    middle.download_button("Runs (CSV)", lab.runs_frame(results).to_csv(index=False), "pe_lab_runs.csv", "text/csv",
                           key="dl_runs", on_click="ignore", icon=":material/download:")
    weights = st.session_state.get(lab.WEIGHTS_KEY)
    if weights:
        right.download_button("Trained weights (torch)", weights, "pe_lab_weights.pt", "application/octet-stream",
                              key="dl_weights", on_click="ignore", icon=":material/download:",
                              help="torch.load(path, weights_only=True) gives {'A/seed0': state_dict, ...}")
