"""The small misreadings of a visitor's first five minutes (issue 25), each read right now, with exact values and
messages: a one-column file of decimal commas with trailing semicolons, a label column that is really the halves
of split numbers, a sample rate the preview assumes, durations under a minute, "1 epochs", and the schema
versions the README names."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.lab import wait
from core.lab.experiment.results import SCHEMA_VERSION
from core.lab.files_table import assumed_rate_note, proposed_table, spec_from_table
from core.lab.report import plural, verdict
from core.lab.vibration import DataError, read_vibration_csv
from core.lab.vibration.inspect import inspect_vibration_file
from core.lab.wait import describe_limit, page_refusal
from core.limits import MAX_PAGE_RUNS
from tests.apptest_utils import ROOT, errors, open_lab
from ui.lab import keys

FIRST = [0.5, -1.25, 2.0, 0.125, -3.5]


def decimal_comma_column(values, end: str = ";", header: str | None = None) -> bytes:
    """One value a line, written with a decimal comma and followed by `end` (Excel's German CSV export)."""
    lines = ([header] if header else []) + [f"{v:g}".replace(".", ",") + end for v in values]
    return ("\n".join(lines) + "\n").encode()


def long_column(n: int) -> list[float]:
    return FIRST + [round(float(v), 3) for v in np.sin(np.arange(n - len(FIRST)) / 3)]


# --- 1. decimal commas with a trailing semicolon -------------------------------------------------------------


@pytest.mark.parametrize("end", [";", ";;", "; ", "\t", "|"], ids=["semicolon", "two", "space after", "tab", "pipe"])
def test_a_column_of_decimal_commas_each_followed_by_a_separator_is_one_column_of_numbers(end):
    values = long_column(36_000)
    (recording,) = read_vibration_csv(decimal_comma_column(values, end), name="IR007.csv")
    assert recording.label == "IR007"
    assert recording.signal[:5].tolist() == FIRST
    assert recording.signal.size == 36_000
    np.testing.assert_array_equal(recording.signal, values)
    assert recording.meta["decimal"] == ","


def test_a_header_and_whole_numbers_among_the_decimal_commas_are_read_too():
    content = decimal_comma_column([0.5, -1.25, 2, 3, -4.75], header="signal;")
    (recording,) = read_vibration_csv(content, name="normal.csv")
    assert recording.signal.tolist() == [0.5, -1.25, 2.0, 3.0, -4.75]
    assert recording.meta["column"] == "signal" and recording.meta["separator"] == "semicolon"


def test_the_preview_of_such_a_file_says_one_column_and_shows_the_numbers():
    found = inspect_vibration_file(decimal_comma_column(FIRST), name="IR007.csv")
    assert found.columns == ("column 1",) and found.roles == ("channel",) and found.decimal == ","
    assert found.head["column 1"].tolist() == ["0,5", "-1,25", "2", "0,125", "-3,5"]
    assert found.describe() == (
        "1 column with no header: one signal column of class IR007 (one numeric column: its class is the file name)."
    )


def test_a_label_column_of_split_numbers_names_the_decimal_commas_not_the_sort_order():
    # "0,500mV" (a unit glued on) splits on the comma into 0 and "500mV": numbers and a label changing every row
    lines = [f"{v:.3f}mV".replace(".", ",") for v in long_column(300)]
    with pytest.raises(DataError) as refused:
        read_vibration_csv(("\n".join(lines) + "\n").encode(), name="IR007.csv")
    assert str(refused.value) == (
        "The label changes 299 times (first at lines 2, 3, 4, 5, 6 and 294 more), and the label column 'column 2' "
        "holds pieces of numbers (e.g. '500mV'), not classes: the file may use decimal commas; is its separator "
        "';'? Save it with ';' between columns (or one column per line), or with '.' as the decimal mark."
    )


def test_a_real_label_column_in_the_wrong_order_still_asks_for_sorted_rows():
    rows = "signal,label\n" + "".join(f"{i / 10},{'ab'[i % 2]}\n" for i in range(300))
    with pytest.raises(DataError) as refused:
        read_vibration_csv(rows.encode())
    assert str(refused.value) == (
        "The label changes 299 times (first at lines 3, 4, 5, 6, 7 and 294 more). Each class must be a continuous "
        "block of rows, one recording after another; sort the rows by class."
    )


# --- 2. an assumed sample rate is marked as assumed ----------------------------------------------------------

NOTE = "12000 Hz (assumed: no time column or rate in the file; edit it)."
SIGNAL = long_column(30_000)
TIMED = "time,signal\n" + "".join(f"{i / 12_000:.6f},{v}\n" for i, v in enumerate(SIGNAL))
FILES = {"IR007.csv": decimal_comma_column(SIGNAL), "normal.csv": TIMED.encode()}


def inspected():
    return [inspect_vibration_file(content, name=name) for name, content in FILES.items()]


def test_a_rate_nobody_gave_is_marked_assumed_in_the_found_column_and_a_time_columns_rate_is_not():
    assert assumed_rate_note(12_000.0) == NOTE
    table = proposed_table(list(FILES), inspected(), False, 12_000.0, rate_assumed=True)
    assert table["sample rate (Hz)"].tolist() == [12_000.0, 12_000.0]
    assert [i.sample_rate for i in inspected()] == [None, 12_000.0]
    assert table["found"].iloc[0] == f"{NOTE} {inspected()[0].describe()}"
    assert table["found"].iloc[1] == inspected()[1].describe()
    assert "assumed" not in table["found"].iloc[1]


def test_a_typed_or_edited_rate_is_no_longer_called_assumed():
    typed = proposed_table(list(FILES), inspected(), False, 6_000.0, rate_assumed=False)
    assert typed["found"].tolist() == [i.describe() for i in inspected()]
    edited = proposed_table(list(FILES), inspected(), False, 12_000.0, rate_assumed=True, edited_rates={0})
    assert "assumed" not in edited["found"].iloc[0]


def test_load_still_reads_the_file_at_the_assumed_rate():
    found = inspected()
    table = proposed_table(list(FILES), found, False, 12_000.0, rate_assumed=True)
    spec = spec_from_table([(name, "0" * 64) for name in FILES], found, table, None)
    assert [ref.choices() for ref in spec.files] == [{}, {}]
    (recording,) = read_vibration_csv(FILES["IR007.csv"], name="IR007.csv")
    assert recording.sample_rate == 12_000.0 and recording.meta["sample_rate_assumed"] is True


def found_column(at) -> list[str]:
    return next(frame.value for frame in at.dataframe if "found" in frame.value.columns)["found"].tolist()


def test_the_page_marks_the_assumed_rate_until_the_visitor_edits_it_and_loads_with_it():
    at = open_lab({"dataset": "csv"})
    upload = [(name, content, "text/csv") for name, content in FILES.items()]
    at.file_uploader(key="csv_files").set_value(upload).run()
    assert [cell.startswith(NOTE) for cell in found_column(at)] == [True, False]
    at.session_state["csv_preview"] = {
        "edited_rows": {0: {"sample rate (Hz)": 12_000.0}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not any("assumed" in cell for cell in found_column(at))
    at.session_state["csv_preview"] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert found_column(at)[0].startswith(NOTE)
    at.button(key="load_csv").click().run()
    assert not at.exception and not errors(at), errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.labels == ["IR007", "normal"] and [r.sample_rate for r in data.recordings] == [12_000.0, 12_000.0]
    assert [r.meta["sample_rate_source"] for r in data.recordings] == ["assumed", "time column"]


# --- 3. durations under a minute and singular nouns ----------------------------------------------------------


def test_one_thing_is_singular_and_others_plural_with_thousands_grouped():
    assert plural(1, "epoch") == "1 epoch"
    assert plural(0, "seed") == "0 seeds"
    assert plural(2, "run") == "2 runs"
    assert plural(1, "class", "classes") == "1 class"
    assert plural(3, "class", "classes") == "3 classes"
    assert plural(35_998, "time") == "35,998 times"


def test_a_limit_under_a_minute_or_off_the_minute_is_said_in_seconds():
    assert describe_limit(600) == "10 minutes"
    assert describe_limit(60) == "1 minute"
    assert describe_limit(45) == "45 s"
    assert describe_limit(90) == "90 s"


def test_the_page_refusal_says_one_training_run_and_a_short_budget_in_seconds(monkeypatch):
    assert page_refusal(1, 700).startswith(
        f"Too large for a shared page (1 training run, about 12 min; one press starts at most {MAX_PAGE_RUNS} runs "
        "or 10 minutes), and this server"
    )
    monkeypatch.setattr(wait, "MAX_PAGE_SECONDS", 45)
    monkeypatch.setattr(wait, "MAX_PAGE_RUNS", 1)
    assert "(2 training runs, about 50 s; one press starts at most 1 run or 45 s)" in page_refusal(2, 50)


def test_a_test_set_of_one_window_is_one_window():
    assert verdict({}, 1, ("A", "B")) == (
        "No other model to compare with A. The test set has 1 window, so one window is 100.00 points of accuracy."
    )
    assert verdict({}, 4, ("B",)).endswith("The test set has 4 windows, so one window is 25.00 points of accuracy.")


# --- 4. the README names the current schema versions ---------------------------------------------------------


def test_the_readme_names_the_current_results_and_study_schema_versions():
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())  # wherever a line wraps
    assert SCHEMA_VERSION == 8  # of both kinds
    assert "results JSON (`schema_version` 8," in readme
    assert "current `schema_version` 8 of both" in readme
    assert re.findall(r"(results|study) schema (\d)", readme) == []  # no bare older number read as current
