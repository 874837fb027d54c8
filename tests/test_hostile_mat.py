""".mat files from a visitor are counted before scipy reads them: a thousandfold zlib bomb, allocations
declared by sizes alone, a nest deep enough to crash scipy and data types scipy crashes on are refused in one
line; files under the budget load as before; a stored rate outside the rate range is never proposed, and
loading with it is refused; random and mutated files give a recording or a one-line refusal, nothing else."""

from __future__ import annotations

import io
import struct
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
import scipy.io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from core import limits
from core.lab.vibration.mat_budget import VARIABLE_BYTES, check_mat_budget
from core.lab.vibration.matlab import inspect_mat, read_mat_variable
from core.lab.vibration.types import DataError
from core.limits import BudgetExceeded
from tests.apptest_utils import ROOT
from ui.lab import keys

CWRU_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "cwru"
HEADER = b"MATLAB 5.0 MAT-file, written by a test".ljust(116) + bytes(8) + struct.pack("<H", 0x0100) + b"IM"
MB = 1 << 20


# --- building .mat elements by hand (little-endian v5) ------------------------------------------------------


def element(kind: int, data: bytes) -> bytes:
    return struct.pack("<II", kind, len(data)) + data + bytes(-len(data) % 8)


def small(kind: int, data: bytes) -> bytes:
    """A small data element: type and byte count in one word, at most 4 bytes of data in the next."""
    return struct.pack("<HH", kind, len(data)) + data.ljust(4, b"\0")


def array(mclass: int, dims: tuple[int, ...], name: bytes, body: bytes) -> bytes:
    header = element(6, struct.pack("<II", mclass, 0)) + element(5, struct.pack(f"<{len(dims)}i", *dims))
    contents = header + small(1, name) + body
    return struct.pack("<II", 14, len(contents)) + contents


def zero_bomb(megabytes: int) -> bytes:
    """A v5 file whose one compressed variable is a double vector of `megabytes` MiB of zeros, built without
    ever holding more than 1 MiB of it: after a full flush deflate starts afresh, so the compressed MiB of
    zeros is the same bytes every time, and the zlib trailer's Adler-32 is carried along."""
    values = megabytes * MB // 8
    contents = element(6, struct.pack("<II", 6, 0)) + element(5, struct.pack("<2i", values, 1)) + small(1, b"x")
    contents += struct.pack("<II", 9, values * 8)  # the tag of the zeros that follow
    head = struct.pack("<II", 14, len(contents) + values * 8) + contents
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
    zeros = bytes(MB)
    one_mb = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    adler = zlib.adler32(head)
    for _ in range(megabytes):
        adler = zlib.adler32(zeros, adler)
    stream = b"\x78\xda" + start + one_mb * megabytes + deflate.flush() + struct.pack(">I", adler)
    return HEADER + struct.pack("<II", 15, len(stream)) + stream


def saved(content: dict, compressed: bool = False, **options) -> bytes:
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, content, do_compression=compressed, **options)
    return buffer.getvalue()


def refuse_scipy(monkeypatch) -> None:
    def must_not_run(*args, **kwargs):
        raise AssertionError("scipy.io.loadmat ran on a file the budget should have refused")

    monkeypatch.setattr(scipy.io, "loadmat", must_not_run)


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return zero_bomb(80)  # 80 MiB of doubles from about 80 KB


# --- the budget ------------------------------------------------------------------------------------------------


