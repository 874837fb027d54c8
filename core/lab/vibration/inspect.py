"""What a vibration file holds, before it is read: its columns and their roles, the separator, the header, a
rate a time column gives, and how the reader proposes to interpret it, in words.

    channels   several numeric columns named like sensors (s1..s4, X105_DE_time, Horizontal, ...), or without
               a header: channels of one recording; its class comes from the file name
    classes    numeric columns named like classes (normal, IR007, healthy, ...): one recording per column
    long       a label column gives each row's class
    single     one numeric column; its class comes from the file name

Several files sharing the same numeric header that does not name classes are channels too (`propose`).
`read_vibration_csv` applies the same interpretation unless told another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from core.lab.report import plural
from core.lab.vibration import csv_reader as reader
from core.lab.vibration.names import channel_key, class_from_name, columns_are, looks_like_class
from core.limits import MAX_SAMPLE_MAGNITUDE

INTERPRETATIONS = ("channels", "classes", "long", "single")
ROLES = ("channel", "label", "time", "ignore")
HEAD_ROWS = 5
RATE_ROWS = 2_000  # time stamps read to propose a rate


@dataclass(frozen=True)
class FileInspection:
    """One file as the reader found it; `interpretation` and `reason` are its proposal."""

    name: str | None
    columns: tuple[str, ...]
    roles: tuple[str, ...]  # one of ROLES per column
    separator: str
    decimal: str
    has_header: bool
    sample_rate: float | None  # from a time column, when there is one
    interpretation: str  # one of INTERPRETATIONS
    reason: str
    head: pd.DataFrame  # the first rows, as text

    @property
    def signal_columns(self) -> tuple[str, ...]:
        """The names of the columns read as channels."""
        return tuple(name for name, role in zip(self.columns, self.roles) if role == "channel")

    @property
    def class_name(self) -> str | None:
        """The class the file name gives, or None."""
        return class_from_name(self.name)

    def describe(self) -> str:
        """The interpretation in words, as the preview shows it."""
        header = "a header" if self.has_header else "no header"
        rate = f", {self.sample_rate:g} Hz from its time column" if self.sample_rate else ""
        columns = (
            plural(len(self.columns), f"{self.separator}-separated column") if len(self.columns) > 1 else "1 column"
        )
        found = f"{columns} with {header}{rate}"
        if self.interpretation == "channels":
            what = f"channels {', '.join(self.signal_columns)} of one recording of class {self.class_name or '?'}"
        elif self.interpretation == "classes":
            what = f"one recording per column: classes {', '.join(self.signal_columns)}"
        elif self.interpretation == "long":
            label = self.columns[self.roles.index("label")]
            what = f"one signal column, each row's class in column {label!r}"
        else:
            what = f"one signal column of class {self.class_name or '?'}"
        return f"{found}: {what} ({self.reason})."


def inspect_vibration_file(source: Any, *, name: str | None = None) -> FileInspection:
    """The inspection of a CSV-like file (a path, bytes or a binary file object); DataError when it cannot be
    read as a table at all."""
    raw, file_name = reader._read_bytes(source)
    text = reader._decode(raw)
    del raw
    dialect = reader._sniff(text)
    roles = reader._roles(dialect)
    kinds = {"long": "long", "wide": "classes", "channels": "channels", "single": "single"}
    interpretation = kinds[roles.shape]
    names = [dialect.names[j] for j in roles.signals]
    if interpretation in ("channels", "classes"):
        reason = columns_are(names, dialect.has_header)[1]
    elif interpretation == "long":
        reason = "a label column gives each row's class"
    else:
        reason = "one numeric column: its class is the file name"
    column_roles = tuple(
        "label" if j == roles.label else "time" if j == roles.time else "channel" if j in roles.signals else "ignore"
        for j in range(dialect.width)
    )
    rows = _data_rows(text, dialect, RATE_ROWS)
    head = pd.DataFrame([row + [""] * (dialect.width - len(row)) for row in rows[:HEAD_ROWS]], columns=dialect.names)
    rate = _time_rate(rows, dialect, roles) if roles.time is not None else None
    return FileInspection(
        name or file_name,
        dialect.names,
        column_roles,
        reader._SEPARATOR_NAMES[dialect.separator],
        dialect.decimal,
        dialect.has_header,
        rate,
        interpretation,
        reason,
        head,
    )


def _data_rows(text: str, dialect: Any, limit: int) -> list[list[str]]:
    """The first `limit` data rows, split into fields (comments, blank and filler lines skipped)."""
    skipped = reader._skipped_line_pattern(dialect.separator)
    rows = []
    for line in text.split("\n"):
        if skipped.fullmatch(line):
            continue
        rows.append([cell.strip() for cell in reader._split(line, dialect.separator)][: dialect.width])
        if len(rows) > limit:
            break
    return rows[1:] if dialect.has_header else rows


def _time_rate(rows: list[list[str]], dialect: Any, roles: Any) -> float | None:
    try:
        values = np.array([float(row[roles.time].replace(dialect.decimal, ".")) for row in rows], dtype=np.float64)
    except (ValueError, IndexError):
        return None
    if not np.all(np.isfinite(values)) or np.any(np.abs(values) > MAX_SAMPLE_MAGNITUDE):
        return None  # the reader refuses such a column with the line; the preview proposes no rate from it
    # As the reader derives it: steps over the span of the first block (a long table's time restarts per class),
    # so stamps rounded to a few decimals (1/12000 s written as 0.000083) give the rate, not one rounded step.
    steps = np.diff(values) * roles.time_scale
    backwards = np.flatnonzero(steps < 0)
    steps = steps[: backwards[0]] if backwards.size else steps
    if steps.size == 0 or not np.sum(steps) > 0:
        return None
    rate = steps.size / float(np.sum(steps))
    return float(round(rate)) if abs(rate - round(rate)) <= 1e-4 * rate else rate


def propose(inspections: Sequence[FileInspection]) -> list[FileInspection]:
    """The inspections of files uploaded together: files that share one numeric header naming no classes are
    channels of one recording each (healthy_load0.csv and faulty_load0.csv, both s1,s2,s3,s4)."""
    headers = [tuple(channel_key(c) for c in i.signal_columns) for i in inspections if i.interpretation == "classes"]
    shared = {header for header in headers if headers.count(header) > 1 and len(header) > 1}
    proposed = []
    for inspection in inspections:
        header = tuple(channel_key(c) for c in inspection.signal_columns)
        if inspection.interpretation == "classes" and header in shared:
            if not any(looks_like_class(column) for column in inspection.signal_columns):
                why = f"{headers.count(header)} files share the header {', '.join(inspection.signal_columns)}"
                inspection = replace(inspection, interpretation="channels", reason=why)
        proposed.append(inspection)
    return proposed
