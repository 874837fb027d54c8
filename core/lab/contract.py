"""The building blocks of the JSON contracts: which metrics a run records, the checks every validator uses, and
how a saved file's bytes become JSON within the budgets of core.limits.

`core.lab.experiment.results` (the experiment's JSON), `core.lab.study.contract` (the study's) and each evaluation's
block (core.lab.evaluations) validate with these, so a broken file is refused with the same kind of message wherever
the break is: "invalid results JSON: <where> <what is wrong>". `read_json` is the one way a saved file's bytes are
read (the study CLI and the page's "Open a saved file" alike): a gzip stream is expanded at most one byte past
the size limit, and the nesting depth and the longest string are measured by a linear scan before the parser
sees the text, so no file can make the parser recurse or allocate past those budgets.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import zlib
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

from core.limits import MAX_JSON_DEPTH, MAX_REOPENED_BYTES, MAX_REOPENED_TEXT_CHARS, BudgetExceeded

# 5: both kinds at one version; a results file has kind "results" and `comparisons` (compare(), as a study's) in
# place of `paired`; a study's config.sweep (was pe_scale_sweep). Older files: core.lab.study.migration
# 7: a study may record config.snr_db, each run's noise scores (core.lab.study.noise) and each run's history
SCHEMA_VERSION = 8
METRICS = ("accuracy", "precision", "recall", "f1")  # what every run records, fractions in 0..1
BLOCK_METRICS = ("accuracy", "f1")  # what the evaluation blocks record per cell
CELL_KEYS = ("mean", "sd", "n", "values")
# what every run of a results JSON records (core.lab.experiment.results documents each)
RUN_KEYS = (
    "model",
    "seed",
    "accuracy",
    "precision",
    "recall",
    "f1",
    "per_class_f1",
    "confusion_matrix",
    "epochs",
    "best_epoch",
    "converged",
    "train_seconds",
    "windows_per_second",
    "device",
    "history",
    "order_test",
)
ORDER_TEST_KEYS = ("accuracy", "shuffled", "reversed")
HISTORY_KEYS = ("epoch", "train_loss", "val_loss", "val_accuracy")
INT64_MAX = 2**63 - 1  # the largest integer a file may hold where one is read


def to_plain(value: Any) -> Any:
    """numpy scalars and arrays -> JSON-ready Python values, at any depth."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    return value


def require(condition: bool, message: str) -> None:
    """ValueError("invalid results JSON: <message>") unless `condition` holds."""
    if not condition:
        raise ValueError(f"invalid results JSON: {message}")


def is_number(value: Any) -> bool:
    """A finite real number: an integer within 64 bits or a finite float; never a bool, NaN or infinity."""
    if type(value) is float:  # the parser's floats: the fast path of the millions of cells a file may hold
        return math.isfinite(value)
    if isinstance(value, Integral):
        return is_int(value)  # within 64 bits, as numpy and the figures hold it
    return isinstance(value, Real) and math.isfinite(value)


def is_int(value: Any) -> bool:
    """An integer numpy holds as int64 (a larger one would make a table of Python objects)."""
    if type(value) is not int and (not isinstance(value, Integral) or isinstance(value, bool)):
        return False
    return -INT64_MAX - 1 <= value <= INT64_MAX


def is_text(value: Any, max_chars: int = MAX_REOPENED_TEXT_CHARS) -> bool:
    """A non-empty string of at most `max_chars` characters."""
    return isinstance(value, str) and 0 < len(value) <= max_chars


def check_keys(where: str, mapping: Any, keys: Sequence[str], optional: Sequence[str] = ()) -> None:
    """`mapping` is an object holding every one of `keys` and nothing beyond them and `optional`."""
    require(isinstance(mapping, Mapping), f"{where} must be an object, got {type(mapping).__name__}")
    missing, extra = set(keys) - set(mapping), set(mapping) - set(keys) - set(optional)
    require(not missing and not extra, f"{where} keys: missing {sorted(missing)}, unexpected {sorted(extra)}")


def check_optional_number(where: str, value: Any) -> None:
    """`value` is null or a finite number."""
    require(value is None or is_number(value), f"{where} must be a finite number or null")


def check_int_list(where: str, values: Any, minimum: int = 0) -> None:
    """`values` is a non-empty list of 64-bit integers, each at least `minimum`."""
    require(
        isinstance(values, list) and values and all(is_int(v) and v >= minimum for v in values),
        f"{where} must be a non-empty list of integers >= {minimum}",
    )


def check_cell(where: str, cell: Any) -> None:
    """A table cell as core.lab.stats.summary.cell writes it: a fraction summarised over seeds, and its values."""
    check_keys(where, cell, CELL_KEYS)
    values = cell["values"]
    require(
        isinstance(values, list) and all(is_number(v) and 0 <= v <= 1 for v in values),
        f"{where}.values must be a list of fractions in 0..1",
    )
    require(is_int(cell["n"]) and cell["n"] == len(values), f"{where}.n must count the values")
    mean, sd = cell["mean"], cell["sd"]
    require(mean is None or (is_number(mean) and 0 <= mean <= 1), f"{where}.mean must be a fraction in 0..1 or null")
    require(sd is None or (is_number(sd) and 0 <= sd <= 1), f"{where}.sd must be a fraction in 0..1 or null")


