"""The Fault lab's data: where it comes from (a DataSpec), its cached loaders, and the page's data section.

The current data lives in st.session_state under a key no widget owns (ui.lab.keys.DATA_KEY: a widget's key is
dropped when its page is left), so it survives switching pages. Data replaces the current data only when it
loaded without error and can be trained on: a bad upload, one past a budget of core.limits, or one refused by the
signal health check (a flat channel) shows its message and loses nothing the user already had. Uploaded bytes
are read once per Load and kept nowhere: the session holds the recordings, no cache holds the files.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from core.lab import vibration
from core.lab.data_roots import DOWNLOAD_CACHE, confine, data_roots
from core.lab.data_spec import DataSpec, FileRef
from core.lab.report import plural
from core.lab.vibration import DataError, Recording
from core.lab.vibration.cwru import catalogue_files
from core.lab.vibration.health import check_signal
from core.lab.vibration.seu import DEFAULT_SAMPLE_RATE as SEU_DEFAULT_RATE
from core.limits import BudgetExceeded
from core.safe_text import markdown_text
from ui.lab.files import check_uploads, digest, own_files_controls, upload_refusal
from ui.lab.keys import DATA_KEY, MESSAGE_KEY
from ui.lab.links import (
    CWRU_CHANNELS,
    DATA_SEEDS,
    MOTOR_LOADS_HP,
    ORDER_CLASSES,
    ORDER_PATCHES,
    SEU_CHANNELS,
    SEU_CONDITIONS,
    SOURCE_CHOICE_KEYS,
    SOURCES,
    SPECTRAQUEST_CHANNELS,
    SPECTRAQUEST_LOADS,
)

MESSAGE_CHARS = 2_000  # a message about files names several of them; longer ones are cut where shown
DOWNLOAD_DIR = DOWNLOAD_CACHE / "cwru"  # downloads go here and nowhere else
SEU_NOT_RUN = "The SEU comparison has not been run on the real files here: they could not be obtained."


@dataclass
class LoadedData:
    """The recordings the lab works on and the spec they were loaded from (for the JSON config and the page)."""

    recordings: list[Recording]
    spec: DataSpec
    notes: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # signal health: clipped, level jumps
    refusal: str | None = None  # why these data cannot be trained on (a flat channel): never made current
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)  # a cheap cache key for this data

    @property
    def source(self) -> str:
        return self.spec.dataset

    @property
    def description(self) -> str:
        return self.spec.describe(len(self.recordings))

    @property
    def labels(self) -> list[str]:
        return list(dict.fromkeys(r.label for r in self.recordings))

    @property
    def loads(self) -> list[int]:
        return sorted({int(r.meta["load_hp"]) for r in self.recordings if r.meta.get("load_hp") is not None})

    def settings(self) -> dict[str, Any]:
        """The data part of the results config: the spec, and the files that were not found."""
        return {**self.spec.to_dict(), "missing_files": list(self.missing_files)}


def current_data() -> LoadedData | None:
    """The data the lab works on now, or None before the first load of the session."""
    return st.session_state.get(DATA_KEY)


def replace_data(loader: Callable[[], LoadedData]) -> bool:
    """Run `loader`; on success it becomes the current data, on a DataError or BudgetExceeded the page shows
    why and the current data stays. Data with a refusal is dropped the same way: kept, its recordings would
    hold memory that nothing can train on. Any other exception is a bug and is reported as one, not swallowed."""
    try:
        data = loader()
    except (DataError, BudgetExceeded) as error:
        st.session_state[MESSAGE_KEY] = ("error", markdown_text(error, MESSAGE_CHARS))
        return False
    if data.refusal:
        st.session_state[MESSAGE_KEY] = ("error", markdown_text(f"Not loaded: {data.refusal}", MESSAGE_CHARS))
        return False
    st.session_state[DATA_KEY] = data
    st.session_state[MESSAGE_KEY] = ("success", markdown_text(f"Loaded {data.description}.", MESSAGE_CHARS))
    return True


def show_message() -> None:
    """The last load's outcome (an error or a success), kept across reruns until the next load."""
    message = st.session_state.get(MESSAGE_KEY)
    if message:
        kind, text = message
        (st.error if kind == "error" else st.success)(text)


# --- loaders (cached: the same data serves every visitor without a second copy) --------------------


