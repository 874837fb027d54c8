"""load_cwru and CWRU_CATALOGUE: the catalogue, the 48 kHz normal baseline, keys by file number, checksums, errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from core.lab.vibration import CLASS_NAMES, CWRU_CATALOGUE, DataError, load_cwru
from core.lab.vibration.cwru import file_md5

CWRU_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cwru"
needs_cwru = pytest.mark.skipif(
    not (CWRU_DIR / "97.mat").is_file(),
    reason=f"real CWRU files not found in {CWRU_DIR} (shared data folder beside the repository)",
)


def test_catalogue_maps_every_class_and_load_to_the_official_numbers():
    assert len(CWRU_CATALOGUE) == 40
    zero_hp = {entry.label: number for number, entry in CWRU_CATALOGUE.items() if entry.load_hp == 0}
    assert zero_hp == {
        "normal": 97,
        "IR007": 105,
        "IR014": 169,
        "IR021": 209,
        "B007": 118,
        "B014": 185,
        "B021": 222,
        "OR007": 130,
        "OR014": 197,
        "OR021": 234,
    }
    assert [CWRU_CATALOGUE[n].load_hp for n in (234, 235, 236, 237)] == [0, 1, 2, 3]
    assert [CWRU_CATALOGUE[n].rpm for n in (97, 98, 99, 100)] == [1797, 1772, 1750, 1730]
    assert CWRU_CATALOGUE[212].diameter_in == 0.021 and CWRU_CATALOGUE[97].diameter_in == 0.0
    assert CWRU_CATALOGUE[99].sample_rate == 48_000 and CWRU_CATALOGUE[105].sample_rate == 12_000
    assert CWRU_CATALOGUE[98].md5 == "3983dcddead0d4b910ee1e8d3da164b9"
    assert CWRU_CATALOGUE[100].md5 == "cc57a511b95785c805055d99281ea2bb"
    assert {entry.label for entry in CWRU_CATALOGUE.values()} == set(CLASS_NAMES)
    assert len({entry.md5 for entry in CWRU_CATALOGUE.values()}) == 40


@needs_cwru
def test_catalogue_md5s_are_the_published_list():
    published = dict(line.split()[::-1] for line in (CWRU_DIR / "MD5SUMS").read_text().splitlines() if line.strip())
    assert len(published) == 37
    for filename, md5 in published.items():
        assert CWRU_CATALOGUE[int(filename.removesuffix(".mat"))].md5 == md5


@pytest.fixture(scope="module")
def real_0hp():
    if not (CWRU_DIR / "97.mat").is_file():
        pytest.skip(f"real CWRU files not found in {CWRU_DIR}")
    return load_cwru(CWRU_DIR, loads=(0,))


def test_zero_hp_gives_ten_classes_at_12_khz(real_0hp):
    assert [r.label for r in real_0hp] == list(CLASS_NAMES)
    assert all(r.sample_rate == 12_000.0 for r in real_0hp)
    assert real_0hp.missing == []
    fault = real_0hp[1]
    assert fault.meta["file"] == "105.mat" and fault.meta["variable"] == "X105_DE_time"
    assert fault.signal.size == 121_265 and fault.meta["resampling"] is None
    assert fault.meta["rpm"] == 1797 and fault.meta["rpm_measured"] == 1797
    assert fault.meta["load_hp"] == 0 and fault.meta["channel"] == "DE"


def test_normal_baseline_is_resampled_from_48_khz(real_0hp):
    normal = real_0hp[0]
    assert normal.meta["original_sample_rate"] == 48_000
    assert "48 kHz -> 12 kHz" in normal.meta["resampling"]
    assert normal.signal.size == 60_985  # ceil(243 938 / 4)
    # Read at 48 kHz and resampled, the shaft line sits at 1796 rpm / 60 = 29.93 Hz, as in every fault file.
    spectrum = np.abs(np.fft.rfft(normal.signal * np.hanning(normal.signal.size)))
    frequencies = np.fft.rfftfreq(normal.signal.size, 1 / normal.sample_rate)
    low = (frequencies > 20) & (frequencies < 40)
    assert frequencies[low][np.argmax(spectrum[low])] == pytest.approx(1796 / 60, rel=0.01)
    # The anti-alias filter removes only what lies above 6 kHz: RMS 0.0718 g after, 0.0738 g before.
    raw = scipy.io.loadmat(CWRU_DIR / "97.mat")["X097_DE_time"].ravel()
    assert np.sqrt(np.mean(normal.signal**2)) == pytest.approx(np.sqrt(np.mean(raw**2)), rel=0.05)


@needs_cwru
def test_other_channels_and_97_has_no_base_channel():
    fan_end = load_cwru(CWRU_DIR, loads=(3,), channel="FE", allow_missing=True)
    assert fan_end[0].meta["variable"] == "X108_FE_time"
    with pytest.raises(DataError, match=r"97\.mat has no BA channel.*DE, FE"):
        load_cwru(CWRU_DIR, loads=(0,), channel="BA")


@needs_cwru
def test_fault_loads_without_the_normal_files():
    with pytest.raises(DataError, match=r"98\.mat, 99\.mat, 100\.mat"):
        load_cwru(CWRU_DIR, loads=(1, 2, 3))
    recordings = load_cwru(CWRU_DIR, loads=(1, 2, 3), allow_missing=True)
    assert recordings.missing == ["98.mat", "99.mat", "100.mat"]
    assert len(recordings) == 27
    assert sorted({r.label for r in recordings}) == sorted(CLASS_NAMES[1:])
    assert all(r.sample_rate == 12_000.0 for r in recordings)
    assert [r.meta["load_hp"] for r in recordings[:3]] == [1, 2, 3]


def fake_normal_file(folder: Path, number: int, monkeypatch) -> Path:
    """A stand-in for the official 99.mat: it also carries file 98's variables, listed first."""
    rng = np.random.default_rng(number)
    path = folder / f"{number}.mat"
    scipy.io.savemat(
        path,
        {
            "X098_DE_time": rng.standard_normal((4_000, 1)) + 100.0,  # the wrong record, easy to spot
            "X098_FE_time": rng.standard_normal((4_000, 1)),
            f"X{number:03d}_DE_time": np.sin(np.arange(8_000) * 2 * np.pi * 600 / 48_000)[:, None],
            f"X{number:03d}_FE_time": rng.standard_normal((8_000, 1)),
            f"X{number:03d}RPM": np.array([[1750]]),
        },
    )
    entry = dataclasses.replace(CWRU_CATALOGUE[number], md5=file_md5(path))
    monkeypatch.setitem(CWRU_CATALOGUE, number, entry)
    return path


