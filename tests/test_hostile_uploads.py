"""Uploads a hosted visitor can aim at the server: selections past the upload budgets (refused by their sizes
before anything is read), CSV values near the float limit, random and mangled files (read or refused with one
line, never another exception), and refused data that must not stay in the session.

The page tests run the Fault lab's data section alone (ui.lab.data.data_section, which owns the uploaders):
the same widgets as the page, without the page's charts."""

from __future__ import annotations

import dataclasses
import string
import tomllib
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core import limits
from core.lab.vibration import DataError, example_csv
from core.lab.vibration.csv_reader import MAX_UPLOAD_BYTES, read_vibration_csv
from core.lab.vibration.health import check_signal
from core.limits import BudgetExceeded
from tests.apptest_utils import ROOT, errors
from ui.lab import files as lab_files
from ui.lab import keys

DATA_SECTION = """
from ui.lab.data import data_section
data_section()
"""
UPLOADERS = {  # source -> (uploader key, Load button key)
    "csv": ("csv_files", "load_csv"),
    "cwru": ("cwru_files", "load_cwru_files"),
}


def open_data_section(source: str) -> AppTest:
    at = AppTest.from_string(DATA_SECTION, default_timeout=60)
    at.query_params["dataset"] = source
    at.run()
    if source == "cwru":
        at.radio(key="cwru_from").set_value("uploaded .mat files").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def selection(at: AppTest, source: str, files: dict[str, bytes]) -> None:
    uploader, _ = UPLOADERS[source]
    at.file_uploader(key=uploader).set_value([(name, data, "application/octet-stream") for name, data in files.items()])
    at.run()


def _never(*args, **kwargs):
    raise AssertionError("a file was inspected or read although the selection is over its budget")


# --- budgets of a selection ------------------------------------------------------------------------------


@pytest.mark.parametrize("source", list(UPLOADERS))
def test_a_selection_over_the_session_budget_is_refused_in_one_line_and_nothing_is_read(source, monkeypatch):
    monkeypatch.setattr(limits, "MAX_SESSION_UPLOAD_BYTES", 2_000_000)
    monkeypatch.setattr(lab_files, "inspections", _never)
    monkeypatch.setattr(lab_files, "digest", _never)
    at = open_data_section(source)
    before = at.session_state[keys.DATA_KEY]

    selection(at, source, {f"{name}.mat": b"0.5\n" * 200_000 for name in ("105", "118", "130")})  # 3 x 0.8 MB

    assert not at.exception, [e.message for e in at.exception]
    assert errors(at) == [
        "The total of the 3 selected files is 2.4 MB, over the limit of 2 MB. Remove some files, or load them in parts."
    ]
    assert at.button(key=UPLOADERS[source][1]).disabled
    assert at.session_state[keys.DATA_KEY] is before
    assert keys.DIGESTS_KEY not in at.session_state


def test_a_file_over_the_per_file_budget_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(limits, "MAX_UPLOAD_FILE_BYTES", 1_000)
    monkeypatch.setattr(lab_files, "inspections", _never)
    at = open_data_section("csv")
    before = at.session_state[keys.DATA_KEY]

    selection(at, "csv", {"normal.csv": b"0.5\n" * 100, "IR007_long.csv": b"0.25\n" * 1_000})

    assert errors(at) == [
        "IR007_long.csv is 0.0 MB, over the limit of 0 MB. Upload a shorter excerpt (a few seconds per class "
        "is enough), or split it into parts."
    ]
    assert at.button(key="load_csv").disabled and at.session_state[keys.DATA_KEY] is before


def test_the_budget_check_looks_at_sizes_only_and_refuses_count_file_and_total_in_that_order(monkeypatch):
    def upload(name: str, size: int) -> SimpleNamespace:
        return SimpleNamespace(name=name, size=size, getvalue=_never, read=_never)

    monkeypatch.setattr(limits, "MAX_UPLOAD_FILES", 3)
    lab_files.check_uploads([upload("a.csv", 25_000_000), upload("b.csv", 25_000_000)])  # at the limits: fine
    with pytest.raises(BudgetExceeded, match=r"^The number of files selected is 4, over the limit of 3\."):
        lab_files.check_uploads([upload(f"{i}.csv", 10) for i in range(4)])
    with pytest.raises(BudgetExceeded, match=r"^big\.mat is 25\.0 MB, over the limit of 25 MB\."):
        lab_files.check_uploads([upload("big.mat", 25_000_001)])
    with pytest.raises(BudgetExceeded, match=r"^The total of the 3 selected files is 60\.0 MB, over the limit"):
        lab_files.check_uploads([upload("1.csv", 25_000_000), upload("2.csv", 25_000_000), upload("3.csv", 10_000_001)])
    assert lab_files.upload_refusal([upload("a\n[x](http://x).csv", 30_000_000)]).count("\n") == 0