def test_the_bomb_is_a_valid_zlib_stream_that_expands_a_thousandfold(bomb):
    inflater = zlib.decompressobj()
    first = inflater.decompress(bomb[136:], MB)
    assert first[:4] == struct.pack("<I", 14) and first[-MB // 2 :] == bytes(MB // 2)
    assert 80 * MB / len(bomb) > 900


def test_a_thousandfold_zlib_bomb_is_refused_before_scipy_holding_a_few_chunks_at_most(bomb, monkeypatch):
    refuse_scipy(monkeypatch)
    tracemalloc.start()
    with pytest.raises(BudgetExceeded) as refused:
        check_mat_budget(bomb, "bomb.mat")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4_000_000  # against 84 MB expanded: the check holds chunks, never the array
    assert str(refused.value) == (
        "bomb.mat expands to more than 64 MB when read, over the limit for one MATLAB file; save fewer or shorter "
        "variables, or split the recording into several files."
    )
    for read in (lambda: inspect_mat(bomb, "bomb.mat"), lambda: read_mat_variable(bomb, "bomb.mat", "x", 1e3, "c")):
        with pytest.raises(BudgetExceeded, match="^bomb.mat expands to more than 64 MB"):
            read()


@pytest.mark.parametrize(
    "what, raw, message",
    [
        (
            "a struct array of 10^8 elements without fields, 192 bytes",
            HEADER + array(2, (10**8, 1), b"s", small(5, struct.pack("<i", 1)) + element(1, b"")),
            "expands to more than 64 MB",
        ),
        (
            "a char array of 2^31 - 1 blanks without data",
            HEADER + array(4, (2**31 - 1, 1), b"c", element(16, b"")),
            "expands to more than 64 MB",
        ),
        (
            "a cell array of 2^31 - 1 elements, none present",
            HEADER + array(1, (2**31 - 1, 1), b"c", b""),
            "expands to more than 64 MB",
        ),
        (
            "a struct with 20,000 distinct field names, compared pairwise by scipy",
            HEADER
            + array(
                2,
                (0, 0),
                b"s",
                small(5, struct.pack("<i", 8)) + element(1, b"".join(b"f%06d\0" % i for i in range(20_000))),
            ),
            "expands to more than 64 MB",
        ),
    ],
    ids=["struct", "char", "cell", "field-names"],
)
def test_sizes_declared_without_bytes_behind_them_are_counted_before_scipy(what, raw, message, monkeypatch):
    refuse_scipy(monkeypatch)
    with pytest.raises(BudgetExceeded, match=message):
        inspect_mat(raw, "declared.mat")
    assert len(raw) < 200_000, what


def test_a_nest_deeper_than_the_limit_is_refused_where_scipy_would_crash_the_process(monkeypatch):
    refuse_scipy(monkeypatch)
    nest = array(6, (1, 1), b"x", element(9, struct.pack("<d", 1.0)))
    for _ in range(limits.MAX_MAT_NESTING):  # with the variable itself, one level too deep
        nest = array(1, (1, 1), b"", nest)
    for raw in (HEADER + nest, HEADER + struct.pack("<II", 15, len(zlib.compress(nest))) + zlib.compress(nest)):
        with pytest.raises(BudgetExceeded, match=f"nests cells or structs more than {limits.MAX_MAT_NESTING} levels"):
            inspect_mat(raw, "deep.mat")


@pytest.mark.parametrize("kind", [0, 8, 10, 11, 15, 19, 100])
def test_a_data_type_scipy_would_crash_on_is_refused_as_damaged(kind, monkeypatch):
    refuse_scipy(monkeypatch)
    with pytest.raises(DataError, match=f"not a MATLAB file this app can read: an element of unknown data type {kind}"):
        inspect_mat(HEADER + array(6, (1, 2), b"x", element(kind, bytes(16))), "crash.mat")


def test_files_under_the_budget_load_exactly_as_before_and_count_their_size_plus_each_variable():
    signal = np.sin(np.arange(1_000) / 7)
    plain, packed = saved({"x": signal}), saved({"x": signal}, compressed=True)
    variable = 8 + 16 + 16 + 8 + 8 + 8_000  # tag, flags, dims, name "x", data tag, 1,000 doubles
    assert len(plain) == 128 + variable
    assert check_mat_budget(plain, "plain.mat") == len(plain) + VARIABLE_BYTES
    assert check_mat_budget(packed, "packed.mat") == 128 + 8 + variable + VARIABLE_BYTES  # inflated behind its tag
    assert len(packed) < 8_000
    for raw in (plain, packed):
        recording = read_mat_variable(raw, "run.mat", "x", 12_000.0, "normal")
        assert np.array_equal(recording.signal, signal) and recording.sample_rate == 12_000.0
        assert np.array_equal(scipy.io.loadmat(io.BytesIO(raw))["x"].ravel(), signal)
    v4 = saved({"x": signal}, format="4")
    assert check_mat_budget(v4, "v4.mat") == len(v4) + VARIABLE_BYTES
    assert np.array_equal(read_mat_variable(v4, "v4.mat", "x", 100.0, "c").signal, signal)


def test_a_small_integer_vector_too_large_as_floats_is_refused_when_read(monkeypatch):
    raw = saved({"x": np.arange(100_000, dtype=np.int64).astype(np.int8)})
    monkeypatch.setattr(limits, "MAX_MAT_DECOMPRESSED_BYTES", 400_000)  # the file's 0.1 MB passes, 0.8 MB of floats not
    with pytest.raises(
        BudgetExceeded, match=r"x holds 100,000 samples, 0\.8 MB as 64-bit floats, over the limit of 0\.4 MB"
    ):
        read_mat_variable(raw, "int8.mat", "x", 100.0, "c")


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"", "it is too short to be a MATLAB file"),
        (b"garbage", "it is too short to be a MATLAB file"),
        (bytes(64), "its header is all zeros"),
        (HEADER[:100], "it is too short for a MATLAB header"),
        (
            HEADER + struct.pack("<II", 14, 4096) + bytes(40),
            "a variable's size is zero or runs past the end of the file",
        ),
        (HEADER + struct.pack("<II", 15, 16) + b"not zlib at all!", "a compressed variable is not a valid zlib stream"),
        (HEADER + struct.pack("<II", 9, 8) + bytes(8), "an element of type 9 where a variable should be"),
        (HEADER + b"\x0e\0\0", "it ends inside a variable's tag"),
    ],
    ids=["empty", "word", "zeros", "short-header", "overlong", "bad-zlib", "not-a-variable", "cut-tag"],
)
def test_truncated_or_garbage_bytes_are_refused_in_one_line(raw, why, monkeypatch):
    refuse_scipy(monkeypatch)
    with pytest.raises(DataError) as refused:
        inspect_mat(raw, "bad.mat")
    assert str(refused.value) == f"bad.mat is not a MATLAB file this app can read: {why}."
    assert not isinstance(refused.value, BudgetExceeded)


