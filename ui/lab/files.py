"""The Fault lab's own-files part: any file name, a preview of how each file will be read (the columns, the
separator, the header, a rate, the interpretation in words), an editable table of the choices (key
`csv_preview`), and Load (`load_csv`), which reads the files as the table says (core.lab.files_table proposes
the table and reads it back into a DataSpec).

A selection is checked against the upload budgets of core.limits by the sizes the uploader reports, before
any file is inspected or read (`check_uploads`, also used by the CWRU uploader in ui.lab.data)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from core import limits
from core.lab.data_spec import DataSpec
from core.lab.files_table import (
    LAYOUTS,
    NOT_READABLE,
    RATE,
    Inspection,
    classes_from_names,
    proposed_table,
    spec_from_table,
)
from core.lab.vibration import DataError, example_csv
from core.lab.vibration.csv_reader import DEFAULT_SAMPLE_RATE
from core.lab.vibration.inspect import FileInspection, inspect_vibration_file, propose
from core.lab.vibration.matlab import MatInspection, inspect_mat
from core.limits import MAX_SAMPLE_RATE_HZ, MIN_SAMPLE_RATE_HZ, BudgetExceeded, check_budget
from core.safe_text import markdown_literal, markdown_text, shown
from ui.lab.keys import DIGESTS_KEY

FEWER_FILES = "Remove some files, or load them in parts."
LAYOUT_HELP = (
    "- **Channels of one recording**: one file per condition, a column per sensor (`s1,s2,s3,s4`, "
    "`X105_DE_time,...`, or no header); the class is the file name. Pick the channel to train on.\n"
    "- **Classes as columns**: one numeric column per class, the header naming the class.\n"
    "- **Long table**: a signal column and a `label` column (optional `time` column in seconds).\n"
    "- **One column per file**: the file name is the class (`IR007.csv`).\n"
    "- **MATLAB .mat**: pick the vector; a stored `fs` / `sr` gives the rate.\n\n"
    "Files at different rates are resampled to the lowest. Comma, semicolon, tab or whitespace separated; "
    "decimal commas, a header or none, `#` comments are fine."
)


def check_uploads(files: Sequence[Any]) -> None:
    """Refuse a selection (BudgetExceeded, one line) with more files than the budget, a file over the per-file
    budget (by name), or more bytes in all than one session's budget. Only the sizes the uploader reports are
    looked at: nothing is read. The budgets are looked up at each call (tests lower them)."""
    check_budget(len(files), limits.MAX_UPLOAD_FILES, "The number of files selected", advice=FEWER_FILES)
    for upload in files:
        advice = "Upload a shorter excerpt (a few seconds per class is enough), or split it into parts."
        check_budget(upload.size, limits.MAX_UPLOAD_FILE_BYTES, shown(upload.name, 80), "bytes", advice=advice)
    total = sum(upload.size for upload in files)
    what = f"The total of the {len(files)} selected files"
    check_budget(total, limits.MAX_SESSION_UPLOAD_BYTES, what, "bytes", advice=FEWER_FILES)


def upload_refusal(files: Sequence[Any]) -> str | None:
    """`check_uploads`' refusal as the line to show, or None when the selection fits."""
    try:
        check_uploads(files)
    except BudgetExceeded as error:
        return str(error)
    return None


# Keyed by name, size and SHA-256 only (the leading underscore keeps the bytes out of the key), and it returns
# the inspection, never the bytes: what the cache holds is a few rows of text per file.
@st.cache_data(max_entries=limits.MAX_UPLOAD_FILES, show_spinner=False)
def _inspect(name: str, size: int, sha256: str, _content: bytes) -> Inspection:
    try:
        if name.lower().endswith(".mat"):
            return inspect_mat(_content, name)
        return inspect_vibration_file(_content, name=name)
    except (DataError, BudgetExceeded) as error:
        return str(error)


def digest(upload: Any) -> str:
    """The SHA-256 of an upload, hashed once per selected file and session."""
    known = st.session_state.get(DIGESTS_KEY, {})
    file_id = getattr(upload, "file_id", None)
    if file_id is not None and file_id in known:
        return known[file_id]
    return hashlib.sha256(upload.getvalue()).hexdigest()


def inspections(files: Sequence[Any]) -> list[Inspection]:
    """The inspection of each selected file; a file already inspected (same name, size and SHA-256) is not
    read again."""
    digests = [digest(f) for f in files]
    st.session_state[DIGESTS_KEY] = {f.file_id: d for f, d in zip(files, digests) if hasattr(f, "file_id")}
    found = [_inspect(f.name, f.size, d, f.getvalue()) for f, d in zip(files, digests)]
    tables = propose([i for i in found if isinstance(i, FileInspection)])
    it = iter(tables)
    return [next(it) if isinstance(i, FileInspection) else i for i in found]


