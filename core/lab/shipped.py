"""The studies shipped with the app in results/: which files they are, the title each is shown under, and
reading them as any reopened file is read (core.lab.reopen), so a shipped file gets no trust a visitor's lacks.

The page caches what `read_shipped_studies` returns for the life of the server; the tests read the same list.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from core.lab.reopen import open_saved
from core.lab.study.curve import load_curve
from core.lab.study.map import map_points, map_sentence

# file name in results/ -> the title the page shows the study under, in the order the page lists them
SHIPPED_STUDIES: Mapping[str, str] = MappingProxyType(
    {
        "study_order_control.json": "Positive control: the class lives only in where each patch sits",
        "study_cwru_0hp_time-cv.json.gz": "CWRU bearings at 0 HP, each recording cut in time (5 folds, 3 repeats)",
        "study_spectraquest_load-out.json": "Second rig: SpectraQuest gearbox, tested at a load never trained on",
        "study_cwru_load-out.json.gz": "CWRU, tested at a motor load the models never saw",
        "study_cwru_fault-size.json": "CWRU, tested on a fault size the models never saw",
    }
)
# the studies the Fault lab's short answer leads with, in its order (one per rig, then the positive control), and
# where each asked the question, in the few words its plain sentence opens with
ANSWER_TOPICS: Mapping[str, str] = MappingProxyType(
    {
        "study_cwru_0hp_time-cv.json.gz": "On real bearings (CWRU, each recording cut in time)",
        "study_spectraquest_load-out.json": "On a gearbox (SpectraQuest, tested at a load never trained on)",
        "study_order_control.json": "Where only the patches' order tells the classes apart (the positive control)",
    }
)
# each shipped study's heading on the page, short enough for one line on a phone
STUDY_HEADINGS: Mapping[str, str] = MappingProxyType(
    {
        "study_order_control.json": "Positive control",
        "study_cwru_0hp_time-cv.json.gz": "CWRU bearings, cut in time",
        "study_spectraquest_load-out.json": "SpectraQuest gearbox, a load held out",
        "study_cwru_load-out.json.gz": "CWRU bearings, a load held out",
        "study_cwru_fault-size.json": "CWRU bearings, a fault size held out",
    }
)


# protocol 3's real tasks (results/study_protocol.md), in the order the map lists them, and the order-dose curve
MAP_STUDIES = (
    "study_cwru_0hp_time-cv_v3.json.gz",
    "study_cwru_load-shift_v3.json.gz",
    "study_spectraquest_a4_load-shift_v3.json.gz",
    "study_cwru_load-out_v3.json.gz",
    "study_spectraquest_load-out_v3.json.gz",
)
ORDER_CURVE = "study_order_curve.json.gz"


def results_dir() -> Path:
    """The repository's results/ folder, where the shipped studies and their protocol live."""
    return Path(__file__).resolve().parents[2] / "results"


def read_shipped_studies(folder: Path | None = None) -> dict[str, dict[str, Any]]:
    """The shipped studies by title, in SHIPPED_STUDIES' order, each read and checked by core.lab.reopen; a file
    that is missing or refused is left out (the page then shows the others, and a test names the gap)."""
    folder = results_dir() if folder is None else folder
    studies = {}
    for name, title in SHIPPED_STUDIES.items():
        try:
            kind, content = open_saved((folder / name).read_bytes())
        except (OSError, ValueError):
            continue
        if kind == "study":
            studies[title] = content
    return studies


def read_map(folder: Path | None = None) -> tuple[list[dict[str, Any]], str, list[str]]:
    """The map of the shipped version-3 studies (core.lab.study.map): its points, its sentence, and the files of
    MAP_STUDIES and ORDER_CURVE that are missing or refused (the map then shows what is there)."""
    folder = results_dir() if folder is None else folder
    studies, missing = [], []
    for name in MAP_STUDIES:
        try:
            kind, content = open_saved((folder / name).read_bytes())
        except (OSError, ValueError):
            kind, content = None, None
        if kind == "study":
            studies.append(content)
        else:
            missing.append(name)
    try:
        curve = load_curve(folder / ORDER_CURVE)
    except (OSError, ValueError):
        curve = None
        missing.append(ORDER_CURVE)
    points = map_points(studies, curve)
    return points, map_sentence(points), missing
