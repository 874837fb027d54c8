"""Read a vibration CSV that a user uploads into `Recording`s: the app's front door for untrusted files.

Three table shapes are accepted (the README's "Your own data" section describes them for users):

- long: one numeric signal column and a `label` column, optionally a `time` column (seconds) from which
  the sample rate is derived; each run of equal labels is one recording;
- wide: one numeric column per class, the header naming the class, optionally a `time` column;
- single: one numeric column; its class comes from `name` (the file name when several files are
  uploaded, one per class), else from the file name of `source`, else from the header.

The dialect is sniffed from the first lines: comma, semicolon, tab, pipe or whitespace separators,
decimal commas, a UTF-8 (or UTF-16) byte-order mark, CRLF line ends, quoted fields, scientific notation,
header or no header, `#` comment lines, blank lines and trailing separators. pandas parses the table
once the dialect is known. Anything else raises `DataError` with a message that says what is wrong and
where; no other exception type leaves `read_vibration_csv`. The caps below are checked before the
expensive step they protect: the byte count before decoding, rows and cells before parsing.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from core.lab.report import plural
from core.lab.vibration.names import channel_key, class_from_name, columns_are
from core.lab.vibration.rates import checked_sample_rate
from core.lab.vibration.types import DataError, Recording
from core.limits import MAX_SAMPLE_MAGNITUDE, MAX_SAMPLE_RATE_HZ, MAX_UPLOAD_FILE_BYTES, MIN_SAMPLE_RATE_HZ

# Caps for a hosted server with about 1 GB of memory (the byte cap and its reason live in core/limits.py).
MAX_UPLOAD_BYTES = MAX_UPLOAD_FILE_BYTES  # the name the reader and its tests have always used
MAX_ROWS = 2_000_000  # data rows, e.g. 166 s at 12 kHz
MAX_COLUMNS = 32
MAX_VALUES = 10_000_000  # rows x columns: 80 MB as float64
MAX_RECORDINGS = 100  # runs of equal labels in a long table
MAX_LINE_CHARS = 10_000  # longer lines are not a vibration table

DEFAULT_SAMPLE_RATE = 12_000.0  # the CWRU rate, assumed when neither a time column nor sample_rate is given
MIN_SAMPLE_RATE, MAX_SAMPLE_RATE = MIN_SAMPLE_RATE_HZ, MAX_SAMPLE_RATE_HZ

LABEL_COLUMN_NAMES = ("label", "class", "fault", "condition", "category", "target")
EXAMPLE_CLASSES = ("normal", "IR007", "OR007")
EXAMPLE_SECONDS = 2.5

_TIME_COLUMN = re.compile(r"(?:time|t|timestamp|zeit)(?:\s*[\[(_]?\s*(?P<unit>s|sec|ms|us|µs|μs)\s*[\])]?)?", re.I)
_TIME_UNITS = {None: 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6}
# Earlier separators win ties: a semicolon file with decimal commas also splits evenly on commas.
_SEPARATORS = ("\t", ";", ",", "|", " ")  # " " stands for runs of whitespace
_SEPARATOR_NAMES = {"\t": "tab", ";": "semicolon", ",": "comma", "|": "pipe", " ": "whitespace"}
_SNIFF_LINES = 200
_SHOWN_LINES = 5  # line numbers quoted in an error message
_BINARY_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_DECIMAL_COMMA_NUMBER = re.compile(r"[+-]?\d+,\d+(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA_OR_WHOLE = re.compile(r"[+-]?\d+(?:,\d+)?(?:[eE][+-]?\d+)?")
_TRAILING_AFTER_DECIMAL_COMMA = ";\t|"  # a one-column file of decimal commas may end each line with one of these
_SKIPPED_IN_SNIFF = re.compile(r"[ \t]*#.*|[\s,;|]*")


@dataclass(frozen=True)
class _Dialect:
    separator: str  # one of _SEPARATORS
    decimal: str  # "." or ","
    has_header: bool
    names: tuple[str, ...]  # one per column
    text_columns: tuple[int, ...]  # columns that hold text in most sampled rows
    trailing_separators: bool  # sampled lines end with a separator

    @property
    def width(self) -> int:
        return len(self.names)


@dataclass(frozen=True)
class _Roles:
    shape: str  # "long", "wide" (columns are classes), "channels" (columns are sensors of one recording), "single"
    signals: tuple[int, ...]
    label: int | None
    time: int | None
    time_scale: float  # seconds per unit of the time column


def read_vibration_csv(
    source: Any,
    *,
    name: str | None = None,
    sample_rate: float | None = None,
    interpretation: str | None = None,
    channel: str | int | None = None,
    label: str | None = None,
) -> list[Recording]:
    """Recordings from a CSV given as a path, bytes or a binary file object (e.g. a Streamlit upload).

    `name` labels a single-column file (a file name such as "IR007.csv" gives "IR007"). `sample_rate`
    in Hz overrides a time column; without either the rate is DEFAULT_SAMPLE_RATE and
    `meta["sample_rate_assumed"]` is True. Bad input of any kind raises DataError; too-short recordings
    and single-class data are left to `make_windows`.

    Several numeric columns are read the way core.lab.vibration.inspect proposes (sensor names or no header:
    channels of one recording, its class from the file name; class names: one recording per column), unless
    `interpretation` ("channels" or "classes") says otherwise. For channels, `channel` picks the column (a
    name, matched without a file-number prefix such as X105_, or a 0-based position; default the first) and
    `label` overrides the class the file name gives.
    """
    rate = _check_sample_rate(sample_rate)
    if name is not None and not isinstance(name, str):
        raise DataError(f"name must be text (e.g. the file name), got {type(name).__name__}.")
    raw, file_name = _read_bytes(source)
    text = _decode(raw)
    del raw
    dialect = _sniff(text)
    roles, frame = _parsed_table(text, dialect, interpretation)
    where = _LineFinder(text, dialect)
    _check_values(frame, roles, dialect, where)
    blocks = _label_blocks(frame, roles, dialect, where)
    rate, rate_source = _sample_rate(rate, frame, roles, blocks, where)
    meta = _file_meta(name or file_name, roles, dialect, rate_source)
    if roles.shape == "wide":
        return [
            Recording(frame[column].to_numpy(), rate, dialect.names[column], {**meta, "column": dialect.names[column]})
            for column in roles.signals
        ]
    chosen = (
        _chosen_channel(roles, dialect, channel, name or file_name) if roles.shape == "channels" else roles.signals[0]
    )
    signal = frame[chosen].to_numpy()
    column_meta = {**meta, "column": dialect.names[chosen]}
    if roles.shape == "channels":
        channels = [dialect.names[j] for j in roles.signals]
        found = label or _channels_label(channels, name, file_name)
        return [Recording(signal, rate, found, {**column_meta, "channels": channels})]
    if roles.shape == "single":
        header = dialect.names[roles.signals[0]] if dialect.has_header else None
        found = label or _single_label(name, file_name, header)
        return [Recording(signal, rate, found, column_meta)]
    return [
        Recording(signal[start:stop].copy(), rate, label, {**column_meta, "rows": (start, stop)})
        for label, start, stop in blocks
    ]


def _parsed_table(text: str, dialect: _Dialect, interpretation: str | None) -> tuple[_Roles, pd.DataFrame]:
    """The columns' roles and the parsed table, its size checked before pandas parses it."""
    table = _table_text(text, dialect)
    n_rows = table.count("\n") + 1 - dialect.has_header if table else 0
    _check_size(n_rows, dialect)
    roles = _roles(dialect, interpretation)
    return roles, _parse(table.encode("utf-8"), dialect, roles, text)


