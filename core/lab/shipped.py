"""The studies shipped with the app in results/: which files they are, the title each is shown under, and
reading them as any reopened file is read (core.lab.reopen), so a shipped file gets no trust a visitor's lacks.

The page caches what `read_shipped_studies` returns for the life of the server; the tests read the same list.
Two generations are shipped: protocol 3's studies (CURRENT_STUDIES, the map's real tasks and the current
reading) and protocol 2's (SHIPPED_STUDIES, which its script reruns); the page lists both (PAGE_STUDIES).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from core.lab.reopen import open_saved
from core.lab.study.curve import load_curve
from core.lab.study.map import map_points, map_sentence

# file name in results/ -> the title the page shows the study under, in the order the page lists them: protocol
# 3's studies (the current reading, the map's real tasks), then protocol 2's five, which stay shipped and shown
CURRENT_STUDIES: Mapping[str, str] = MappingProxyType(
    {
        "study_cwru_0hp_time-cv_v3.json.gz": "CWRU bearings at 0 HP, each recording cut in time (version 3)",
        "study_cwru_load-shift_v3.json.gz": "CWRU, trained at 0 HP, tested at 1, 2 and 3 HP (version 3)",
        "study_spectraquest_a4_load-shift_v3.json.gz": "SpectraQuest a4, trained at 0-20 %, tested at 30-90 % "
        "(version 3)",
        "study_cwru_load-out_v3.json.gz": "CWRU, tested at a motor load the models never saw (version 3)",
        "study_spectraquest_load-out_v3.json.gz": "SpectraQuest a2, tested at a load never trained on (version 3)",
    }
)
SHIPPED_STUDIES: Mapping[str, str] = MappingProxyType(
    {
        "study_order_control.json": "Positive control: the class lives only in where each patch sits",
        "study_cwru_0hp_time-cv.json.gz": "CWRU bearings at 0 HP, each recording cut in time (5 folds, 3 repeats)",
        "study_spectraquest_load-out.json": "Second rig: SpectraQuest gearbox, tested at a load never trained on",
        "study_cwru_load-out.json.gz": "CWRU, tested at a motor load the models never saw",
        "study_cwru_fault-size.json": "CWRU, tested on a fault size the models never saw",
    }
)
# the studies the Fault lab's short answer leads with, in its order (the two rigs where order has no room, then
# the task where it has), and where each asked the question, in the few words its plain sentence opens with
ANSWER_TOPICS: Mapping[str, str] = MappingProxyType(
    {
        "study_cwru_0hp_time-cv_v3.json.gz": "On real bearings (CWRU, each recording cut in time)",
        "study_spectraquest_load-out_v3.json.gz": "On a gearbox (SpectraQuest, tested at a load never trained on)",
        "study_spectraquest_a4_load-shift_v3.json.gz": "Where order has room (SpectraQuest a4, tested at heavier "
        "loads than it trained on)",
    }
)
# each shipped study's heading on the page, short enough for one line on a phone
STUDY_HEADINGS: Mapping[str, str] = MappingProxyType(
    {
        "study_cwru_0hp_time-cv_v3.json.gz": "CWRU bearings, cut in time",
        "study_cwru_load-shift_v3.json.gz": "CWRU bearings, a new load",
        "study_spectraquest_a4_load-shift_v3.json.gz": "SpectraQuest gearbox, heavier loads",
        "study_cwru_load-out_v3.json.gz": "CWRU bearings, a load held out",
        "study_spectraquest_load-out_v3.json.gz": "SpectraQuest gearbox, a load held out",
        "study_order_control.json": "Positive control (version 2)",
        "study_cwru_0hp_time-cv.json.gz": "CWRU bearings, cut in time (version 2)",
        "study_spectraquest_load-out.json": "SpectraQuest gearbox, a load held out (version 2)",
        "study_cwru_load-out.json.gz": "CWRU bearings, a load held out (version 2)",
        "study_cwru_fault-size.json": "CWRU bearings, a fault size held out (version 2)",
    }
)
PAGE_STUDIES: Mapping[str, str] = MappingProxyType({**CURRENT_STUDIES, **SHIPPED_STUDIES})  # what the page lists


# protocol 3's real tasks (results/study_protocol.md), in the order the map lists them, and the order-dose curve
MAP_STUDIES = tuple(CURRENT_STUDIES)
ORDER_CURVE = "study_order_curve.json.gz"


def results_dir() -> Path:
    """The repository's results/ folder, where the shipped studies and their protocol live."""
    return Path(__file__).resolve().parents[2] / "results"


def read_shipped_studies(folder: Path | None = None, files: Mapping[str, str] = SHIPPED_STUDIES) -> dict[str, dict]:
    """The shipped studies of `files` (file name -> title) by title, in its order, each read and checked by
    core.lab.reopen; a file that is missing or refused is left out (the page then shows the others, and a test
    names the gap)."""
    folder = results_dir() if folder is None else folder
    studies = {}
    for name, title in files.items():
        try:
            kind, content = open_saved((folder / name).read_bytes())
        except (OSError, ValueError):
            continue
        if kind == "study":
            studies[title] = content
    return studies


def read_map(
    folder: Path | None = None, read: Mapping[str, dict[str, Any]] | None = None
) -> tuple[list[dict[str, Any]], str, list[str]]:
    """The map of the shipped version-3 studies (core.lab.study.map): its points, its sentence, and the files of
    MAP_STUDIES and ORDER_CURVE that are missing or refused (the map then shows what is there). `read` holds
    studies already read, by file name (the page's, so no file is read twice); the others are read here."""
    folder = results_dir() if folder is None else folder
    studies, missing = [], []
    for name in MAP_STUDIES:
        if read is not None and name in read:
            kind, content = "study", read[name]
        else:
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