def uploads_spec_from_table(
    files: Sequence[Any], found: Sequence[Inspection], table: pd.DataFrame | None, typed_rate: float | None
) -> DataSpec:
    """The DataSpec of the uploaded `files` as the edited `table` reads them (core.lab.files_table)."""
    named = [(upload.name, digest(upload)) for upload in files]
    return spec_from_table(named, found, table if table is not None else pd.DataFrame(), typed_rate)


def own_files_controls(load: Callable[..., Any], replace_data: Callable[..., Any]) -> None:
    """The uploader, the preview and Load; `load(spec, uploads)` and `replace_data(loader)` come from ui.lab.data."""
    files = st.file_uploader(
        "Your recordings: CSV, TXT, TSV, DAT, MATLAB .mat, or a name without extension (the content decides)",
        accept_multiple_files=True,
        key="csv_files",
    )
    typed = st.number_input(
        "Sample rate in Hz (0: from a time column or the file, else 12 000)", 0.0, 1e6, 0.0, key="crate"
    )
    typed_rate = float(typed) or None
    found, table = [], None
    refusal = upload_refusal(files or [])
    if refusal:  # before any file is inspected or read
        st.error(markdown_text(refusal, 2_000))
    elif files:
        found = inspections(files)
        table = _edited_table(files, found, typed_rate)
        _first_rows(files, found)
    left, right = st.columns([1, 2])
    if left.button("Load", key="load_csv", disabled=refusal is not None) and not refusal:
        replace_data(lambda: load(uploads_spec_from_table(files or [], found, table, typed_rate), files or []))
    right.download_button(
        "Download an example CSV",
        example_csv(),
        "pe_lab_example.csv",
        "text/csv",
        key="example_csv",
        on_click="ignore",
        icon=":material/download:",
    )
    with st.expander("Accepted layouts"):
        st.markdown(LAYOUT_HELP)


def _edited_table(files: Sequence[Any], found: Sequence[Inspection], typed_rate: float | None) -> pd.DataFrame:
    """The proposed table of the files, as the visitor edited it (key `csv_preview`)."""
    up_to_digit = classes_from_names(found) and st.checkbox(  # only where a class is named by its file
        "class = the file name up to its first digit (healthy_load0 -> healthy_load)", key="class_prefix"
    )
    channel_options = sorted(
        {c for i in found if isinstance(i, FileInspection) for c in i.signal_columns}
        | {v for i in found if isinstance(i, MatInspection) for v in i.vectors}
    )
    st.markdown("**How each file will be read** (edit a cell to change it):")
    names, rate = [f.name for f in files], typed_rate or DEFAULT_SAMPLE_RATE
    proposal = proposed_table(names, found, up_to_digit, rate, typed_rate is None, _rows_with_edited_rate())
    return st.data_editor(
        proposal,
        key="csv_preview",
        hide_index=True,
        disabled=["file", "found"],
        column_config={
            "layout": st.column_config.SelectboxColumn(options=[*LAYOUTS, NOT_READABLE], required=True),
            "channel": st.column_config.SelectboxColumn(
                "channel / .mat vector", options=["", *channel_options], help="the column or vector to train on"
            ),
            RATE: st.column_config.NumberColumn(
                min_value=MIN_SAMPLE_RATE_HZ, max_value=MAX_SAMPLE_RATE_HZ, format="%g"
            ),
            "found": st.column_config.TextColumn(width="large"),
        },
    )


def _rows_with_edited_rate() -> set[int]:
    """The rows of `csv_preview` whose sample rate the visitor has edited: their rate is no longer assumed."""
    state = st.session_state.get("csv_preview")
    edited = state.get("edited_rows", {}) if isinstance(state, dict) else {}
    return {int(row) for row, cells in edited.items() if isinstance(cells, dict) and RATE in cells}


def _first_rows(files: Sequence[Any], found: Sequence[Inspection]) -> None:
    """Each file's first rows and its interpretation in words, folded away."""
    for upload, inspection in zip(files, found):
        with st.expander(f"{markdown_literal(upload.name)}: the first rows"):
            if isinstance(inspection, FileInspection):
                st.dataframe(inspection.head, hide_index=True)
            described = inspection if isinstance(inspection, str) else inspection.describe()
            st.caption(markdown_text(described, 2_000))
