"""Fault lab: train bearing-fault classifiers with and without positional encoding and compare them honestly."""

import pandas as pd
import streamlit as st

from core.lab.explorer import signal_views, signal_words
from core.lab.figures import fault_lab as figures
from core.lab.names import URL_ALIASES
from core.lab.vibration import DataError
from core.safe_text import markdown_text
from ui.common import data_section as one_download
from ui.common import page_intro, show_figure
from ui.lab import experiment as lab
from ui.lab.answer import STUDY_ANCHOR, answer_card, shipped_map
from ui.lab.data import data_section, window_counts
from ui.lab.keys import JOB_KEY, RESULTS_KEY
from ui.lab.links import LINK_CHOICES, LINK_NUMBERS
from ui.lab.results import results_section
from ui.lab.study import shipped_studies, study_section
from ui.navigation import use_app_navigation

# links shared before a key was renamed open as they did; a value no widget here can take is dropped and named
use_app_navigation(link_numbers=LINK_NUMBERS, old_link_keys=URL_ALIASES, link_choices=LINK_CHOICES)

page_intro(
    "Fault lab",
    "Does positional encoding help a Transformer tell bearing faults apart? Model **A** feeds the signal's "
    "tokens straight into a Transformer encoder; model **B** first embeds them and adds the sinusoidal "
    "encoding; model **B-noPE** is B without the encoding, so **B − B-noPE** is what the encoding alone does. "
    "Every number below comes from a stated split and several seeds, and can be repeated headless with "
    "`python -m core.experiment`.",
)
shipped = shipped_studies()
answer_card(shipped, shipped_map(shipped))

# --- 1. Data ---------------------------------------------------------------------------------------
st.header("1 · Data")
data = data_section()

# --- 2. Explore ------------------------------------------------------------------------------------
st.header("2 · Explore the signals")
label = st.selectbox("Class", data.labels, key="explore_class")
recording = next(r for r in data.recordings if r.label == label)
views = signal_views(recording)
y_title, envelope_words = signal_words(data.source)
st.caption(
    f"{recording.meta.get('file', label)} · {recording.sample_rate:g} Hz · {recording.duration_s:.1f} s"
    + (f" · {recording.meta['rpm']:.0f} rpm" if recording.meta.get("rpm") else "")
)
with one_download("signals"):  # the excerpt and both spectra: one download
    in_time, spectrum, envelope = st.tabs(["Waveform", "Spectrum", "Envelope spectrum"])
    with in_time:
        seconds = views.time_s[-1] + 1 / recording.sample_rate
        show_figure(
            figures.waveform(views.time_s, views.excerpt, f"{label}: the first {seconds:.2f} s", y_title),
            pd.DataFrame({"time_s": views.time_s, "signal": views.excerpt}),
            "waveform",
        )
    with spectrum:
        show_figure(
            figures.spectrum(views.frequencies, views.amplitudes, "Spectrum", log_y=True),
            pd.DataFrame({"hz": views.frequencies, "amplitude": views.amplitudes}),
            "spectrum",
        )
    with envelope:
        if views.envelope_frequencies.size:
            show_figure(
                figures.spectrum(
                    views.envelope_frequencies,
                    views.envelope_amplitudes,
                    f"Envelope spectrum ({views.band[0]:g}-{views.band[1]:g} Hz band)",
                    views.markers,
                    max_hz=600,
                ),
                pd.DataFrame({"hz": views.envelope_frequencies, "amplitude": views.envelope_amplitudes}),
                "envelope_spectrum",
            )
        if views.note:
            st.caption(views.note)
        st.markdown(envelope_words)

# --- 3. Experiment ---------------------------------------------------------------------------------
st.header("3 · Experiment")
settings = lab.experiment_controls(data)
problem = settings.problem(data)
try:
    counts = window_counts(data.uid, data.recordings, settings.window, settings.windowing)
except DataError as error:  # one class, or a class too short for a window in every split
    problem = problem or f"These data cannot be split for training: {error}"
else:
    with st.expander("Windows per class and split"):
        show_figure(
            figures.windows_per_class(counts, data.labels),
            pd.DataFrame(counts).fillna(0).astype(int).rename_axis("class").reset_index(),
            "windows_per_class",
        )
st.caption(f"Device: {lab.device_name()}. Runs execute on {lab.where_runs_execute()}.")
if note := lab.cluster_note():
    st.caption(note)
too_large, confirmed = None, True
if problem:
    st.error(markdown_text(problem, 2_000))
else:
    st.caption(lab.question(data, settings))
    st.caption(lab.expected_wait(data, settings))
    too_large = lab.too_large(data, settings)
if too_large:
    st.warning(too_large[0])
    st.code(too_large[1], language="bash", wrap_lines=True)
elif not problem:  # too few test windows for a clear answer: said in one line, and the press asks first
    confirmed = lab.confirm_wide(lab.wide_answer(data, settings), "accept_wide")
ready = confirmed and not (problem or too_large or st.session_state.get(JOB_KEY) is not None)
if st.button("Train and compare", type="primary", disabled=not ready, key="train"):
    try:
        st.session_state[JOB_KEY] = lab.start_experiment(data, settings)
    except (DataError, ValueError) as error:  # a queue that is full (core.limits.BudgetExceeded) among them
        st.error(markdown_text(error, 2_000))
# Decided after the button, so the run that starts a job already polls it.
running = st.session_state.get(JOB_KEY) is not None
st.fragment(lab.progress_panel, run_every=lab.PROGRESS_EVERY_S if running else None)()
st.fragment(lab.curves_panel, run_every=lab.CURVES_EVERY_S if running else None)()

# --- 4. Results ------------------------------------------------------------------------------------
st.header("4 · Results")
results = st.session_state.get(RESULTS_KEY)
if results is not None:
    results_section(results, data)
else:
    st.caption("Nothing trained yet: press **Train and compare** above, or open a saved file in section 5.")

# --- 5. Study --------------------------------------------------------------------------------------
st.header("5 · Study: does positional encoding help?", anchor=STUDY_ANCHOR)
study_section(data, settings)
