"""User CSV uploads: every accepted dialect parses to the right classes and samples, every bad file is a
DataError that names its problem, and no input at all makes the reader raise anything else."""

from __future__ import annotations

import io
import string
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.lab.vibration import DataError, csv_reader, make_windows, read_vibration_csv

# --- accepted dialects ----------------------------------------------------------------------------

LONG_WITH_TIME = (
    b"time,signal,label\n"
    b"0.0000,0.5,normal\n0.0001,-0.25,normal\n0.0002,1.0,normal\n"
    b"0.0003,2.0,IR007\n0.0004,3.0,IR007\n"
)
DIALECTS = {
    # id: (file bytes, keyword arguments, [(label, samples)], sample rate, first recording's signal)
    "long table, time column gives 10 kHz": (
        LONG_WITH_TIME,
        {},
        [("normal", 3), ("IR007", 2)],
        10_000.0,
        [0.5, -0.25, 1.0],
    ),
    "wide table, header names the classes": (
        b"normal,IR007,OR007\n0.1,0.2,0.3\n0.4,0.5,0.6\n",
        {},
        [("normal", 2), ("IR007", 2), ("OR007", 2)],
        12_000.0,
        [0.1, 0.4],
    ),
    "single column labelled by name": (
        b"0.1\n0.2\n0.3\n0.4\n",
        {"name": "IR014.csv"},
        [("IR014", 4)],
        12_000.0,
        [0.1, 0.2, 0.3, 0.4],
    ),
    "semicolon with decimal commas": (
        b"signal;label\n0,5;normal\n-1,25;normal\n2,0;B007\n",
        {},
        [("normal", 2), ("B007", 1)],
        12_000.0,
        [0.5, -1.25],
    ),
    "tab separated": (
        b"time\tsignal\tlabel\n0\t1\tOR007\n0.5\t2\tOR007\n1.0\t3\tOR007\n",
        {},
        [("OR007", 3)],
        2.0,
        [1, 2, 3],
    ),
    "whitespace aligned": (
        b"  normal    IR021\n   0.10    -1.5\n   0.20     2.5\n",
        {},
        [("normal", 2), ("IR021", 2)],
        12_000.0,
        [0.1, 0.2],
    ),
    "UTF-8 byte-order mark": (
        "\ufeffsignal,label\n1.5,normal\n2.5,normal\n".encode(),
        {},
        [("normal", 2)],
        12_000.0,
        [1.5, 2.5],
    ),
    "CRLF line ends": (
        b"signal,label\r\n1,normal\r\n2,normal\r\n3,B014\r\n",
        {},
        [("normal", 2), ("B014", 1)],
        12_000.0,
        [1, 2],
    ),
    "quoted fields": (
        b'"time","signal","label"\n"0","1.5","inner race"\n"0.25","2.5","inner race"\n',
        {},
        [("inner race", 2)],
        4.0,
        [1.5, 2.5],
    ),
    "scientific notation": (
        b"signal,label\n1.5e-3,normal\n-2E+2,normal\n3e0,normal\n",
        {},
        [("normal", 3)],
        12_000.0,
        [1.5e-3, -200.0, 3.0],
    ),
    "no header, label column of text": (
        b"0.1,normal\n0.2,normal\n0.3,OR014\n",
        {},
        [("normal", 2), ("OR014", 1)],
        12_000.0,
        [0.1, 0.2],
    ),
    "comment and blank lines": (
        b"# exported by a DAQ\n# rate unknown\n\nsignal,label\n1,normal\n\n# a note mid-table\n2,normal\n",
        {},
        [("normal", 2)],
        12_000.0,
        [1, 2],
    ),
    "trailing separators and padding rows": (
        b"signal,label,\n1,normal,\n2,normal,\n3,IR007,\n,,\n,,\n",
        {},
        [("normal", 2), ("IR007", 1)],
        12_000.0,
        [1, 2],
    ),
    "UTF-16 with BOM (Excel Unicode text)": (
        "signal\tlabel\r\n0,5\tnormal\r\n1,5\tnormal\r\n".encode("utf-16"),
        {},
        [("normal", 2)],
        12_000.0,
        [0.5, 1.5],
    ),
    "time column in milliseconds": (
        b"time_ms,signal\n0,1\n0.5,2\n1.0,3\n",
        {"name": "normal"},
        [("normal", 3)],
        2_000.0,
        [1, 2, 3],
    ),
    "single decimal-comma column, no header": (
        b"0,5\n-1,25\n2,0\n",
        {"name": "B021"},
        [("B021", 3)],
        12_000.0,
        [0.5, -1.25, 2.0],
    ),
    "Windows-1252 header": (
        "Beschleunigung µm/s²;label\n1;normal\n2;normal\n".encode("cp1252"),
        {},
        [("normal", 2)],
        12_000.0,
        [1, 2],
    ),
}