@st.cache_resource(max_entries=4, show_spinner="Loading the data…")
def _shared(spec_json: str) -> list[Recording]:
    """Data from the synthetic generator or a server folder, keyed by its spec, shared by all visitors."""
    return DataSpec.from_dict(json.loads(spec_json)).load()


def _uploaded(spec: DataSpec, uploads: Sequence[Any]) -> list[Recording]:
    """The recordings of uploaded files, read once per Load and not cached: a cache would keep a second copy
    of every upload's recordings (refused ones too) beside the session's, for as long as it lives."""
    check_uploads(uploads)
    with st.spinner("Reading the files…"):
        return spec.load(files={upload.name: upload.getvalue() for upload in uploads})


def load(spec: DataSpec, uploads: Sequence[Any] = ()) -> LoadedData:
    """The data of `spec`, with the uploaded files' contents when it names files."""
    spec_json = json.dumps(spec.to_dict(), sort_keys=True)
    if spec.files:
        recordings = _uploaded(spec, uploads)
    else:
        recordings = _shared(spec_json)
    missing = list(getattr(recordings, "missing", []))
    left_out = "Not uploaded, left out" if spec.files else "Missing files, left out"
    notes = [f"{left_out}: {', '.join(missing)}."] if missing else []
    if any(r.meta.get("sample_rate_assumed") for r in recordings):
        notes.append("No time column and no sample rate given: 12 000 Hz was assumed.")
    if spec.dataset == "seu":
        notes.append(SEU_NOT_RUN)
    notes += [
        f"{r.meta.get('file') or r.label}: {r.meta['resampled_from']:g} Hz resampled to {r.sample_rate:g} Hz "
        f"(scipy.signal.resample_poly), to train all classes at one rate."
        for r in recordings
        if r.meta.get("resampled_from") and spec.dataset == "csv"
    ]
    findings = [f for r in recordings if spec.dataset == "csv" for f in check_signal(r.signal, _where(r))]
    refusal = next((f.message for f in findings if f.refuses_training), None)
    return LoadedData(
        recordings=list(recordings),
        spec=spec,
        notes=notes,
        missing_files=missing,
        warnings=[f.message for f in findings],
        refusal=refusal,
    )


def _where(recording: Recording) -> str:
    return f"{recording.meta.get('file') or recording.label}, channel {recording.meta.get('column', '1')}"


def synthetic(seed: int, loads: Sequence[int]) -> LoadedData:
    """The built-in synthetic set of this seed at these motor loads (0 HP when none)."""
    return load(DataSpec(dataset="synthetic", data_seed=int(seed), loads=tuple(sorted(loads)) or (0,)))


def uploads_spec(dataset: str, files: Sequence[Any], **settings: Any) -> DataSpec:
    """The DataSpec of uploaded files (by name and SHA-256); DataError when none is chosen."""
    if not files:
        what = "CWRU .mat files (named by their number, e.g. 105.mat)" if dataset == "cwru" else "CSV files"
        raise DataError(f"Choose one or more {what} first.")
    return DataSpec(dataset=dataset, files=tuple(FileRef(name=f.name, sha256=digest(f)) for f in files), **settings)


def cwru_download(folder: str, loads: tuple[int, ...], channel: str, bar: Any) -> LoadedData:
    """Fetch the official files of these loads (skipping valid ones already there), then load them."""
    files = [entry.number for entry in catalogue_files(loads)]
    vibration.download_cwru(
        Path(folder).expanduser(), files=files, progress=lambda done, text: bar.progress(done, text=text)
    )
    return load(DataSpec(dataset="cwru", loads=loads, channel=channel, folder=folder))


# --- the page's data section ----------------------------------------------------------------------------