def _check_values(frame: pd.DataFrame, roles: _Roles, dialect: _Dialect, where: _LineFinder) -> None:
    """Every signal and time value finite and within MAX_SAMPLE_MAGNITUDE, else a DataError naming its lines."""
    for column in (*roles.signals, *((roles.time,) if roles.time is not None else ())):
        _check_finite(frame[column].to_numpy(), dialect.names[column], where)
        _check_magnitude(frame[column].to_numpy(), dialect.names[column], where)


def _file_meta(file: str | None, roles: _Roles, dialect: _Dialect, rate_source: str) -> dict[str, Any]:
    """The meta every recording of the file carries: where it came from, how it was read, where its rate came from."""
    return {
        "source": "csv",
        "file": file,
        "shape": roles.shape,
        "separator": _SEPARATOR_NAMES[dialect.separator],
        "decimal": dialect.decimal,
        "sample_rate_source": rate_source,
        "sample_rate_assumed": rate_source == "assumed",
    }


# --- reading and decoding -------------------------------------------------------------------------


def _check_sample_rate(sample_rate: Any) -> float | None:
    return None if sample_rate is None else checked_sample_rate(sample_rate)


def _too_big(size_text: str) -> DataError:
    return DataError(
        f"The file is {size_text}; the limit is {MAX_UPLOAD_BYTES / 1e6:g} MB. Upload a shorter excerpt "
        f"(a few seconds per class is enough) or split it into one file per class."
    )


def _read_bytes(source: Any) -> tuple[bytes, str | None]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if len(data) > MAX_UPLOAD_BYTES:
            raise _too_big(f"{len(data) / 1e6:.1f} MB")
        return data, None
    if isinstance(source, (str, os.PathLike)):
        return _read_path(Path(source)), Path(source).name
    if hasattr(source, "read"):
        file_name = getattr(source, "name", None)
        return _read_stream(source), Path(file_name).name if isinstance(file_name, str) else None
    raise DataError(f"Expected a file path, bytes or an open binary file, got {type(source).__name__}.")