@pytest.mark.parametrize("content, kwargs, expected, rate, first_signal", DIALECTS.values(), ids=DIALECTS.keys())
def test_accepted_dialect_parses_to_the_right_labels_and_samples(content, kwargs, expected, rate, first_signal):
    recordings = read_vibration_csv(content, **kwargs)

    assert [(recording.label, recording.signal.size) for recording in recordings] == expected
    assert all(recording.sample_rate == rate for recording in recordings)
    np.testing.assert_allclose(recordings[0].signal, first_signal, rtol=0, atol=1e-12)


def test_without_time_or_rate_the_rate_is_assumed_and_meta_says_so():
    (recording,) = read_vibration_csv(b"0.1\n0.2\n", name="normal")

    assert recording.sample_rate == 12_000.0
    assert recording.meta["sample_rate_assumed"] is True
    assert recording.meta["sample_rate_source"] == "assumed"


def test_sample_rate_argument_overrides_the_time_column():
    recordings = read_vibration_csv(LONG_WITH_TIME, sample_rate=48_000)

    assert [recording.sample_rate for recording in recordings] == [48_000.0, 48_000.0]
    assert recordings[0].meta["sample_rate_source"] == "argument"
    assert recordings[0].meta["sample_rate_assumed"] is False


def test_time_stamps_rounded_to_five_decimals_still_give_exactly_12_khz():
    time = np.arange(24_000) / 12_000.0  # steps of 8.3333e-5 s written as 0.00008 or 0.00009
    content = "time,signal\n" + "".join(f"{t:.5f},{i % 7}\n" for i, t in enumerate(time))

    (recording,) = read_vibration_csv(content.encode(), name="normal")

    assert recording.sample_rate == 12_000.0
    assert recording.meta["sample_rate_source"] == "time column"


def test_single_column_takes_its_class_from_the_file_name_of_a_path(tmp_path):
    path = tmp_path / "OR021.csv"
    path.write_bytes(b"signal\n1\n2\n3\n")

    (recording,) = read_vibration_csv(path)

    assert recording.label == "OR021"
    assert recording.meta["file"] == "OR021.csv"
    np.testing.assert_array_equal(recording.signal, [1.0, 2.0, 3.0])


def test_an_upload_object_is_read_from_its_start_and_named_by_its_name():
    upload = io.BytesIO(b"0.25\n0.5\n")
    upload.name = "IR007.csv"  # what Streamlit's UploadedFile carries
    upload.read()  # a preview already consumed it

    (recording,) = read_vibration_csv(upload)

    assert recording.label == "IR007"
    np.testing.assert_array_equal(recording.signal, [0.25, 0.5])


def test_several_single_column_files_make_one_recording_per_class():
    uploads = {"normal.csv": b"1\n2\n3\n", "IR007.csv": b"4\n5\n"}

    recordings = [rec for name, data in uploads.items() for rec in read_vibration_csv(data, name=name)]

    assert [(recording.label, recording.signal.size) for recording in recordings] == [("normal", 3), ("IR007", 2)]


def test_a_class_recorded_twice_gives_two_recordings_split_at_the_label_change():
    content = b"signal,label\n1,normal\n2,normal\n3,IR007\n4,normal\n"

    recordings = read_vibration_csv(content)

    assert [(rec.label, rec.signal.tolist(), rec.meta["rows"]) for rec in recordings] == [
        ("normal", [1.0, 2.0], (0, 2)),
        ("IR007", [3.0], (2, 3)),
        ("normal", [4.0], (3, 4)),
    ]


def test_example_csv_is_a_small_long_table_that_windows_into_every_split():
    content = csv_reader.example_csv()

    recordings = read_vibration_csv(content)
    windows = make_windows(recordings, window=1024)

    assert len(content) < 2_000_000
    assert content.startswith(b"# PE Lab example upload")
    assert [(rec.label, rec.signal.size) for rec in recordings] == [
        ("normal", 30_000),
        ("IR007", 30_000),
        ("OR007", 30_000),
    ]
    assert {rec.sample_rate for rec in recordings} == {12_000.0}
    assert recordings[0].meta["sample_rate_source"] == "time column"
    for split in ("train", "val", "test"):
        assert all(count >= 1 for count in windows.counts[split].values()), windows.counts


# --- rejected files -------------------------------------------------------------------------------