def data_section() -> LoadedData:
    """The source controls, their Load buttons, and the current data (a fresh visit starts synthetic)."""
    # Options are the CLI's --dataset names (they go into shared links as ?dataset=csv); the captions say what
    # they are. Another source opens its own loads and channel at their defaults (one link key serves them all).
    source = st.radio(
        "Source",
        list(SOURCES),
        captions=list(SOURCES.values()),
        horizontal=True,
        key="dataset",
        bind="query-params",
        on_change=_forget_source_choices,
    )
    seed, loads = 0, [0]
    if source == "synthetic":
        left, right = st.columns(2)
        seed = left.number_input(
            "Data seed", *DATA_SEEDS, 0, key="data_seed", bind="query-params", on_change=_use_chosen_synthetic
        )
        loads = right.multiselect(
            "Motor loads (HP)",
            MOTOR_LOADS_HP,
            default=[0],
            key="loads",
            bind="query-params",
            on_change=_use_chosen_synthetic,
        )
        st.caption(
            "Ten CWRU-like classes modelled from the SKF 6205 geometry: impacts at the fault rate ring a "
            "structural resonance, with slip, load-zone modulation and the real files' levels. A new seed or "
            "set of loads is loaded at once."
        )
        if st.button("Use the synthetic set", key="load_synthetic"):
            replace_data(lambda: synthetic(seed, loads))
    elif source == "cwru":
        _cwru_controls()
    elif source == "seu":
        _seu_controls()
    elif source == "order_control":
        _order_control_controls()
    elif source == "spectraquest":
        _spectraquest_controls()
    else:
        own_files_controls(load, replace_data)
    if current_data() is None:  # a shared link's synthetic seed and loads apply; other sources wait for Load
        replace_data(lambda: synthetic(seed, loads) if source == "synthetic" else synthetic(0, [0]))
        st.session_state.pop(MESSAGE_KEY, None)
    show_message()
    data = current_data()
    described = f"{data.description}: {plural(len(data.recordings), 'recording')}, classes {', '.join(data.labels)}."
    st.markdown(f"**Current data:** {markdown_text(described, MESSAGE_CHARS)}")
    for note in data.notes:
        st.caption(markdown_text(note, MESSAGE_CHARS))
    for warning in data.warnings:
        st.warning(markdown_text(warning, MESSAGE_CHARS))
    return data


def _use_chosen_synthetic() -> None:
    """When the synthetic seed or loads change, the set they name becomes the current data at once: the page then
    shows what its link (?data_seed=4&loads=0) names, as a fresh session opened from that link does."""
    replace_data(lambda: synthetic(st.session_state["data_seed"], st.session_state["loads"]))


def _forget_source_choices() -> None:
    """When the source changes, its loads and channel are forgotten, so the new source's controls open at their
    own defaults: the link key is one (`loads`, `channel`, as the CLI's flag is one) but the options differ (motor
    loads in HP, SpectraQuest's in percent), and a value one source's control held would be dropped by the
    other's without a word."""
    for key in SOURCE_CHOICE_KEYS:
        st.session_state.pop(key, None)


def _cwru_controls() -> None:
    how = st.radio(
        "From",
        ["a local folder", "the official site (download)", "uploaded .mat files"],
        horizontal=True,
        key="cwru_from",
    )
    left, right = st.columns(2)
    chosen = left.multiselect("Motor loads (HP)", MOTOR_LOADS_HP, default=[0], key="loads", bind="query-params")
    channel = right.selectbox(
        "Channel",
        CWRU_CHANNELS,
        key="channel",
        bind="query-params",
        help="Drive end, fan end, base. The normal file 97 has no BA channel.",
    )
    loads = tuple(sorted(chosen)) or (0,)
    st.caption(
        "12 kHz drive-end set. The normal file 97.mat was sampled at 48 kHz and is resampled to 12 kHz, "
        "or every model would learn the sample rate instead of the fault. At 1-3 HP only the nine fault "
        "classes exist here (no normal files 98-100)."
    )
    if how == "a local folder":
        folder = st.text_input("Folder with 97.mat, 105.mat, …", str(data_roots()[0] / "cwru"), key="cwru_dir")
        if st.button("Load CWRU", key="load_cwru"):
            replace_data(
                lambda: load(DataSpec(dataset="cwru", loads=loads, channel=channel, folder=str(confine(folder))))
            )
    elif how == "the official site (download)":
        st.caption(f"The files go to this server's download cache, {DOWNLOAD_DIR}, checked against their MD5.")
        if st.button("Download and load", key="download_cwru"):
            bar = st.progress(0.0, text="Downloading…")
            replace_data(lambda: cwru_download(str(DOWNLOAD_DIR), loads, channel, bar))
    else:
        files = st.file_uploader(
            "CWRU .mat files, with their official names", type=["mat"], accept_multiple_files=True, key="cwru_files"
        )
        refusal = upload_refusal(files or [])
        if refusal:  # before any file is read
            st.error(markdown_text(refusal, MESSAGE_CHARS))
        if st.button("Load uploaded files", key="load_cwru_files", disabled=refusal is not None) and not refusal:
            replace_data(lambda: load(uploads_spec("cwru", files, loads=loads, channel=channel), files))