def check_cells_by_model(where: str, block: Mapping[str, Any], models: set[str], shape: tuple[int, ...]) -> None:
    """block[metric][model] is a list (of lists) of cells of `shape`, for exactly `models`."""
    for metric in BLOCK_METRICS:
        table = block[metric]
        require(isinstance(table, Mapping), f"{where}.{metric} must be an object")
        require(set(table) == models, f"{where}.{metric} models {sorted(table)} differ from {sorted(models)}")
        for model, cells in table.items():
            _check_nested_cells(f"{where}.{metric}[{model!r}]", cells, shape)


def _check_nested_cells(where: str, cells: Any, shape: tuple[int, ...]) -> None:
    require(isinstance(cells, list) and len(cells) == shape[0], f"{where} must be a list of {shape[0]}")
    for i, inner in enumerate(cells):
        if len(shape) > 1:
            _check_nested_cells(f"{where}[{i}]", inner, shape[1:])
        else:
            check_cell(f"{where}[{i}]", inner)


def run_models(results: Mapping[str, Any]) -> set[str]:
    """The models that have at least one run in `results`."""
    return {run["model"] for run in results["runs"]}


def check_history(where: str, history: Any) -> None:
    """A run's history: per epoch its number, training and validation loss and validation accuracy."""
    require(isinstance(history, list), f"{where} must be a list")
    for i, epoch in enumerate(history):
        check_keys(f"{where}[{i}]", epoch, HISTORY_KEYS)
        require(is_int(epoch["epoch"]), f"{where}[{i}].epoch must be an integer")
        for key in HISTORY_KEYS[1:]:
            require(is_number(epoch[key]), f"{where}[{i}].{key} must be a finite number")


def check_order_test(where: str, scores: Any) -> None:
    """A run's order test (core.lab.probes.order): accuracy as is, shuffled and reversed, fractions."""
    check_keys(where, scores, ORDER_TEST_KEYS)
    require(all(is_number(scores[k]) and 0 <= scores[k] <= 1 for k in ORDER_TEST_KEYS), f"{where} must hold fractions")


def check_order_summary(where: str, summary: Any, models: set[str]) -> None:
    """Per model: runs, accuracy (mean ± sd in %), and the shuffled and reversed drops in points."""
    require(isinstance(summary, Mapping) and set(summary) <= models, f"{where} must cover models that were run")
    for model, row in summary.items():
        at = f"{where}[{model!r}]"
        check_keys(at, row, ("runs", "accuracy", "shuffled_drop", "reversed_drop"))
        require(is_int(row["runs"]) and row["runs"] >= 1, f"{at}.runs must be a positive integer")
        for kind in ("accuracy", "shuffled_drop", "reversed_drop"):
            cell = row[kind]
            check_keys(f"{at}.{kind}", cell, ("mean", "sd", "n") + (() if kind == "accuracy" else ("ci95",)))
            require(is_number(cell["mean"]), f"{at}.{kind}.mean must be a finite number")
            check_optional_number(f"{at}.{kind}.sd", cell["sd"])
            require(is_int(cell["n"]) and cell["n"] >= 1, f"{at}.{kind}.n must be a positive integer")
            check_interval(f"{at}.{kind}.ci95", cell.get("ci95"))


def check_interval(where: str, ci: Any) -> None:
    """null, or [low, high] with low <= high (a list, or a tuple before it is written)."""
    require(
        ci is None
        or (isinstance(ci, (list, tuple)) and len(ci) == 2 and all(is_number(v) for v in ci) and ci[0] <= ci[1]),
        f"{where} must be null or [low, high]",
    )


def check_fractions(where: str, values: Any, n: int) -> None:
    """`values` is a list of `n` fractions in 0..1, one per class."""
    require(
        isinstance(values, list) and len(values) == n and all(is_number(v) and 0 <= v <= 1 for v in values),
        f"{where} must be {n} fractions, one per class",
    )


def check_count_matrix(where: str, matrix: Any, n: int) -> None:
    """A confusion matrix: n x n non-negative integers (rows true, columns predicted)."""
    require(
        isinstance(matrix, list)
        and len(matrix) == n
        and all(isinstance(row, list) and len(row) == n for row in matrix)
        and all(is_int(v) and v >= 0 for row in matrix for v in row),
        f"{where} must be {n} x {n} non-negative integers",
    )


