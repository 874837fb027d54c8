"""The SpectraQuest gearbox files: both classes at every load, the stated row counts, the README's difficulty on
channel a2, and a data source that reads only from the data roots on the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core.lab.data_roots import FolderRefused, confine
from core.lab.data_spec import DataSpec
from core.lab.experiment.cli import build_parser
from core.lab.vibration import DataError, load_spectraquest
from core.lab.vibration.spectraquest import SAMPLE_RATE_ASSUMED

FOLDER = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "spectraquest"
needs_files = pytest.mark.skipif(
    not FOLDER.is_dir(), reason=f"SpectraQuest data not found at {FOLDER} (see shared/data/README.md, section 3)"
)


@pytest.fixture(scope="module")
def a2():
    return load_spectraquest(FOLDER)


@needs_files
def test_both_classes_load_at_every_load_with_the_stated_row_counts(a2):
    assert [(r.label, r.meta["load_hp"]) for r in a2] == [
        (label, load) for load in range(0, 100, 10) for label in ("healthy", "broken_tooth")
    ]
    sizes = [r.signal.size for r in a2]
    assert min(sizes) == 88_320 and max(sizes) == 114_432  # as shared/data/README.md states
    assert a2[0].meta["file"] == "h30hz0.csv.gz" and a2[1].meta["file"] == "b30hz0.csv.gz"
    assert {r.meta["channel"] for r in a2} == {"a2"} and {r.sample_rate for r in a2} == {SAMPLE_RATE_ASSUMED}
    assert all(np.isfinite(r.signal).all() for r in a2)


def _window_features(signal, window=1024):
    n = signal.size // window
    w = signal[: n * window].reshape(n, window)
    rms = np.sqrt(np.mean(w**2, axis=1))
    return np.c_[rms, scipy.stats.kurtosis(w, axis=1, fisher=False), np.abs(w).max(axis=1) / rms]


@needs_files
def test_a_three_feature_logistic_regression_scores_the_readmes_0_68_on_a2_leaving_one_load_out(a2):
    features = [_window_features(r.signal) for r in a2]
    x = np.vstack(features)
    y = np.concatenate([np.full(len(f), r.label == "broken_tooth") for f, r in zip(features, a2)])
    load = np.concatenate([np.full(len(f), r.meta["load_hp"]) for f, r in zip(features, a2)])
    scores = []
    for held_out in range(0, 100, 10):
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
        model.fit(x[load != held_out], y[load != held_out])
        scores.append(model.score(x[load == held_out], y[load == held_out]))
    assert np.mean(scores) == pytest.approx(0.68, abs=0.03)  # measured here: 0.682


@needs_files
def test_the_data_source_reads_all_ten_loads_by_default_and_round_trips_through_the_command_line():
    spec = DataSpec("spectraquest", folder=str(FOLDER))
    assert spec.loads == tuple(range(0, 100, 10)) and spec.channel == "a2"
    assert DataSpec.from_dict(spec.to_dict()) == spec
    assert DataSpec.from_args(build_parser().parse_args(spec.argv())) == spec
    one = DataSpec("spectraquest", loads=(30,), channel="a1", sample_rate_override=20_000.0)
    assert DataSpec.from_args(build_parser().parse_args(one.argv())) == one
    recordings = one.load()
    assert [r.meta["file"] for r in recordings] == ["h30hz30.csv.gz", "b30hz30.csv.gz"]
    assert recordings[0].sample_rate == 20_000.0 and recordings[0].meta["channel"] == "a1"
    assert "channel a1 at loads 30 %" in one.describe(2)


def test_a_bad_channel_a_bad_load_and_a_missing_file_say_what_is_wrong(tmp_path):
    with pytest.raises(DataError, match="channel must be one of a1, a2, a3, a4"):
        load_spectraquest(tmp_path, channel="a5")
    with pytest.raises(DataError, match="loads are 0, 10"):
        load_spectraquest(tmp_path, loads=(5,))
    with pytest.raises(DataError, match="missing from .*h30hz0.csv.gz, b30hz0.csv.gz"):
        load_spectraquest(tmp_path, loads=(0,))


def test_a_file_is_read_with_gzip_and_only_the_chosen_column_kept(tmp_path):
    import gzip

    rows = "a1,a2,a3,a4\n" + "".join(f"{i},{-i},{2 * i},0\n" for i in range(5))
    for kind in ("h", "b"):
        (tmp_path / f"{kind}30hz40.csv.gz").write_bytes(gzip.compress(rows.encode()))
    healthy, broken = load_spectraquest(tmp_path, channel="a3", loads=(40,))
    assert healthy.label == "healthy" and broken.label == "broken_tooth" and healthy.meta["load_hp"] == 40
    assert np.array_equal(healthy.signal, [0, 2, 4, 6, 8])


def test_the_page_refuses_a_spectraquest_folder_outside_the_data_roots(tmp_path, monkeypatch):
    monkeypatch.setenv("PE_LAB_DATA_DIR", str(tmp_path / "roots"))
    (tmp_path / "roots" / "spectraquest").mkdir(parents=True)
    assert confine("spectraquest") == (tmp_path / "roots" / "spectraquest").resolve()
    with pytest.raises(FolderRefused):
        confine(str(FOLDER))
    from ui.lab.data import spectraquest_spec

    with pytest.raises(FolderRefused):
        spectraquest_spec(str(tmp_path / "elsewhere"), "a2", (0,))
    assert spectraquest_spec("spectraquest", "a2", (0,)).folder == str((tmp_path / "roots" / "spectraquest").resolve())


def test_the_fault_lab_refuses_a_spectraquest_folder_outside_its_data_roots_in_one_line(tmp_path, monkeypatch):
    from tests.apptest_utils import errors, open_lab

    monkeypatch.setenv("PE_LAB_DATA_DIR", str(tmp_path))
    at = open_lab({"dataset": "spectraquest"})
    at.text_input(key="sq_dir").set_value("/etc").run()
    at.button(key="load_spectraquest").click().run()
    assert not at.exception
    assert any("reads data only from its data folders" in e for e in errors(at))