ERRORS = {
    # id: (file bytes, keyword arguments, words the message must contain)
    "empty file": (b"", {}, ["empty"]),
    "whitespace only": (b" \n\r\n\t\n", {}, ["empty"]),
    "comments only": (b"# nothing here\n#\n", {}, ["no data", "comment"]),
    "header only": (b"time,signal,label\n", {}, ["header", "no data rows"]),
    "binary content": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", {}, ["binary"]),
    "undecodable bytes": (b"signal\n1\n\x81\x8d\x8f\n", {}, ["not readable text", "0x81", "UTF-8"]),
    "no numeric column": (b"name,label\nfoo,normal\nbar,normal\n", {}, ["No numeric column"]),
    "text inside the signal column": (
        b"signal,label\n1,normal\n2,normal\nfoo,normal\n4,IR007\nbar,IR007\n",
        {},
        ["'signal'", "text in 2 cells", "lines 4, 6", "'foo'"],
    ),
    "non-finite values": (
        b"# note\nsignal,label\n1,normal\nnan,normal\n,normal\n4,IR007\ninf,IR007\n",
        {},
        ["'signal'", "3 missing or non-finite values", "lines 4, 5, 7"],
    ),
    "line with too many fields": (b"signal,label\n1,normal\n2,normal,extra\n", {}, ["Line 3 has 3 fields", "has 2"]),
    "preamble without # ": (
        b"Sample rate: 12000 Hz\nsignal,label\n1,normal\n2,normal\n",
        {},
        ["header line has 1 field", "#"],
    ),
    "single column without any class": (b"0.1\n0.2\n", {}, ["no class label", "Name the file"]),
    "numeric columns without a header or a file name": (
        b"0.1,0.2\n0.3,0.4\n",
        {},
        ["channels of one recording", "nothing names its class"],
    ),
    "two signal columns beside a label": (
        b"DE,FE,label\n1,2,normal\n3,4,normal\n",
        {},
        ["exactly one signal column", "'DE', 'FE'"],
    ),
    "stray text column": (b"signal,notes,label\n1,ok,normal\n2,ok,normal\n", {}, ["'notes'", "hold text"]),
    "empty label": (b"signal,label\n1,normal\n2,\n3,normal\n", {}, ["label column 'label' is empty", "line 3"]),
    "labels interleaved row by row": (
        b"signal,label\n" + b"".join(b"%d,%s\n" % (i, [b"normal", b"IR007"][i % 2]) for i in range(300)),
        {},
        ["label changes 299 times", "continuous block"],
    ),
    "time column with a gap": (
        b"time,signal\n0,1\n1,2\n2,3\n9,4\n10,5\n",
        {"name": "normal"},
        ["jumps by 7 s at line 5"],
    ),
    "time column going backwards": (b"time,signal\n0,1\n2,2\n1,3\n", {"name": "normal"}, ["goes backwards at line 4"]),
    "unclosed quote": (b'signal,label\n1,normal\n"2,normal\n3,normal\n', {}, ["quoted field", "never closed"]),
    "very long line": (b"1," * 20_000, {}, ["characters long"]),
    "bad sample_rate": (b"0.1\n0.2\n", {"name": "normal", "sample_rate": -5}, ["sample_rate"]),
    "sample_rate not a number": (b"0.1\n0.2\n", {"name": "normal", "sample_rate": "fast"}, ["sample_rate"]),
    "not a file at all": (12345, {}, ["Expected a file path"]),
}


@pytest.mark.parametrize("content, kwargs, words", ERRORS.values(), ids=ERRORS.keys())
def test_bad_file_is_a_data_error_that_names_the_problem(content, kwargs, words):
    with pytest.raises(DataError) as caught:
        read_vibration_csv(content, **kwargs)

    for word in words:
        assert word in str(caught.value), str(caught.value)


def test_missing_path_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="Cannot read"):
        read_vibration_csv(tmp_path / "absent.csv")


def test_more_rows_than_the_cap_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(csv_reader, "MAX_ROWS", 5)
    monkeypatch.setattr(csv_reader.pd, "read_csv", _must_not_parse)

    with pytest.raises(DataError, match=r"6 data rows; the limit is 5"):
        read_vibration_csv(b"signal\n" + b"1\n" * 6, name="normal")


def test_more_values_than_the_cap_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(csv_reader, "MAX_VALUES", 10)
    monkeypatch.setattr(csv_reader.pd, "read_csv", _must_not_parse)

    with pytest.raises(DataError, match=r"4 rows x 3 columns; the limit is 10 values"):
        read_vibration_csv(b"a,b,c\n" + b"1,2,3\n" * 4)