def test_a_one_variable_file_cut_anywhere_is_refused_in_one_line():
    content = {"x": np.arange(40.0)}
    for raw in (saved(content), saved(content, compressed=True), saved(content, format="4")):
        for cut in range(0, len(raw) - 1, 5):
            with pytest.raises(DataError) as refused:
                inspect_mat(raw[:cut], "cut.mat")
            assert "\n" not in str(refused.value) and str(refused.value).startswith("cut.mat is not a MATLAB file")


# --- stored rates ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stored", [1e30, 0.0, float("nan"), -5.0, float("inf"), 0.5, 2e7])
def test_a_stored_rate_outside_the_range_is_ignored_and_loading_with_it_is_refused(stored):
    raw = saved({"x": np.sin(np.arange(500) / 3), "fs": stored})
    inspection = inspect_mat(raw, "odd_rate.mat")
    assert inspection.sample_rate is None and inspection.rates == {}
    assert list(inspection.ignored_rates) == ["fs"] and inspection.ignored_rates["fs"] == pytest.approx(
        stored, nan_ok=True
    )
    assert f"; fs = {stored:g} ignored (a sample rate is between 1 and 1e+07 Hz)" in inspection.describe()
    with pytest.raises(DataError) as unset:
        read_mat_variable(raw, "odd_rate.mat", "x", inspection.sample_rate, "c")
    assert str(unset.value) == (
        f"odd_rate.mat: give the sample rate of x; the file's fs = {stored:g} is not one "
        "(a sample rate is between 1 and 1e+07 Hz)."
    )
    with pytest.raises(DataError) as given_:
        read_mat_variable(raw, "odd_rate.mat", "x", stored, "c")
    message = str(given_.value)
    assert "\n" not in message
    if stored == 0:  # zero is no rate at all, as an empty table cell
        assert message == str(unset.value)
    else:
        assert message == f"odd_rate.mat: the sample rate of x must be between 1 and 1e+07 Hz, got {stored!r}."


def test_a_stored_rate_inside_the_range_is_proposed_and_loads():
    raw = saved({"x": np.sin(np.arange(500) / 3), "bearing": {"fs": 25_600.0}})
    inspection = inspect_mat(raw, "good.mat")
    assert inspection.sample_rate == 25_600.0 and inspection.ignored_rates == {}
    assert read_mat_variable(raw, "good.mat", "x", inspection.sample_rate, "c").sample_rate == 25_600.0