def test_variables_come_from_the_file_number_not_the_first_match(tmp_path, monkeypatch):
    fake_normal_file(tmp_path, 99, monkeypatch)
    recordings = load_cwru(tmp_path, loads=(2,), allow_missing=True)
    assert len(recordings) == 1 and len(recordings.missing) == 9
    normal = recordings[0]
    assert normal.meta["variable"] == "X099_DE_time" and normal.meta["rpm_measured"] == 1750
    # 8000 samples of a 600 Hz sine at 48 kHz -> 2000 samples at 12 kHz, still 600 Hz, amplitude 1.
    assert normal.signal.size == 2_000
    assert abs(normal.signal.mean()) < 0.01  # not file 98's record, which sits at +100
    time_s = np.arange(2_000) / 12_000
    middle = slice(200, 1_800)  # away from the filter's edge effects
    np.testing.assert_allclose(normal.signal[middle], np.sin(2 * np.pi * 600 * time_s[middle]), atol=0.01)


def test_checksum_mismatch_is_a_data_error(tmp_path):
    (tmp_path / "105.mat").write_bytes(b"not a MATLAB file")
    with pytest.raises(DataError, match=r"105\.mat.*MD5.*f14821b40412f33018279198da7f9cdc.*Download it again"):
        load_cwru(tmp_path, loads=(0,), allow_missing=True)


def test_missing_folder_files_and_bad_arguments(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        load_cwru(tmp_path / "nowhere")
    with pytest.raises(DataError, match=r"97\.mat, 105\.mat, 169\.mat.*234\.mat.*allow_missing=True"):
        load_cwru(tmp_path)
    with pytest.raises(DataError, match="None of the CWRU files"):
        load_cwru(tmp_path, allow_missing=True)
    with pytest.raises(DataError, match="loads"):
        load_cwru(tmp_path, loads=(4,))
    with pytest.raises(DataError, match="channel"):
        load_cwru(tmp_path, channel="de")