def check_number_matrix(where: str, matrix: Any) -> None:
    """A table drawn as lines or a heatmap: a non-empty rectangular list of non-empty lists of finite numbers."""
    require(
        isinstance(matrix, list)
        and matrix
        and all(isinstance(row, list) and row and len(row) == len(matrix[0]) for row in matrix)
        and all(is_number(v) for row in matrix for v in row),
        f"{where} must be a rectangular table of finite numbers",
    )


def check_number_list(where: str, values: Any) -> None:
    """`values` is a non-empty list of finite numbers."""
    require(
        isinstance(values, list) and values and all(is_number(v) for v in values),
        f"{where} must be a non-empty list of finite numbers",
    )


# --- reading a saved file --------------------------------------------------------------------------------

GZIP_MAGIC = b"\x1f\x8b"
SCAN_CHUNK_BYTES = 1 << 18  # the scan holds a few arrays of this many elements, however large the file


def read_json(raw: bytes, limit: int = MAX_REOPENED_BYTES) -> Any:
    """The JSON value of a saved file's bytes (gzip-compressed or not), within the budgets of core.limits;
    ValueError (BudgetExceeded for a budget) with one line for anything else. Every float is finite (NaN,
    Infinity and 1e999 are refused); the validators bound the integers they read (`is_int`)."""
    megabytes = f"{limit / 1e6:.0f} MB"
    if len(raw) > limit:
        raise BudgetExceeded(f"the file is {len(raw) / 1e6:.1f} MB, over the {megabytes} limit of a saved file")
    if raw[:2] == GZIP_MAGIC:
        raw = gunzip_bounded(raw, limit)
        if len(raw) > limit:
            raise BudgetExceeded(f"uncompressed, the file is over the {megabytes} limit of a saved file")
    depth, longest = json_extent(raw, MAX_JSON_DEPTH)
    if depth > MAX_JSON_DEPTH:
        raise BudgetExceeded(
            f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels, deeper than any file this lab writes"
        )
    if longest > MAX_REOPENED_TEXT_CHARS:
        raise BudgetExceeded(
            f"the file holds a string of {longest:,} bytes, over the limit of {MAX_REOPENED_TEXT_CHARS:,}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"the file is not valid JSON: not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:  # unreachable after the depth scan; kept so no input can raise it
        raise BudgetExceeded(f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as error:  # JSONDecodeError, and the refusals of the hooks below
        raise ValueError(f"the file is not valid JSON ({' '.join(str(error).split())})") from None


def gunzip_bounded(data: bytes, limit: int) -> bytes:
    """At most one byte past `limit` is expanded, so a small file cannot unpack into gigabytes."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            return stream.read(limit + 1)
    except (OSError, EOFError, zlib.error) as error:
        raise ValueError(f"the file is not valid gzip ({' '.join(str(error).split())})") from None


def json_extent(raw: bytes, max_depth: int) -> tuple[int, int]:
    """(the deepest nesting of [ and {, the longest string in bytes) of JSON text, by one linear scan that skips
    what is inside strings (a quote after an odd run of backslashes is escaped). It stops once deeper than
    `max_depth`. Exact for valid UTF-8 JSON, which is all the parser accepts afterwards."""
    depth = deepest = longest = 0
    quotes_before = 0  # unescaped quotes so far: odd while inside a string
    opened = -1  # where the string open at a chunk's start began
    backslashes = 0  # the run of backslashes that ended the previous chunk
    for start in range(0, len(raw), SCAN_CHUNK_BYTES):
        chunk = np.frombuffer(raw, np.uint8, min(SCAN_CHUNK_BYTES, len(raw) - start), start)
        index = np.arange(len(chunk))
        # for each byte, the last non-backslash before it; the backslashes in between escape it when odd
        last_plain = np.maximum.accumulate(np.where(chunk != 0x5C, index, -1))
        before = np.concatenate(([-1], last_plain[:-1]))
        run = np.where(before >= 0, index - 1 - before, index + backslashes)
        quote = (chunk == 0x22) & (run % 2 == 0)
        inside = (np.cumsum(quote) + quotes_before) % 2 == 1
        step = (~inside & ((chunk == 0x5B) | (chunk == 0x7B))).astype(np.int8)
        step -= (~inside & ((chunk == 0x5D) | (chunk == 0x7D))).astype(np.int8)
        if len(step):
            levels = depth + np.cumsum(step, dtype=np.int64)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        if deepest > max_depth:
            break
        positions = start + np.flatnonzero(quote)
        if quotes_before % 2:
            positions = np.concatenate(([opened], positions))
        pairs = len(positions) // 2 * 2
        if pairs:
            longest = max(longest, int((positions[1:pairs:2] - positions[0:pairs:2] - 1).max()))
        if len(positions) % 2:
            opened = int(positions[-1])
            longest = max(longest, start + len(chunk) - opened - 1)  # a string still open counts so far
        quotes_before += int(quote.sum())
        backslashes = len(chunk) - 1 - int(last_plain[-1]) if last_plain[-1] >= 0 else len(chunk) + backslashes
    return deepest, longest


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a saved file holds")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large for a number")
    return value