def _read_path(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_UPLOAD_BYTES:
            raise _too_big(f"{size / 1e6:.1f} MB")
        with open(path, "rb") as handle:
            return _read_stream(handle)
    except OSError as error:
        raise DataError(f"Cannot read {path}: {error.strerror or error}.") from error


def _read_stream(stream: Any) -> bytes:
    # An upload may have been read already (e.g. for a preview); start from the beginning.
    try:
        stream.seek(0)
    except (AttributeError, OSError, ValueError):
        pass
    chunks, size = [], 0
    try:
        while size <= MAX_UPLOAD_BYTES:
            chunk = stream.read(min(1 << 20, MAX_UPLOAD_BYTES + 1 - size))
            if not chunk:
                break
            if isinstance(chunk, str):  # a file opened in text mode
                chunk = chunk.encode("utf-8")
            chunks.append(bytes(chunk))
            size += len(chunk)
    except (OSError, ValueError, UnicodeError) as error:
        raise DataError(f"Cannot read the uploaded file: {error}.") from error
    if size > MAX_UPLOAD_BYTES:
        raise _too_big(f"more than {MAX_UPLOAD_BYTES / 1e6:g} MB")
    return b"".join(chunks)


def _decode(raw: bytes) -> str:
    """Text with "\\n" line ends, from UTF-8 (BOM or not), UTF-16 with a BOM, or Windows-1252."""
    if not raw.strip():
        raise DataError("The file is empty. Choose a CSV file with a column of vibration samples.")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encodings = ("utf-16",)
    else:
        # Excel's plain "CSV" export in Western Europe is Windows-1252, e.g. a "µm/s²" header.
        encodings = ("utf-8-sig", "cp1252")
    text = None
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError as error:
            failure = error
    if text is None:
        if _BINARY_CHARS.search(raw.decode("latin-1")):
            raise _binary_error()
        raise DataError(
            f"The file is not readable text: byte 0x{raw[failure.start]:02x} at position {failure.start} is "
            f"neither UTF-8 nor Windows-1252. Save it again as 'CSV UTF-8'."
        )
    text = text.rstrip("\x1a")  # DOS end-of-file marker
    if _BINARY_CHARS.search(text):
        raise _binary_error()
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _binary_error() -> DataError:
    return DataError(
        "This looks like a binary file, not CSV text (it contains control bytes). Export the data as CSV "
        "(e.g. from Excel, MATLAB writematrix or pandas to_csv) and upload that."
    )


# --- dialect --------------------------------------------------------------------------------------


def _head_lines(text: str) -> list[str]:
    """The first non-blank, non-comment lines, enough to sniff the dialect from."""
    head = text[: 4 * _SNIFF_LINES * MAX_LINE_CHARS]
    lines = head.split("\n")
    cut = len(head) < len(text)
    kept = []
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_CHARS:
            raise DataError(
                f"Line {number} is {len(line):,} characters long or more; a vibration table has short lines. "
                f"Is this a CSV file?"
            )
        if cut and number == len(lines):
            break  # cut off by the slice above
        if not _SKIPPED_IN_SNIFF.fullmatch(line):
            kept.append(line)
            if len(kept) == _SNIFF_LINES:
                break
    if not kept:
        raise DataError("The file has no data: only blank or comment (#) lines.")
    return kept


def _split(line: str, separator: str) -> list[str]:
    if separator == " ":
        fields = line.split()
    else:
        fields = next(csv.reader([line], delimiter=separator, skipinitialspace=True))
    while len(fields) > 1 and not fields[-1].strip():  # trailing separators
        fields.pop()
    return fields or [""]


def _is_number(cell: str, decimal: str) -> bool:
    cell = cell.strip()
    if decimal == ",":
        if "." in cell:
            return False
        cell = cell.replace(",", ".")
    if not cell or "_" in cell:  # Python's float() takes "1_000"; pandas does not
        return False
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _numeric_share(rows: list[list[str]], decimal: str) -> float:
    cells = [cell for row in rows for cell in row if cell.strip()]
    return sum(_is_number(cell, decimal) for cell in cells) / len(cells) if cells else 0.0


def _sniff(text: str) -> _Dialect:
    lines = _head_lines(text)
    try:
        separator, decimal, rows = _choose_separator(lines)
    except csv.Error as error:
        raise DataError(f"The first lines cannot be split into fields: {error}.") from error
    first, data = rows[0], rows[1:]
    has_header = _has_header(first, data, decimal)
    body = data if has_header else rows
    width = Counter(len(row) for row in body).most_common(1)[0][0] if body else len(first)
    if width > MAX_COLUMNS:
        raise DataError(
            f"The table has {width} columns; at most {MAX_COLUMNS} are read (a signal per class, or signal, "
            f"time and label). Remove the other columns."
        )
    if has_header and len(first) != width:
        raise DataError(
            f"The header line has {len(first)} field{'s' if len(first) > 1 else ''} but the data lines have {width} "
            f"({_SEPARATOR_NAMES[separator]}-separated). Give every column one name, or comment out extra "
            f"lines above the table with #."
        )
    names = tuple((first[j].strip() if has_header else "") or f"column {j + 1}" for j in range(width))
    text_columns = tuple(j for j in range(width) if _mostly_text([row[j] for row in body if j < len(row)], decimal))
    padding = " \t".replace(separator, "")  # whitespace after the last separator, not the separator itself
    trailing = separator != " " and any(line.rstrip(padding).endswith(separator) for line in lines)
    return _Dialect(separator, decimal, has_header, names, text_columns, trailing)


def _choose_separator(lines: list[str]) -> tuple[str, str, list[list[str]]]:
    single_comma = _single_decimal_comma_column(lines)
    if single_comma:
        return single_comma
    candidates = []
    for priority, separator in enumerate(_SEPARATORS):
        rows = [_split(line, separator) for line in lines]
        data = rows[1:] or rows
        width, hits = Counter(len(row) for row in data).most_common(1)[0]
        if width < 2:
            continue
        decimal = "," if separator != "," and _numeric_share(data, ",") > _numeric_share(data, ".") else "."
        steady = hits / len(data) >= 0.9
        fits = len(rows[0]) == width  # the header (or first row) has as many fields as the data
        score = (fits and steady, fits, steady, _numeric_share(data, decimal), -priority)
        candidates.append((score, separator, decimal, rows))
    best = max(candidates, key=lambda candidate: candidate[0]) if candidates else None
    if best and best[0][0]:
        return best[1], best[2], best[3]
    # No separator gives a steady table under a fitting first line: a single column, if it reads as one.
    single = [[line] for line in lines]
    if _numeric_share(single[1:] or single, ",") >= 0.9:
        return _unused_separator(lines, "\t;|"), ",", single
    if best and _numeric_share(single[1:] or single, ".") < 0.5:
        # A ragged table: keep the best split, and let pandas or _sniff name the line that breaks it.
        return best[1], best[2], best[3]
    return _unused_separator(lines, ",\t;|"), ".", single


def _single_decimal_comma_column(lines: list[str]) -> tuple[str, str, list[list[str]]] | None:
    """A single column with decimal commas ("0,5", or "0,5;" with a trailing separator) as (separator, ",",
    rows); None for any other table. Such a column also splits evenly on commas, into integers and text."""
    ends = {line.rstrip(" ")[-1:] for line in lines} & set(_TRAILING_AFTER_DECIMAL_COMMA)
    trailing = ends.pop() if len(ends) == 1 else ""
    cells = [line.strip().rstrip(trailing).strip() if trailing else line.strip() for line in lines]
    data = cells[1:] or cells
    # With a separator after it, "2" is a whole number, not a row of two integers: it may stand among "0,5".
    ended = trailing and all(line.rstrip(" ").endswith(trailing) for line in lines[1:] or lines)
    number = _DECIMAL_COMMA_OR_WHOLE if ended else _DECIMAL_COMMA_NUMBER
    first_is_single = "," not in cells[0] or number.fullmatch(cells[0])
    if not (first_is_single and (ended or any("," in c for c in data)) and all(number.fullmatch(c) for c in data)):
        return None
    separator = trailing or _unused_separator(lines, "\t;|")
    return separator, ",", [[cell] for cell in cells]


def _unused_separator(lines: list[str], choices: str) -> str:
    """For a single column: a separator pandas will not find in the sampled lines."""
    return next((separator for separator in choices if not any(separator in line for line in lines)), choices[0])


def _has_header(first: list[str], data: list[list[str]], decimal: str) -> bool:
    if not data:
        return not any(_is_number(cell, decimal) for cell in first)
    for j, cell in enumerate(first):
        if cell.strip() and not _is_number(cell, decimal):
            below = [row[j] for row in data if j < len(row) and row[j].strip()]
            if below and 2 * sum(_is_number(value, decimal) for value in below) > len(below):
                return True
    return False


def _mostly_text(cells: list[str], decimal: str) -> bool:
    cells = [cell for cell in cells if cell.strip()]
    return bool(cells) and 2 * sum(not _is_number(cell, decimal) for cell in cells) > len(cells)


def _skipped_line_pattern(separator: str) -> re.Pattern:
    # Blank lines, comment lines and lines of nothing but separators (Excel pads tables with ",,,").
    filler = "" if separator == " " else re.escape(separator)
    return re.compile(rf"[ \t]*#[^\n]*|[ \t{filler}]*")


def _table_text(text: str, dialect: _Dialect) -> str:
    """The table alone: skipped lines removed, trailing separators cut, so pandas sees a plain grid."""
    skipped = _skipped_line_pattern(dialect.separator).pattern
    # Anchored on a literal "\n" (not ^ with re.M) so the regex engine can jump from line end to line end.
    table = re.sub(rf"\n(?:{skipped})(?=\n|\Z)", "", "\n" + text)[1:]
    if dialect.trailing_separators:
        # One separator per pass (a repeated group before $ is slow on a long file), and at most as many
        # passes as a table has columns: more trailing separators than that, pandas reports with the line.
        trailing = re.compile(rf"{re.escape(dialect.separator)}[ \t]*$", re.M)
        for _ in range(MAX_COLUMNS):
            table, removed = trailing.subn("", table)
            if not removed:
                break
    return table


def _check_size(n_rows: int, dialect: _Dialect) -> None:
    if n_rows <= 0:
        raise DataError(
            f"The file has a header ({', '.join(dialect.names)}) but no data rows. Add the samples below it."
        )
    if n_rows > MAX_ROWS:
        raise DataError(
            f"The file has {n_rows:,} data rows; the limit is {MAX_ROWS:,}. Upload a shorter excerpt "
            f"(a few seconds per class is enough)."
        )
    if n_rows * dialect.width > MAX_VALUES:
        raise DataError(
            f"The table has {n_rows:,} rows x {plural(dialect.width, 'column')}; the limit is {MAX_VALUES:,} values. "
            f"Upload fewer rows or fewer columns."
        )


# --- column roles ---------------------------------------------------------------------------------


def _roles(dialect: _Dialect, interpretation: str | None = None) -> _Roles:
    """Which column is what: the signals, the label and the time columns (with the time's unit), and the shape."""
    label = _label_column(dialect)
    time, time_scale = _time_column(dialect, label)
    signals = tuple(j for j in range(dialect.width) if j not in (label, time))

    if not signals:
        raise DataError(
            "No numeric signal column found: every column holds text or is the time or label column. "
            "A vibration CSV needs at least one column of numbers."
        )
    if label is not None:
        if len(signals) > 1:
            raise DataError(
                f"A table with a label column needs exactly one signal column; this one has {len(signals)}: "
                f"{_quoted(dialect, signals)}. Keep one signal column, or drop the label column and name each "
                f"column after its class (a wide table)."
            )
        return _Roles("long", signals, label, time, time_scale)
    if len(signals) > 1:
        return _Roles(_several_signals_shape(dialect, signals, interpretation), signals, None, time, time_scale)
    return _Roles("single", signals, None, time, time_scale)


def _label_column(dialect: _Dialect) -> int | None:
    """The label column: named as one in LABEL_COLUMN_NAMES, else the only text column; any other text column
    (or a table of text alone) is a DataError."""
    names = [name.strip().lower() for name in dialect.names]
    label = None
    if dialect.has_header:
        label = next((j for j, name in enumerate(names) if name in LABEL_COLUMN_NAMES), None)
    if label is None and len(dialect.text_columns) == 1:
        label = dialect.text_columns[0]
    if len(dialect.text_columns) == dialect.width:
        raise DataError(
            "No numeric column found: every column holds text. A vibration CSV needs a column of numbers "
            "(the samples), e.g. 'signal' with values like 0.0123 or 1.2e-3."
        )
    stray_text = [j for j in dialect.text_columns if j != label]
    if stray_text:
        raise DataError(
            f"Column{'s' if len(stray_text) > 1 else ''} {_quoted(dialect, stray_text)} hold text, not numbers. "
            f"The reader takes numeric signal columns, an optional time column and one label column "
            f"(named {LABEL_COLUMN_NAMES[0]!r}); remove the others."
        )
    return label


def _time_column(dialect: _Dialect, label: int | None) -> tuple[int | None, float]:
    """The first header named as a time column (not the label's), and its seconds per unit; (None, 1.0) if none."""
    if dialect.has_header:
        for j, name in enumerate(dialect.names):
            match = _TIME_COLUMN.fullmatch(name.strip())
            if match and j != label:
                unit = match.group("unit")
                return j, _TIME_UNITS[unit.lower() if unit else None]
    return None, 1.0


def _several_signals_shape(dialect: _Dialect, signals: tuple[int, ...], interpretation: str | None) -> str:
    """The shape of a table of several signal columns: "wide" (one class per column) or "channels" (sensors of one
    recording), as `interpretation` says, else as the header suggests (core.lab.vibration.names.columns_are)."""
    if interpretation not in (None, *INTERPRETATIONS):
        raise DataError(f"interpretation must be one of {INTERPRETATIONS}, got {interpretation!r}.")
    shape = interpretation or columns_are([dialect.names[j] for j in signals], dialect.has_header)[0]
    if shape == "classes" and not dialect.has_header:
        raise DataError(
            f"The file has {len(signals)} numeric columns but no header naming their classes. Add a header "
            f"line (e.g. normal,IR007,OR007), or read the columns as channels of one recording."
        )
    return "wide" if shape == "classes" else "channels"


def _chosen_channel(roles: _Roles, dialect: _Dialect, channel: str | int | None, file_name: str | None) -> int:
    """The column of the chosen channel: by 0-based position, or by name without a file-number prefix."""
    if channel is None:
        return roles.signals[0]
    if isinstance(channel, int) and not isinstance(channel, bool):
        if 0 <= channel < len(roles.signals):
            return roles.signals[channel]
    else:
        wanted = channel_key(str(channel))
        for j in roles.signals:
            if channel_key(dialect.names[j]) == wanted:
                return j
    names = ", ".join(dialect.names[j] for j in roles.signals)
    raise DataError(f"{file_name or 'The file'} has no channel {channel!r}; its channels are {names}.")


def _quoted(dialect: _Dialect, columns: list[int] | tuple[int, ...]) -> str:
    return ", ".join(repr(dialect.names[j]) for j in columns)


INTERPRETATIONS = ("channels", "classes")


def _channels_label(channels: list[str], name: str | None, file_name: str | None) -> str:
    """The class of a file of channels, from its name or file name; a DataError when neither names one."""
    found = class_from_name(name) or class_from_name(file_name)
    if not found:
        raise DataError(
            f"The columns {', '.join(channels)} are channels of one recording, and nothing names its class: "
            f"name the file after its class (e.g. healthy_load0.csv) or give the class."
        )
    return found


def _single_label(name: str | None, file_name: str | None, header_name: str | None) -> str:
    found = class_from_name(name) or class_from_name(file_name) or header_name
    if found:
        return found
    raise DataError(
        "This file is a single column with no class label. Name the file after its class (e.g. IR007.csv), "
        "pass a name, or add a label column."
    )


# --- parsing and checks ---------------------------------------------------------------------------


class _LineFinder:
    """Maps data-row indices (0-based, header excluded) to line numbers in the uploaded file."""

    def __init__(self, text: str, dialect: _Dialect) -> None:
        self.text = text
        self.skipped = _skipped_line_pattern(dialect.separator)
        self.header_rows = int(dialect.has_header)

    def lines(self, rows: list[int]) -> list[int]:
        wanted = set(rows)
        found: dict[int, int] = {}
        row, start, line_number = -self.header_rows, 0, 0
        while wanted and start <= len(self.text) and len(found) < len(wanted):
            end = self.text.find("\n", start)
            end = len(self.text) if end == -1 else end
            line_number += 1
            if not self.skipped.fullmatch(self.text[start:end]):
                if row in wanted:
                    found[row] = line_number
                row += 1
            start = end + 1
        return [found.get(row, row + self.header_rows + 1) for row in rows]

    def describe(self, rows: np.ndarray) -> str:
        shown = self.lines([int(row) for row in rows[:_SHOWN_LINES]])
        more = f" and {len(rows) - len(shown):,} more" if len(rows) > len(shown) else ""
        return f"line{'s' if len(rows) > 1 else ''} {', '.join(map(str, shown))}{more}"


def _parse(table: bytes, dialect: _Dialect, roles: _Roles, text: str) -> pd.DataFrame:
    # Given names, pandas drops extra fields of the first data row without a word (later rows it reports),
    # so count that row's fields the way pandas splits them first.
    try:
        first_row = _read_table(table, dialect, str, names=None, nrows=1)
    except ValueError as error:  # pandas' ParserError is one
        raise _parser_error(error, dialect, text) from error
    if first_row.shape[1] > dialect.width:
        raise DataError(
            f"The first data line has {first_row.shape[1]} fields where the table has {dialect.width} "
            f"({_SEPARATOR_NAMES[dialect.separator]}-separated). Fix or delete that line."
        )
    dtypes = {j: (str if j == roles.label else np.float64) for j in range(dialect.width)}
    try:
        return _read_table(table, dialect, dtypes)
    except pd.errors.ParserError as error:
        raise _parser_error(error, dialect, text) from error
    except ValueError as error:
        # A float column met a cell that is not a number; find which cells, for the message.
        raise _text_cells_error(table, dialect, roles, text, error) from error


def _read_table(table: bytes, dialect: _Dialect, dtypes: Any, **options: Any) -> Any:
    arguments = {
        "sep": r"\s+" if dialect.separator == " " else dialect.separator,
        "decimal": dialect.decimal,
        "header": None,
        "skiprows": int(dialect.has_header),
        "names": list(range(dialect.width)),
        "index_col": False,
        "dtype": dtypes,
        "skipinitialspace": True,
        "quotechar": '"',
        "encoding": "utf-8",
        "engine": "c",
    }
    return pd.read_csv(io.BytesIO(table), **{**arguments, **options})


def _parser_error(error: Exception, dialect: _Dialect, text: str) -> DataError:
    message = str(error).replace("Error tokenizing data. C error: ", "").strip()
    where = _LineFinder(text, dialect)
    fields = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", message)
    if fields:
        expected, line, saw = (int(group) for group in fields.groups())
        file_line = where.lines([line - 1 - int(dialect.has_header)])[0]
        return DataError(
            f"Line {file_line} has {plural(saw, 'field')} where the table has {expected} "
            f"({_SEPARATOR_NAMES[dialect.separator]}-separated). Fix or delete that line."
        )
    quote = re.search(r"EOF inside string starting at row (\d+)", message)
    if quote:
        file_line = where.lines([int(quote.group(1))])[0]
        return DataError(f'A quoted field opened near line {file_line} is never closed. Check the quotes (").')
    return DataError(f"The table cannot be parsed: {message}.")


def _text_cells_error(table: bytes, dialect: _Dialect, roles: _Roles, text: str, error: Exception) -> DataError:
    numeric = [j for j in range(dialect.width) if j != roles.label]
    try:
        bad_rows, examples = _text_cells(table, dialect, numeric)
    except ValueError:  # pandas' ParserError is one; the first parse already failed, keep its message
        bad_rows = {}
    where = _LineFinder(text, dialect)
    for column in numeric:
        rows = bad_rows.get(column)
        if rows is not None and rows.size:
            return DataError(
                f"Column {dialect.names[column]!r} should hold numbers but has text in {rows.size:,} "
                f"cell{'s' if rows.size > 1 else ''}, on {where.describe(rows)} (e.g. {examples[column]!r}). "
                f"Fix or delete those rows."
            )
    return DataError(f"A numeric column holds a value that is not a number ({error}). Check the file.")


def _text_cells(table: bytes, dialect: _Dialect, columns: list[int]) -> tuple[dict[int, np.ndarray], dict[int, str]]:
    """Per column, the row indices of cells that are not numbers, and the first such cell.

    Read again as text in chunks, so that finding the culprits costs little memory on a large file.
    """
    bad: dict[int, list[np.ndarray]] = {column: [] for column in columns}
    examples: dict[int, str] = {}
    offset = 0
    for chunk in _read_table(table, dialect, str, chunksize=100_000):
        for column in columns:
            cells = chunk[column]
            readable = cells.str.replace(",", ".", regex=False) if dialect.decimal == "," else cells
            numbers = pd.to_numeric(readable, errors="coerce")
            rows = np.flatnonzero(numbers.isna().to_numpy() & cells.notna().to_numpy())
            if rows.size and column not in examples:
                examples[column] = str(cells.iloc[rows[0]])
            bad[column].append(rows + offset)
        offset += len(chunk)
    return {column: np.concatenate(rows) for column, rows in bad.items() if rows}, examples


def _check_finite(values: np.ndarray, column_name: str, where: _LineFinder) -> None:
    bad_rows = np.flatnonzero(~np.isfinite(values))
    if bad_rows.size:
        raise DataError(
            f"Column {column_name!r} has {bad_rows.size:,} missing or non-finite value"
            f"{'s' if bad_rows.size > 1 else ''} (empty, NaN or inf), on {where.describe(bad_rows)}. "
            f"Fill in or delete those rows."
        )


def _check_magnitude(values: np.ndarray, column_name: str, where: _LineFinder) -> None:
    # Loaded, such values would square to inf and the health check would call the channel flat with an sd of
    # nan; refused here, the message can name the rows.
    bad_rows = np.flatnonzero(np.abs(values) > MAX_SAMPLE_MAGNITUDE)
    if bad_rows.size:
        plural = "s" if bad_rows.size > 1 else ""
        limit = f"{MAX_SAMPLE_MAGNITUDE:.0e}".replace("e+", "e")
        raise DataError(
            f"Column {column_name!r} has {bad_rows.size:,} value{plural} of magnitude above {limit}, on "
            f"{where.describe(bad_rows)} (e.g. {values[bad_rows[0]]:.3g}): not a vibration measurement. "
            f"Fix or delete those rows."
        )


def _label_blocks(
    frame: pd.DataFrame, roles: _Roles, dialect: _Dialect, where: _LineFinder
) -> list[tuple[str, int, int]]:
    """(label, start row, stop row) for each run of equal labels; one run of everything without labels."""
    if roles.label is None:
        return [("", 0, len(frame))]
    labels = frame[roles.label].str.strip()
    missing = np.flatnonzero((labels.isna() | (labels == "")).to_numpy())
    if missing.size:
        raise DataError(
            f"The label column {dialect.names[roles.label]!r} is empty on {where.describe(missing)}. "
            f"Give every row its class."
        )
    labels = labels.to_numpy(dtype=object)
    starts = np.concatenate([[0], np.flatnonzero(labels[1:] != labels[:-1]) + 1])
    if starts.size > MAX_RECORDINGS:
        changes = f"The label changes {starts.size - 1:,} times (first at {where.describe(starts[1:])})"
        if dialect.separator == "," and _mostly_digits(labels[: 10 * _SNIFF_LINES]):
            raise DataError(
                f"{changes}, and the label column {dialect.names[roles.label]!r} holds pieces of numbers "
                f"(e.g. {labels[0]!r}), not classes: the file may use decimal commas; is its separator ';'? "
                f"Save it with ';' between columns (or one column per line), or with '.' as the decimal mark."
            )
        raise DataError(
            f"{changes}. Each class must be a continuous block of rows, one recording after another; sort the "
            f"rows by class."
        )
    stops = np.concatenate([starts[1:], [len(labels)]])
    return [(str(labels[start]), int(start), int(stop)) for start, stop in zip(starts, stops)]


def _mostly_digits(labels: np.ndarray) -> bool:
    """Whether most labels hold a digit, as the halves of decimal-comma numbers split on commas do ("5;", "25")."""
    return 2 * sum(any(char.isdigit() for char in str(label)) for label in labels) > len(labels)


def _sample_rate(
    rate: float | None, frame: pd.DataFrame, roles: _Roles, blocks: list, where: _LineFinder
) -> tuple[float, str]:
    if rate is not None:
        return rate, "argument"
    if roles.time is None:
        return DEFAULT_SAMPLE_RATE, "assumed"
    time = frame[roles.time].to_numpy() * roles.time_scale
    steps, span = 0, 0.0
    for _, start, stop in blocks:
        block_steps, block_span = _evenly_spaced(time[start:stop], start, where)
        steps, span = steps + block_steps, span + block_span
    if steps == 0:
        return DEFAULT_SAMPLE_RATE, "assumed"
    rate = steps / span
    # Time stamps are written with a few decimals; within 100 ppm of a whole number of Hz, that is the
    # rate, so separate files from one instrument agree exactly (make_windows needs one rate).
    if abs(rate - round(rate)) <= 1e-4 * rate:
        rate = float(round(rate))
    if not MIN_SAMPLE_RATE <= rate <= MAX_SAMPLE_RATE:
        raise DataError(
            f"The time column gives {rate:g} samples per second. Write time in seconds (or name the column "
            f"'time_ms' for milliseconds), or pass the sample rate."
        )
    return rate, "time column"


def _evenly_spaced(time: np.ndarray, first_row: int, where: _LineFinder) -> tuple[int, float]:
    """(steps, seconds) of one recording's time stamps, after checking they advance evenly."""
    if time.size < 2:
        return 0, 0.0
    steps = np.diff(time)
    backwards = np.flatnonzero(steps < 0)
    if backwards.size:
        raise DataError(
            f"The time column goes backwards at {where.describe(backwards + first_row + 1)}. Sort the rows by "
            f"time, or start each class as its own block."
        )
    span = float(time[-1] - time[0])
    if span <= 0:
        line = where.lines([first_row])[0]
        raise DataError(f"The time column does not advance in the block starting at line {line}.")
    period = span / (time.size - 1)
    # Rounded time stamps repeat or jump by one written digit; only a larger departure is a gap.
    quantum = float(steps[steps > 0].min())
    drift = np.abs(time - (time[0] + period * np.arange(time.size)))
    if drift.max() > max(period, quantum) * (1 + 1e-9):
        jump = int(np.argmax(steps))
        line = where.lines([first_row + jump + 1])[0]
        raise DataError(
            f"The time column jumps by {steps[jump]:g} s at line {line}, where the steps are {period:g} s: "
            f"the samples are not evenly spaced. Remove the gap (split the file), or drop the time column "
            f"and pass the sample rate."
        )
    return time.size - 1, span


# --- example --------------------------------------------------------------------------------------


def example_csv() -> bytes:
    """A small, realistic example upload: a long table (time, signal, label) of three classes, 12 kHz.

    2.5 s per class of the synthetic bearing set (normal, inner and outer race faults of 0.007 in, 0 HP):
    under 2 MB, and enough for make_windows with 1024-sample windows to put windows of every class in
    each split (19 train, 5 validation and 2 test windows per class).
    """
    return _example_csv_bytes()


@lru_cache(maxsize=1)
def _example_csv_bytes() -> bytes:
    from core.lab.vibration.synthetic import synthetic_bearing_set

    recordings = synthetic_bearing_set(seed=0, duration_s=EXAMPLE_SECONDS, classes=EXAMPLE_CLASSES)
    lines = [
        "# PE Lab example upload: a long table, one row per sample, one block of rows per class.",
        "# time in seconds (the sample rate, 12 kHz, is derived from it), signal in g, label = class.",
        "# Synthetic drive-end bearing vibration: normal, inner race and outer race faults of 0.007 in.",
        "time,signal,label",
    ]
    for recording in recordings:
        # Five decimals resolve 1/12000 s well enough for the rate; four quantise the signal in steps of
        # 1e-4 g, 0.15 % of the quietest class's RMS, and keep the file under 2 MB.
        time = np.char.mod("%.5f", np.arange(recording.signal.size) / recording.sample_rate)
        signal = np.char.mod("%.4f", recording.signal)
        lines.extend(f"{t},{x},{recording.label}" for t, x in zip(time, signal))
    return ("\n".join(lines) + "\n").encode("utf-8")
