"""The rooms of the lab: one list that both the navigation (app.py) and the home page's links read.

Page file names are a public contract (links and checks use them). A room whose script is missing is an
error, not a room to hide: the app would otherwise start without a page and every test of it would pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Room:
    """One page of the app: its script, its title and icon in the navigation, its section, one line about it."""

    path: str
    title: str
    icon: str
    section: str
    blurb: str


ROOMS = (
    Room(
        path="pages/walkthrough.py",
        title="One sentence through attention",
        icon=":material/route:",
        section="Story",
        blurb="follow a sentence step by step through one attention layer, then shuffle its words",
    ),
    Room(
        path="pages/encoding_matrix.py",
        title="Encoding matrix",
        icon=":material/grid_on:",
        section="Positional encoding",
        blurb="the sinusoidal matrix, its waves, and the naive schemes it replaced",
    ),
    Room(
        path="pages/wavelengths.py",
        title="Wavelengths",
        icon=":material/waves:",
        section="Positional encoding",
        blurb="from 2π to almost base·2π, and the binary counter it smooths",
    ),
    Room(
        path="pages/similarity.py",
        title="Similarity vs offset",
        icon=":material/compare_arrows:",
        section="Positional encoding",
        blurb="PE(t)·PE(t+k) depends on k alone, and PE(t+k) is a rotation of PE(t)",
    ),
    Room(
        path="pages/softmax_saturation.py",
        title="Softmax saturation",
        icon=":material/speed:",
        section="Attention",
        blurb="why attention divides q·k by √d_k",
    ),
    Room(
        path="pages/fault_lab.py",
        title="Fault lab",
        icon=":material/science:",
        section="Vibration",
        blurb="does positional encoding help a bearing-fault classifier? Measure it",
    ),
)


def built_rooms() -> list[Room]:
    """Every room, in story order; FileNotFoundError naming the first page script that is missing."""
    for room in ROOMS:
        if not (ROOT / room.path).is_file():
            raise FileNotFoundError(f"the page script {room.path} ({room.title}) is missing")
    return list(ROOMS)


def next_room(path: str) -> Room | None:
    """The room after the page at `path` in story order (the home page leads to the first), None after the last."""
    paths = ["pages/home.py", *(room.path for room in ROOMS)]
    index = paths.index(path)
    return ROOMS[index] if index < len(ROOMS) else None
