"""The SEU bearing-set loader, on small files written in the published layout: 16 GB18030 header lines of
Chinese text, 8 channels, tab-separated except ball_20_0.csv (comma), a trailing separator on each row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.lab.vibration import DataError, load_seu, make_windows
from core.lab.vibration.seu import DEFAULT_SAMPLE_RATE, HEADER_LINES, SEU_CLASS_NAMES

N_ROWS = 3_000
# Header text in the style of the published files (instrument export, Chinese labels), with separators
# and a stray quote in it, which the loader must skip without parsing.
HEADER = [
    "数据采集系统导出文件",
    "通道数\t8",
    "采样频率, 未注明",
    "测试名称\t行星齿轮箱轴承故障",
    '备注: "东南大学',
] + [f"第{i}行\t说明\t" for i in range(6, HEADER_LINES + 1)]


def channel_value(label: str, channel: int, row: np.ndarray) -> np.ndarray:
    """A value that tells class, channel and row apart, so a wrong column or offset cannot pass."""
    return SEU_CLASS_NAMES.index(label) * 100.0 + channel + np.sin(0.05 * row * channel) * 0.5


def write_seu_file(path: Path, label: str, separator: str, line_end: str = "\r\n") -> None:
    rows = np.arange(N_ROWS)
    columns = [channel_value(label, channel, rows) for channel in range(1, 9)]
    lines = list(HEADER)
    for i in rows:
        lines.append(separator.join(f"{column[i]:.6f}" for column in columns) + separator)  # trailing separator
    path.write_bytes((line_end.join(lines) + line_end).encode("gb18030"))


@pytest.fixture(scope="module")
def seu_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gearbox") / "bearingset"
    folder.mkdir()
    for condition in ("20_0", "30_2"):
        for label in SEU_CLASS_NAMES:
            separator = "," if (label, condition) == ("ball", "20_0") else "\t"
            write_seu_file(folder / f"{label}_{condition}.csv", label, separator, "\r\n" if label != "inner" else "\n")
    return folder


def test_the_five_classes_load_from_the_requested_channel(seu_dir):
    recordings = load_seu(seu_dir)

    assert [recording.label for recording in recordings] == ["health", "ball", "inner", "outer", "comb"]
    for recording in recordings:
        assert recording.signal.size == N_ROWS
        np.testing.assert_allclose(recording.signal, channel_value(recording.label, 2, np.arange(N_ROWS)), atol=5e-7)
        assert recording.sample_rate == DEFAULT_SAMPLE_RATE
        assert recording.meta["channel_name"] == "planetary gearbox x"
        assert recording.meta["sample_rate_published"] is False


def test_ball_20_0_is_comma_separated_and_the_others_tab(seu_dir):
    separators = {recording.label: recording.meta["separator"] for recording in load_seu(seu_dir, "20_0")}

    assert separators == {"health": "tab", "ball": "comma", "inner": "tab", "outer": "tab", "comb": "tab"}


def test_another_condition_channel_and_rate(seu_dir):
    recordings = load_seu(seu_dir, condition="30_2", channel=6, sample_rate=2_000)

    ball = recordings[SEU_CLASS_NAMES.index("ball")]
    assert ball.meta["file"] == "ball_30_2.csv" and ball.meta["separator"] == "tab"
    assert (ball.meta["speed_hz"], ball.meta["load_v"]) == (30, 2)
    np.testing.assert_allclose(ball.signal, channel_value("ball", 6, np.arange(N_ROWS)), atol=5e-7)
    assert all(recording.sample_rate == 2_000.0 for recording in recordings)


def test_the_folder_may_be_the_bearingset_folder_or_the_one_above(seu_dir):
    assert [recording.signal.size for recording in load_seu(seu_dir.parent)] == [N_ROWS] * 5


def test_the_folder_may_be_the_one_above_gearbox(tmp_path, seu_dir):
    (tmp_path / "gearbox").symlink_to(seu_dir.parent, target_is_directory=True)

    assert [recording.label for recording in load_seu(tmp_path)] == list(SEU_CLASS_NAMES)


def test_the_recordings_window_like_any_other_source(seu_dir):
    windows = make_windows(load_seu(seu_dir), window=128)

    assert windows.class_names == list(SEU_CLASS_NAMES)
    assert windows.sample_rate == DEFAULT_SAMPLE_RATE
    assert all(count >= 1 for split in windows.counts.values() for count in split.values())


def test_missing_folder_says_where_to_get_the_data(tmp_path):
    with pytest.raises(DataError, match="does not exist.*cathysiyu/Mechanical-datasets"):
        load_seu(tmp_path / "nowhere")


def test_missing_file_is_named(tmp_path):
    for label in SEU_CLASS_NAMES[:-1]:
        write_seu_file(tmp_path / f"{label}_20_0.csv", label, "\t")

    with pytest.raises(DataError, match=r"missing from .*: comb_20_0\.csv\. Download"):
        load_seu(tmp_path)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"condition": "25_1"}, "condition must be one of 20_0, 30_2"),
        ({"channel": 9}, "channel must be 1-8"),
        ({"channel": 0}, "channel must be 1-8"),
        ({"sample_rate": 0}, "between 1 and 1e\\+07 Hz"),
        ({"sample_rate": "fast"}, "number of samples per second"),
    ],
)
def test_bad_arguments_are_data_errors(seu_dir, kwargs, words):
    with pytest.raises(DataError, match=words):
        load_seu(seu_dir, **kwargs)


def test_a_truncated_header_is_a_data_error(tmp_path, seu_dir):
    for label in SEU_CLASS_NAMES:
        (tmp_path / f"{label}_20_0.csv").write_bytes((seu_dir / f"{label}_20_0.csv").read_bytes())
    (tmp_path / "outer_20_0.csv").write_bytes("\r\n".join(HEADER[:5]).encode("gb18030"))

    with pytest.raises(DataError, match="outer_20_0.csv ends after 5 lines"):
        load_seu(tmp_path)


def test_text_in_the_data_is_a_data_error_naming_the_file(tmp_path, seu_dir):
    for label in SEU_CLASS_NAMES:
        (tmp_path / f"{label}_20_0.csv").write_bytes((seu_dir / f"{label}_20_0.csv").read_bytes())
    lines = (tmp_path / "inner_20_0.csv").read_bytes().split(b"\n")
    lines[HEADER_LINES + 10] = b"0.1\tabc\t0.3\t0.4\t0.5\t0.6\t0.7\t0.8\t"
    (tmp_path / "inner_20_0.csv").write_bytes(b"\n".join(lines))

    with pytest.raises(DataError, match="inner_20_0.csv channel 2 cannot be read as numbers"):
        load_seu(tmp_path)


def test_a_file_with_fewer_channels_is_a_data_error(tmp_path, seu_dir):
    for label in SEU_CLASS_NAMES:
        (tmp_path / f"{label}_20_0.csv").write_bytes((seu_dir / f"{label}_20_0.csv").read_bytes())
    (tmp_path / "health_20_0.csv").write_bytes(("\n".join(HEADER) + "\n0.1\t0.2\t\n0.3\t0.4\t\n").encode("gb18030"))

    with pytest.raises(DataError, match="health_20_0.csv has 2 channels per row; channel 3 was asked for"):
        load_seu(tmp_path, channel=3)
