"""The table of a visitor's own files: proposed from the files' inspections (one row per file: layout, class,
channel or .mat vector, sample rate, and what was found), edited on the page, and read back into the DataSpec
that loads them, each file's choices recorded only where they differ from what the reader proposes itself
(so the spec, the command and the files-spec JSON stay as short as the visitor's edits).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pandas as pd

from core.lab.data_spec import DataSpec, FileRef
from core.lab.report import format_number
from core.lab.vibration import DataError
from core.lab.vibration.csv_reader import DEFAULT_SAMPLE_RATE
from core.lab.vibration.inspect import FileInspection
from core.lab.vibration.matlab import MatInspection
from core.lab.vibration.names import class_from_name

LAYOUTS = ("channels", "classes", "long", "single", "mat")
NOT_READABLE = "unreadable"  # the layout of a file its inspection refused
RATE = "sample rate (Hz)"
COLUMNS = ("file", "layout", "class", "channel", RATE, "found")
Inspection = FileInspection | MatInspection | str  # a str: why the file cannot be read


def classes_from_names(found: Sequence[Inspection]) -> bool:
    """Whether the reader names any of these files' classes by the file name (one recording per file: sensor
    channels, a single column, a .mat vector), so that the choice "the file name up to its first digit" applies;
    False when every class comes from the files' contents (a label column, one column per class)."""
    return any(
        isinstance(inspection, MatInspection)
        or (isinstance(inspection, FileInspection) and inspection.interpretation in ("channels", "single"))
        for inspection in found
    )


def proposed_table(
    names: Sequence[str],
    found: Sequence[Inspection],
    up_to_digit: bool,
    default_rate: float,
    rate_assumed: bool = False,
    edited_rates: Collection[int] = (),
) -> pd.DataFrame:
    """One row per file (COLUMNS): the reader's proposal for it; `up_to_digit` names a file's class by its name
    up to the first digit, `default_rate` is the rate of a file that states none. With `rate_assumed` (no rate
    typed: `default_rate` is the reader's assumption), the "found" cell of a file that states no rate says so
    first (`assumed_rate_note`), except in the rows in `edited_rates` (0-based), whose rate the visitor set."""
    rows = [_proposed_row(name, inspection, up_to_digit, default_rate) for name, inspection in zip(names, found)]
    if rate_assumed:
        for number, (row, inspection) in enumerate(zip(rows, found)):
            if number not in edited_rates and not isinstance(inspection, str) and not inspection.sample_rate:
                row["found"] = f"{assumed_rate_note(default_rate)} {row['found']}"
    return pd.DataFrame(rows, columns=list(COLUMNS))


def assumed_rate_note(rate: float) -> str:
    """What the preview says of a rate the reader assumes: "12000 Hz (assumed: no time column or rate in the
    file; edit it)."."""
    return f"{format_number(rate)} Hz (assumed: no time column or rate in the file; edit it)."


def _proposed_row(name: str, inspection: Inspection, up_to_digit: bool, default_rate: float) -> dict[str, Any]:
    row: dict[str, Any] = {"file": name, "layout": NOT_READABLE, "class": "", "channel": "", RATE: 0.0}
    if isinstance(inspection, str):
        return {**row, "found": inspection}
    row.update(found=inspection.describe(), **{RATE: inspection.sample_rate or default_rate})
    if isinstance(inspection, MatInspection):
        label = class_from_name(name, up_to_digit) if up_to_digit else inspection.label
        return {**row, "layout": "mat", "channel": inspection.variable, "class": label}
    one_class = inspection.interpretation in ("channels", "single")
    row["layout"] = inspection.interpretation
    row["class"] = (class_from_name(name, up_to_digit) or "") if one_class else ""
    row["channel"] = inspection.signal_columns[0] if inspection.interpretation == "channels" else ""
    return row


def spec_from_table(
    files: Sequence[tuple[str, str]], found: Sequence[Inspection], table: pd.DataFrame, typed_rate: float | None
) -> DataSpec:
    """The DataSpec the edited table asks for: `files` are the (name, SHA-256) of each row's file, `found` their
    inspections, `typed_rate` the rate typed above the table (None: none). DataError naming the file for a row
    whose file cannot be read, or when there are no files."""
    if not files:
        raise DataError("Choose one or more files first, or download the example below to see the format.")
    refs = [
        FileRef(name, sha256, **file_choices(name, inspection, row, typed_rate))
        for (name, sha256), inspection, (_, row) in zip(files, found, table.iterrows())
    ]
    return DataSpec("csv", files=tuple(refs), sample_rate_override=typed_rate)


def file_choices(name: str, inspection: Inspection, row: Mapping[str, Any], typed_rate: float | None) -> dict[str, Any]:
    """The FileRef choices of one row, where they differ from the proposal; DataError when the file is unreadable."""
    if isinstance(inspection, str):
        raise DataError(inspection if inspection.startswith(name) else f"{name}: {inspection}")  # named once
    if isinstance(inspection, MatInspection):
        return _mat_choices(inspection, row)
    return _table_choices(name, inspection, row, typed_rate)


def _rate(row: Mapping[str, Any]) -> float | None:
    """The row's rate, or None for an empty, zero or non-finite cell (a cleared cell reads as NaN)."""
    value = row[RATE]
    rate = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else 0.0
    return rate if math.isfinite(rate) and rate > 0 else None


def _mat_choices(inspection: MatInspection, row: Mapping[str, Any]) -> dict[str, Any]:
    chosen = {"variable": row["channel"], "label": row["class"], "sample_rate": _rate(row)}
    proposed = {"variable": inspection.variable, "label": inspection.label, "sample_rate": inspection.sample_rate}
    return {key: value for key, value in chosen.items() if value and value != proposed[key]}


def _table_choices(
    name: str, inspection: FileInspection, row: Mapping[str, Any], typed_rate: float | None
) -> dict[str, Any]:
    choices: dict[str, Any] = {}
    layout, label, channel, rate = row["layout"], row["class"], row["channel"], _rate(row)
    if layout in ("channels", "classes") and layout != inspection.interpretation:
        choices["interpretation"] = layout
    if layout in ("channels", "single") and label and label != class_from_name(name):
        choices["label"] = str(label)
    columns = inspection.signal_columns
    if layout == "channels" and channel and columns and channel != columns[0]:
        choices["channel"] = str(channel)
    if rate and rate != (inspection.sample_rate or typed_rate or DEFAULT_SAMPLE_RATE):
        choices["sample_rate"] = rate
    return choices
