"""Real-world layouts read the way a practitioner means them: files of sensor columns (one recording each,
the class from the file name), a CWRU-style export, a headerless tab-separated file without extension, odd
and mixed sample rates, dead or clipped channels, a non-CWRU .mat with a struct; and the per-file choices
travel through DataSpec and the CLI."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
import scipy.io

from core.lab.data_spec import DataSpec, FileRef
from core.lab.experiment.cli import build_parser
from core.lab.vibration import DataError, read_vibration_csv
from core.lab.vibration.health import check_signal
from core.lab.vibration.inspect import inspect_vibration_file, propose
from core.lab.vibration.matlab import inspect_mat, read_mat_variable
from core.lab.vibration.names import class_from_name

RATE = 12_000


def four_sensor_file(seed: int, fault: bool = False, rows: int = 8_000) -> bytes:
    """A healthy or faulty recording of four accelerometers s1..s4 (impacts every 97 samples when faulty)."""
    rng = np.random.default_rng(seed)
    t = np.arange(rows)
    base = rng.standard_normal((rows, 4)) * [1.0, 0.5, 0.8, 0.3]
    if fault:
        base[t % 97 == 0] += 6.0
    lines = ["s1,s2,s3,s4"] + [",".join(f"{v:.5f}" for v in row) for row in base]
    return ("\n".join(lines) + "\n").encode()


def test_files_sharing_a_four_sensor_header_are_channels_with_the_class_from_the_file_name():
    healthy = inspect_vibration_file(four_sensor_file(0), name="healthy_load0.csv")
    faulty = inspect_vibration_file(four_sensor_file(1, True), name="faulty_load0.csv")
    assert healthy.interpretation == faulty.interpretation == "channels"
    assert healthy.roles == ("channel",) * 4 and healthy.signal_columns == ("s1", "s2", "s3", "s4")
    assert "channels s1, s2, s3, s4 of one recording of class healthy_load0" in healthy.describe()
    assert list(healthy.head.columns) == ["s1", "s2", "s3", "s4"] and len(healthy.head) == 5
    (recording,) = read_vibration_csv(four_sensor_file(0), name="healthy_load0.csv")
    assert recording.label == "healthy_load0" and recording.meta["column"] == "s1"
    assert recording.meta["channels"] == ["s1", "s2", "s3", "s4"] and recording.signal.size == 8_000
    (third,) = read_vibration_csv(four_sensor_file(0), name="healthy_load0.csv", channel="s3", label="healthy")
    assert third.meta["column"] == "s3" and third.label == "healthy"
    assert class_from_name("healthy_load50.csv", up_to_digit=True) == "healthy_load"


def test_a_shared_header_of_unknown_names_is_proposed_as_channels_and_class_names_stay_classes():
    unknown = b"p1,p2\n" + b"0.1,0.2\n0.3,0.4\n" * 20
    one, two = propose([inspect_vibration_file(unknown, name="a.csv"), inspect_vibration_file(unknown, name="b.csv")])
    assert one.interpretation == two.interpretation == "channels" and "2 files share the header" in one.reason
    wide = b"normal,IR007\n" + b"0.1,0.2\n0.3,0.4\n" * 20
    both = propose([inspect_vibration_file(wide, name="x.csv"), inspect_vibration_file(wide, name="y.csv")])
    assert [i.interpretation for i in both] == ["classes", "classes"]
    assert [r.label for r in read_vibration_csv(wide, name="x.csv")] == ["normal", "IR007"]


def test_a_cwru_style_export_matches_channels_across_files_without_the_file_number():
    def export(number: int) -> bytes:
        header = f"X{number:03d}_DE_time,X{number:03d}_FE_time,X{number:03d}_BA_time"
        return (
            header + "\n" + "\n".join(f"{i % 7 * 0.1:.3f},{i % 5 * 0.2:.3f},{i % 3 * 0.3:.3f}" for i in range(500))
        ).encode()

    inspection = inspect_vibration_file(export(105), name="IR007.csv")
    assert inspection.interpretation == "channels" and inspection.class_name == "IR007"
    (fan,) = read_vibration_csv(export(118), name="B007.csv", channel="X105_FE_time")
    assert fan.meta["column"] == "X118_FE_time" and fan.label == "B007"
    with pytest.raises(DataError, match=r"B007.csv has no channel 'X105_XX_time'; its channels are X118_DE_time"):
        read_vibration_csv(export(118), name="B007.csv", channel="X105_XX_time")


def test_a_headerless_tab_separated_file_without_extension_is_four_channels_of_its_time_stamp():
    rows = "\n".join("\t".join(f"{np.sin(i * k):.4f}" for k in (1, 2, 3, 4)) for i in range(400))
    inspection = inspect_vibration_file(rows.encode(), name="2004.02.12.10.32.39")
    assert (inspection.interpretation, inspection.separator, inspection.has_header) == ("channels", "tab", False)
    (recording,) = read_vibration_csv(rows.encode(), name="2004.02.12.10.32.39")
    assert recording.label == "2004.02.12.10.32.39" and recording.meta["column"] == "column 1"


def test_a_time_column_at_48828_hz_proposes_that_rate_and_mixed_rates_meet_at_the_lowest(tmp_path):
    rate = 48_828.125
    fast = ("time,signal\n" + "\n".join(f"{i / rate:.9f},{np.sin(i / 5):.5f}" for i in range(4_000))).encode()
    inspection = inspect_vibration_file(fast, name="ball.csv")
    assert inspection.interpretation == "single" and inspection.sample_rate == pytest.approx(rate, rel=1e-4)
    slow = ("signal\n" + "\n".join(f"{np.sin(i / 5):.5f}" for i in range(3_000))).encode()
    at_48k = ("signal\n" + "\n".join(f"{np.sin(i / 20):.5f}" for i in range(12_000))).encode()
    spec = DataSpec(
        "csv", files=(FileRef.of("normal.csv", slow), FileRef.of("outer.csv", at_48k, sample_rate=48_000.0))
    )
    normal, outer = spec.load(files={"normal.csv": slow, "outer.csv": at_48k})
    assert normal.sample_rate == outer.sample_rate == 12_000.0
    assert outer.meta["resampled_from"] == 48_000.0 and outer.signal.size == 3_000  # 12,000 samples / 4


def test_a_flat_channel_is_refused_and_a_clipped_one_warned_about():
    rng = np.random.default_rng(0)
    (flat,) = check_signal(np.round(rng.standard_normal(20_000) * 1e-3, 2), "dead.csv, channel s2")
    assert flat.kind == "flat" and flat.refuses_training and "dead.csv, channel s2 is flat" in flat.message
    clipped = np.clip(rng.standard_normal(20_000) * 2, -2.5, 2.5)
    (finding,) = check_signal(clipped, "loud.csv, channel s1")
    assert finding.kind == "clipped" and not finding.refuses_training and "clipped" in finding.message
    assert check_signal(rng.standard_normal(20_000), "fine.csv, channel s1") == []
    stepped = np.concatenate([rng.standard_normal(10_240), 20 + rng.standard_normal(10_240)])
    assert [f.kind for f in check_signal(stepped, "step.csv, channel s1")] == ["jump"]


def mat_bytes(content: dict) -> bytes:
    buffer = io.BytesIO()
    scipy.io.savemat(buffer, content)
    return buffer.getvalue()


def test_a_mat_file_with_a_struct_lists_its_vectors_and_proposes_its_stored_rate():
    signal = np.sin(np.arange(5_000) / 3)
    raw = mat_bytes({"bearing": {"gs": signal, "sr": 97_656.0, "rate_note": 1.0}, "meta_vector": np.arange(3)})
    inspection = inspect_mat(raw, "baseline_1.mat")
    assert inspection.vectors == {"bearing.gs": 5_000} and inspection.rates == {"bearing.sr": 97_656.0}
    assert (inspection.variable, inspection.sample_rate, inspection.label) == ("bearing.gs", 97_656.0, "baseline_1")
    recording = read_mat_variable(raw, "baseline_1.mat", "bearing.gs", 97_656.0, "baseline")
    assert recording.signal.size == 5_000 and recording.label == "baseline"
    hdf5 = b"\x00" * 512 + b"\x89HDF\r\n\x1a\n" + b"\x00" * 100
    with pytest.raises(DataError, match="v7.3.mat is a MATLAB v7.3 \\(HDF5\\) file"):
        inspect_mat(hdf5, "v7.3.mat")
    with pytest.raises(DataError, match="has no numeric vector 'gs'"):
        read_mat_variable(raw, "baseline_1.mat", "gs", 97_656.0, "x")


def test_per_file_choices_round_trip_through_the_spec_its_dict_and_the_cli(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    contents = {"healthy_load0.csv": four_sensor_file(0), "faulty_load0.csv": four_sensor_file(1, True)}
    for name, content in contents.items():
        (tmp_path / name).write_bytes(content)
    spec = DataSpec(
        "csv",
        files=(
            FileRef.of("healthy_load0.csv", contents["healthy_load0.csv"], label="healthy", channel="s3"),
            FileRef.of(
                "faulty_load0.csv", contents["faulty_load0.csv"], label="faulty", channel="s3", sample_rate=24_000.0
            ),
        ),
    )
    assert DataSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    argv = spec.argv()
    assert argv[argv.index("--files-spec") + 1] == "pe_lab_files.json"
    (tmp_path / "pe_lab_files.json").write_text(json.dumps(spec.files_spec()))
    assert DataSpec.from_args(build_parser().parse_args(argv)) == spec
    healthy, faulty = spec.load()
    assert (healthy.label, faulty.label, healthy.meta["column"]) == ("healthy", "faulty", "s3")
    assert healthy.sample_rate == faulty.sample_rate == 12_000.0 and faulty.meta["resampled_from"] == 24_000.0