def _seu_controls() -> None:
    st.warning(
        f"{SEU_NOT_RUN} The loader follows the publishers' documented layout and is tested on files in that layout."
    )
    folder = st.text_input("Folder with health_20_0.csv, ball_20_0.csv, …", key="seu_dir")
    left, middle, right = st.columns(3)
    condition = left.selectbox(
        "Condition (speed Hz _ load V)", SEU_CONDITIONS, key="seu_condition", bind="query-params"
    )
    channel = middle.number_input(
        "Channel (1-8)",
        *SEU_CHANNELS,
        2,
        key="seu_channel",
        bind="query-params",
        help="1 motor, 2-4 planetary gearbox x/y/z, 5 torque, 6-8 parallel gearbox x/y/z",
    )
    rate = right.number_input("Sample rate (Hz, not published)", 100.0, 1e6, SEU_DEFAULT_RATE, key="srate")
    if st.button("Load SEU", key="load_seu"):
        replace_data(lambda: load(seu_spec(folder, condition, int(channel), float(rate))))


def seu_spec(folder: str, condition: str, channel: int, rate: float) -> DataSpec:
    """The DataSpec of an SEU folder on this server, confined to the data roots; DataError when none is typed."""
    if not folder.strip():
        raise DataError("Type the folder that holds the SEU files (health_20_0.csv, ball_20_0.csv, …) first.")
    return DataSpec(
        dataset="seu",
        folder=str(confine(folder)),
        seu_condition=condition,
        channel=channel,
        sample_rate_override=rate,
    )


def _order_control_controls() -> None:
    left, middle, right = st.columns(3)
    seed = left.number_input("Data seed", *DATA_SEEDS, 0, key="data_seed", bind="query-params")
    classes = middle.number_input("Classes", *ORDER_CLASSES, 4, key="order_classes", bind="query-params")
    patch = right.selectbox("Patch (samples)", ORDER_PATCHES, index=1, key="order_patch", bind="query-params")
    st.caption(
        "Each window is one shaft revolution, cut at a tachometer pulse: 32 patches, 8 of each of four "
        "vibration-like shapes, in every class. Only the angle at which each shape occurs differs, so a model "
        "blind to order is at chance. Keep the window a whole number of revolutions (32 × the patch)."
    )
    if st.button("Use the order control", key="load_order_control"):
        spec = DataSpec(dataset="order_control", data_seed=int(seed), order_classes=int(classes), order_patch=patch)
        replace_data(lambda: load(spec))


def _spectraquest_controls() -> None:
    folder = st.text_input("Folder with h30hz0.csv.gz, b30hz0.csv.gz, …", "spectraquest", key="sq_dir")
    left, right = st.columns(2)
    channel = left.selectbox("Channel", SPECTRAQUEST_CHANNELS, index=1, key="channel", bind="query-params")
    chosen = right.multiselect(
        "Loads (%)", SPECTRAQUEST_LOADS, default=list(SPECTRAQUEST_LOADS), key="loads", bind="query-params"
    )
    st.caption(
        "Healthy against one broken tooth at ten loads (NREL data, CC-BY-SA). The sample rate is not published: "
        "30 000 Hz is assumed (windows are counted in samples). Channel a1 tells the classes by level alone."
    )
    if st.button("Load SpectraQuest", key="load_spectraquest"):
        replace_data(lambda: load(spectraquest_spec(folder, channel, tuple(chosen))))


def spectraquest_spec(folder: str, channel: str, loads: tuple[int, ...]) -> DataSpec:
    """The DataSpec of a SpectraQuest folder on this server, confined to the data roots (a relative folder is
    taken under the first root); DataError when no load is chosen."""
    if not loads:
        raise DataError("Choose one or more SpectraQuest loads first.")
    return DataSpec(dataset="spectraquest", folder=str(confine(folder)), channel=channel, loads=tuple(sorted(loads)))


@st.cache_data(max_entries=4, show_spinner=False)
def window_counts(
    data_uid: str, _recordings: list[Recording], window: int, windowing: str
) -> dict[str, dict[str, int]]:
    """Windows per class and role (train, val, test) for the explorer, cached per data set (keyed by its uid:
    hashing the recordings themselves would cost more than cutting them)."""
    return vibration.make_windows(_recordings, window=window, windowing=windowing).counts