def test_more_bytes_than_the_cap_is_refused_for_bytes_paths_and_streams(monkeypatch, tmp_path):
    monkeypatch.setattr(csv_reader, "MAX_UPLOAD_BYTES", 100)
    content = b"1\n" * 51  # 102 bytes
    path = tmp_path / "normal.csv"
    path.write_bytes(content)

    for source in (content, path, io.BytesIO(content)):
        with pytest.raises(DataError, match=r"limit is 0\.0001 MB"):
            read_vibration_csv(source, name="normal")
    read_vibration_csv(content[:100], name="normal")  # at the cap is fine


def test_a_stream_is_read_no_further_than_one_byte_past_the_cap(monkeypatch):
    monkeypatch.setattr(csv_reader, "MAX_UPLOAD_BYTES", 1_000)
    stream = _CountingStream(b"0.5\n" * 1_000_000)  # 4 MB, far past the cap

    with pytest.raises(DataError, match="more than"):
        read_vibration_csv(stream, name="normal")
    assert stream.bytes_read == 1_001


def _must_not_parse(*args, **kwargs):
    raise AssertionError("the table was parsed although it is over the cap")


class _CountingStream(io.BytesIO):
    bytes_read = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


# --- nothing but DataError, whatever the input ----------------------------------------------------

FUZZ = settings(
    max_examples=250,
    deadline=timedelta(seconds=3),  # a bound per input; the typical one takes milliseconds
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
CSV_PIECES = st.sampled_from(
    [*"0123456789", ".", ",", ";", "\t", " ", "|", '"', "'", "#", "-", "+", "e", "E", "\n", "\r\n", "\r"]
    + ["label", "time", "signal", "normal", "IR007", "nan", "inf", "\ufeff", "µ", "1.5e-3", "0,25", ",,", "time_ms"]
)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_give_recordings_or_a_data_error(data):
    _assert_recordings_or_data_error(data)


@FUZZ
@given(st.lists(CSV_PIECES, max_size=300).map("".join), st.sampled_from(["utf-8", "utf-16", "cp1252"]))
def test_random_csv_like_text_gives_recordings_or_a_data_error(text, encoding):
    _assert_recordings_or_data_error(text.encode(encoding, errors="replace"))


@FUZZ
@given(st.text(alphabet=string.printable + "µé\ufeff", max_size=300), st.sampled_from([None, "x.csv"]))
def test_random_printable_text_gives_recordings_or_a_data_error(text, name):
    _assert_recordings_or_data_error(text.encode("utf-8"), name=name)


def _assert_recordings_or_data_error(data: bytes, **kwargs) -> None:
    try:
        recordings = read_vibration_csv(data, **kwargs)
    except DataError as error:
        assert str(error)
        return
    assert recordings and all(np.all(np.isfinite(recording.signal)) for recording in recordings)


@settings(max_examples=80, deadline=timedelta(seconds=3), database=None)
@given(
    values=st.lists(
        st.lists(st.floats(-1e6, 1e6, allow_nan=False).map(lambda v: round(v, 6)), min_size=2, max_size=2),
        min_size=1,
        max_size=30,
    ),
    separator=st.sampled_from([",", ";", "\t", " "]),
    decimal_comma=st.booleans(),
    crlf=st.booleans(),
    bom=st.booleans(),
    trailing_separator=st.booleans(),
)
def test_a_wide_table_written_in_any_dialect_reads_back_exactly(
    values, separator, decimal_comma, crlf, bom, trailing_separator
):
    decimal_comma = decimal_comma and separator != ","
    end = "\r\n" if crlf else "\n"
    tail = separator if trailing_separator and separator != " " else ""

    def cell(value: float) -> str:
        text = repr(value)
        return text.replace(".", ",") if decimal_comma else text

    lines = [f"normal{separator}IR007{tail}"] + [separator.join(cell(v) for v in row) + tail for row in values]
    content = ("\ufeff" if bom else "") + end.join(lines) + end

    recordings = read_vibration_csv(content.encode("utf-8"))

    assert [recording.label for recording in recordings] == ["normal", "IR007"]
    np.testing.assert_array_equal(np.column_stack([rec.signal for rec in recordings]), np.array(values))


def test_extra_fields_on_the_first_data_line_are_reported_not_dropped():
    with pytest.raises(DataError, match="first data line has 3 fields where the table has 2"):
        read_vibration_csv(b"signal,label\n1,normal,9\n2,normal\n3,normal\n4,normal\n")


def test_trailing_tabs_are_cut_like_trailing_commas():
    recordings = read_vibration_csv(b"normal\tIR007\t\n0.5\t1.5\t\n2.5\t3.5\t\n")

    assert [(rec.label, rec.signal.tolist()) for rec in recordings] == [("normal", [0.5, 2.5]), ("IR007", [1.5, 3.5])]