def test_the_transport_limit_and_the_readers_cap_say_the_per_file_budget():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 1_000_000 == limits.MAX_UPLOAD_FILE_BYTES == MAX_UPLOAD_BYTES


# --- what stays in the session ---------------------------------------------------------------------------


def _held(value, depth: int = 0):
    """Every numpy array and bytes object reachable from a session value (through containers and dataclasses)."""
    if depth > 8:
        return
    if isinstance(value, (np.ndarray, bytes, bytearray)):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _held(item, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _held(item, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for item in vars(value).values():
            yield from _held(item, depth + 1)


def _session_values(at: AppTest) -> list:
    # The uploader's own value is the selection itself, which Streamlit keeps until the visitor removes it.
    return [value for key, value in at.session_state.to_dict().items() if key not in ("csv_files", "cwru_files")]


def test_a_refused_flat_upload_keeps_no_recording_in_the_session_and_the_data_stays():
    at = open_data_section("csv")
    before = at.session_state[keys.DATA_KEY]
    flat = "s1,s2\n" + "0.0,0.0\n" * 7_777

    selection(at, "csv", {"dead_load0.csv": flat.encode()})
    at.button(key="load_csv").click().run()

    assert not at.exception, [e.message for e in at.exception]
    assert errors(at) == [
        "Not loaded: dead_load0.csv, channel s1 is flat (constant, about 1 distinct values per window): a dead or "
        "disconnected sensor; it is not trained on."
    ]
    assert at.session_state[keys.DATA_KEY] is before
    held = [x for value in _session_values(at) for x in _held(value)]
    assert not [x for x in held if isinstance(x, np.ndarray) and x.size == 7_777]
    assert not [x for x in held if isinstance(x, (bytes, bytearray)) and len(x) > 1_000]


def test_after_load_the_session_holds_the_recordings_and_none_of_the_uploaded_bytes():
    lab_files._inspect.clear()
    at = open_data_section("csv")
    files = {
        name: (
            "signal\n" + "\n".join(f"{np.sin(i / period) + 0.01 * np.cos(i / 7):.5f}" for i in range(6_001))
        ).encode()
        for name, period in (("normal.csv", 3), ("IR007.csv", 5))
    }

    selection(at, "csv", files)
    at.button(key="load_csv").click().run()

    assert not errors(at), errors(at)
    data = at.session_state[keys.DATA_KEY]
    assert data.labels == ["normal", "IR007"] and [r.signal.size for r in data.recordings] == [6_001, 6_001]
    held = [x for value in _session_values(at) for x in _held(value)]
    assert not [x for x in held if isinstance(x, (bytes, bytearray)) and len(x) > 1_000]
    assert set(at.session_state[keys.DIGESTS_KEY].values()) == {ref.sha256 for ref in data.spec.files}


def test_a_file_already_inspected_is_not_read_again_when_another_is_added(monkeypatch):
    lab_files._inspect.clear()
    seen: list[str] = []
    real = lab_files.inspect_vibration_file

    def counting(content, name=None):
        seen.append(name)
        return real(content, name=name)

    monkeypatch.setattr(lab_files, "inspect_vibration_file", counting)
    at = open_data_section("csv")
    first = {"normal.csv": b"signal\n" + b"0.5\n0.25\n" * 50}
    selection(at, "csv", first)
    at.run()  # a rerun with the same selection inspects nothing
    selection(at, "csv", {**first, "IR007.csv": b"signal\n" + b"0.1\n-0.2\n" * 50})

    assert seen == ["normal.csv", "IR007.csv"]
    assert len(at.dataframe) + len(at.get("arrow_data_frame")) >= 1  # the preview table is shown


# --- values near the float limit -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, reason",
    [
        ("1e308", "1 value of magnitude above 1e150, on line 4 (e.g. 1e+308): not a vibration measurement"),
        ("-1e200", "1 value of magnitude above 1e150, on line 4 (e.g. -1e+200): not a vibration measurement"),
        ("inf", "1 missing or non-finite value (empty, NaN or inf), on line 4"),
        ("nan", "1 missing or non-finite value (empty, NaN or inf), on line 4"),
    ],
)
def test_csv_values_near_the_float_limit_are_refused_with_their_line_and_column(value, reason):
    content = f"signal\n0.5\n-0.25\n{value}\n0.125\n".encode()
    with pytest.raises(DataError) as refused:
        read_vibration_csv(content, name="normal.csv")
    message = str(refused.value)
    assert message.startswith(f"Column 'signal' has {reason}") and "\n" not in message


def test_values_up_to_the_magnitude_limit_load_and_their_spread_is_finite():
    rng = np.random.default_rng(0)
    signal = rng.standard_normal(4_096) * 1e149
    text = "signal\n" + "\n".join(f"{x:.6e}" for x in signal) + "\n1e150\n"
    (recording,) = read_vibration_csv(text.encode(), name="normal.csv")
    assert recording.signal.size == 4_097 and np.isfinite(np.std(recording.signal))
    assert check_signal(recording.signal, "normal.csv, channel 1") == []


@pytest.mark.parametrize(
    "signal, why",
    [
        (np.r_[np.linspace(-1, 1, 5_000), 1e308], "holds values of magnitude above 1e150 (up to 1e+308)"),
        (np.r_[np.linspace(-1, 1, 5_000), np.inf], "holds 1 non-finite values (NaN or inf)"),
        (np.r_[np.nan, np.linspace(-1, 1, 5_000), np.nan], "holds 2 non-finite values (NaN or inf)"),
        (np.array([0.5]), "has 1 sample"),
        (np.array([]), "has 0 samples"),
    ],
    ids=["huge", "inf", "nan", "one sample", "empty"],
)
def test_the_health_check_refuses_a_signal_that_is_no_measurement_instead_of_an_sd_of_nan(signal, why):
    (finding,) = check_signal(signal, "x.mat, channel 1")
    assert finding.kind == "unusable" and finding.refuses_training
    assert finding.message == f"x.mat, channel 1 {why}: not a vibration measurement; it is not trained on."


# --- fuzz: read, or refused in one line ------------------------------------------------------------------

FUZZ = settings(max_examples=100, deadline=None, database=None)
SMALL_VALID = b"\n".join(example_csv().split(b"\n")[:64]) + b"\n"  # comments, header, 60 rows of one class
HOSTILE = st.sampled_from(
    [b"1e308", b"-1e200", b"1e150", b"1.5e151", b"inf", b"-Infinity", b"nan", b"NaN", b"", b",", b",,", b";", b'"']
    + [b"1e400", b"0x1p3", b"1_000", b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"\r", b"\n", b"#", b"normal", b"time"]
)
CSV_TEXT = st.text(alphabet=string.digits + ".,;\t |#-+eE\n\"'" + "infa", max_size=300)


def _read_or_refused(content: bytes) -> None:
    try:
        recordings = read_vibration_csv(content, name="normal.csv")
    except (DataError, BudgetExceeded) as error:
        message = str(error)
        assert message and "\n" not in message and "\r" not in message, message
        return
    for recording in recordings:
        assert recording.signal.size and np.all(np.isfinite(recording.signal))
        assert np.max(np.abs(recording.signal)) <= limits.MAX_SAMPLE_MAGNITUDE


def test_the_small_valid_csv_the_fuzz_mutates_loads():
    (recording,) = read_vibration_csv(SMALL_VALID, name="normal.csv")
    assert recording.label == "normal" and recording.signal.size == 60 and recording.signal[0] == -0.1093


@FUZZ
@given(edits=st.lists(st.tuples(st.integers(0, len(SMALL_VALID)), st.integers(0, 12), HOSTILE), min_size=1, max_size=6))
def test_a_mangled_valid_csv_is_read_or_refused_in_one_line(edits):
    content = SMALL_VALID
    for at, cut, piece in edits:  # replace `cut` bytes at `at` by a hostile piece
        content = content[:at] + piece + content[at + cut :]
    _read_or_refused(content)


@FUZZ
@given(st.one_of(st.binary(max_size=300), CSV_TEXT.map(str.encode)))
def test_random_bytes_and_csv_like_text_are_read_or_refused_in_one_line(content):
    _read_or_refused(content)


def test_rates_that_no_small_ratio_joins_are_refused_instead_of_resampled_to_a_wrong_label():
    from core.lab.vibration.rates import to_lowest_rate
    from core.lab.vibration.types import Recording

    signal = np.zeros(2_000)
    joined, notes = to_lowest_rate([Recording(signal, 48_000.0, "a"), Recording(signal, 12_000.0, "b")])
    assert [r.sample_rate for r in joined] == [12_000.0, 12_000.0] and len(joined[0].signal) == 500
    assert notes == ["a: 48000 Hz resampled to 12000 Hz (resample_poly 1/4)"]
    with pytest.raises(DataError, match="far.csv at 12000 Hz cannot be brought to 1 Hz"):
        to_lowest_rate([Recording(signal, 12_000.0, "x", {"file": "far.csv"}), Recording(signal, 1.0, "y")])


def test_a_sample_rate_below_one_hertz_is_refused_like_one_above_ten_megahertz():
    text = "\n".join(str(v) for v in np.sin(np.arange(64)))
    for rate in (0.5, 2e7):
        with pytest.raises(DataError, match="sample_rate must be between 1 and 1e\\+07 Hz"):
            read_vibration_csv(text.encode(), name="x.csv", sample_rate=rate)