# --- the real CWRU files --------------------------------------------------------------------------------------


def test_every_real_cwru_file_passes_counting_its_size_and_variables_97_mat_3_904_208_bytes():
    files = sorted(CWRU_DIR.glob("*.mat"))
    if not files:
        pytest.skip(f"real CWRU files not found at {CWRU_DIR} (see ../shared/data/README.md)")
    for path in files:
        raw = path.read_bytes()
        variables = len(scipy.io.whosmat(io.BytesIO(raw)))  # official files: whosmat is safe on them
        assert check_mat_budget(raw, path.name) == len(raw) + variables * VARIABLE_BYTES, path.name
    if (CWRU_DIR / "97.mat").is_file():  # uncompressed doubles: DE, FE and RPM
        assert check_mat_budget((CWRU_DIR / "97.mat").read_bytes(), "97.mat") == 3_903_344 + 3 * 288 == 3_904_208


# --- fuzzing --------------------------------------------------------------------------------------------------

FUZZ = settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
SEEDS = {
    "plain": saved({"x": np.arange(20.0), "fs": 100.0, "s": {"a": np.arange(3), "t": "hi"}}),
    "packed": saved({"x": np.arange(20.0), "c": np.array([np.arange(2), "a"], dtype=object)}, compressed=True),
    "v4": saved({"x": np.arange(20.0), "fs": np.array(100.0)}, format="4"),
}


def _inflated_mutation(raw: bytes, data) -> bytes:
    """Mutate a compressed file's first variable inside its zlib stream, so the mutation reaches the walk."""
    inner = bytearray(zlib.decompress(raw[136 : 136 + struct.unpack_from("<I", raw, 132)[0]]))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(inner) - 4))
        inner[at : at + 4] = struct.pack("<I", data.draw(st.sampled_from([0, 1, 5, 14, 15, 2**31 - 1, 2**32 - 1])))
    packed = zlib.compress(bytes(inner))
    return raw[:128] + struct.pack("<II", 15, len(packed)) + packed + raw[136 + struct.unpack_from("<I", raw, 132)[0] :]


def _loads_or_refuses_in_one_line(raw: bytes) -> None:
    try:
        inspection = inspect_mat(raw, "fuzz.mat")
        read_mat_variable(raw, "fuzz.mat", inspection.variable, 100.0, "c")
    except (DataError, BudgetExceeded) as error:
        assert str(error) and "\n" not in str(error)


@FUZZ
@given(st.binary(max_size=300), st.sampled_from([b"", HEADER]))
def test_random_bytes_load_or_are_refused_in_one_line(tail, head):
    _loads_or_refuses_in_one_line(head + tail)


@FUZZ
@given(st.sampled_from(sorted(SEEDS)), st.data())
def test_flipped_cut_or_rewritten_valid_files_load_or_are_refused_in_one_line(seed, data):
    raw = bytearray(SEEDS[seed])
    if seed == "packed" and data.draw(st.booleans()):
        raw = bytearray(_inflated_mutation(bytes(raw), data))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    raw = raw[: data.draw(st.integers(0, len(raw)))] if data.draw(st.booleans()) else raw
    _loads_or_refuses_in_one_line(bytes(raw))


# --- the page ---------------------------------------------------------------------------------------------------


def test_the_fault_lab_refuses_the_bomb_in_one_line_and_keeps_the_current_data(bomb):
    at = AppTest.from_file(str(ROOT / "pages" / "fault_lab.py"), default_timeout=60)
    at.run()
    before = at.session_state[keys.DATA_KEY]
    at.radio(key="dataset").set_value("csv").run()
    at.file_uploader(key="csv_files").set_value(("bomb.mat", bomb, "application/octet-stream")).run()
    at.button(key="load_csv").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert error.startswith("bomb.mat") and "expands to more than 64 MB" in error and "\n" not in error
    assert at.session_state[keys.DATA_KEY] is before
    assert "**Current data:** the built-in synthetic set" in " ".join(m.value for m in at.markdown)
