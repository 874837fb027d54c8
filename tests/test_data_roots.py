"""Server folders are confined to the data roots: typed paths, '..' and symbolic links out of a root are all
refused with one message that does not reveal whether the folder exists."""

import os

import pytest

from core.lab import data_roots
from core.lab.data_roots import FolderRefused, confine


@pytest.fixture
def roots(tmp_path, monkeypatch):
    inside, other = tmp_path / "data", tmp_path / "elsewhere"
    (inside / "cwru").mkdir(parents=True)
    other.mkdir()
    monkeypatch.setenv("PE_LAB_DATA_DIR", f"{inside}{os.pathsep}{tmp_path / 'second'}")
    monkeypatch.setattr(data_roots, "DOWNLOAD_CACHE", tmp_path / "cache")
    return inside, other


def test_folders_inside_a_root_are_accepted(roots):
    inside, _ = roots
    assert confine(inside / "cwru") == (inside / "cwru").resolve()
    assert confine("cwru") == (inside / "cwru").resolve()  # relative: under the first root
    assert confine(inside / "not yet there") == (inside / "not yet there").resolve()
    assert data_roots.data_roots()[-1] == (inside.parent / "cache").resolve()


@pytest.mark.parametrize("how", ["absolute", "dot-dot", "symlink", "missing", "empty", "root of the disk"])
def test_folders_outside_every_root_are_refused_alike(roots, how):
    inside, other = roots
    (inside / "link").symlink_to(other)
    folder = {
        "absolute": str(other),
        "dot-dot": str(inside / ".." / "elsewhere"),
        "symlink": str(inside / "link"),
        "missing": str(other / "no such folder"),
        "empty": "  ",
        "root of the disk": "/",
    }[how]
    with pytest.raises(FolderRefused) as refused:
        confine(folder)
    with pytest.raises(FolderRefused) as existing:
        confine(other)  # a folder that exists
    assert str(refused.value) == str(existing.value)  # the same words: nothing tells whether it exists
    assert "PE_LAB_DATA_DIR" in str(refused.value) and str(other) not in str(refused.value)


def test_without_the_variable_the_roots_are_the_local_data_folder_and_the_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("PE_LAB_DATA_DIR", raising=False)
    monkeypatch.setattr(data_roots, "DOWNLOAD_CACHE", tmp_path / "cache")
    assert data_roots.data_roots() == [data_roots.LOCAL_DATA.resolve(), (tmp_path / "cache").resolve()]
