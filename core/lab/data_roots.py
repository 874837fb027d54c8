"""Which server folders the Fault lab may read: only folders under its data roots.

A visitor of a shared link types folder names into the page; without a fence they could make the server read
any folder it can see, probe which folders exist, or (through "download to") write where they like. So the
page confines every folder to the data roots:

- `PE_LAB_DATA_DIR`: one or more folders, separated by os.pathsep (":" on Linux), set by whoever runs the
  server (a local user points it at their own data this way);
- the download cache (`DOWNLOAD_CACHE`), where downloads go and nowhere else;
- when PE_LAB_DATA_DIR is unset, also `data/` beside app.py (ignored by git).

A folder outside the roots, typed, reached through "..", or through a symbolic link out of a root, is refused
with the same message whether or not it exists, before anything is read. So is a typed path that cannot name
a folder at all (an account's home as "~name", control characters, one over core.limits.MAX_PATH_CHARS, or one
the system cannot resolve): those are refused by their text alone, without touching the disk, and the answer
never depends on whether an account or a folder exists. The CLI, run by the user in their own shell, is not
confined.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from core.lab.vibration.types import DataError
from core.limits import MAX_PATH_CHARS

ENVIRONMENT_VARIABLE = "PE_LAB_DATA_DIR"
# Any C0 control character or DEL: a folder name typed into a page never holds one, and NUL cannot reach the
# system at all (Python raises instead of resolving).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
DOWNLOAD_CACHE = Path.home() / ".cache" / "pe-lab"
LOCAL_DATA = Path(__file__).resolve().parents[2] / "data"


class FolderRefused(DataError):
    """A folder outside the data roots was asked for."""


def data_roots() -> list[Path]:
    """The folders the page may read under, resolved (symbolic links followed), in the order given."""
    configured = os.environ.get(ENVIRONMENT_VARIABLE, "")
    roots = [Path(part).expanduser() for part in configured.split(os.pathsep) if part.strip()]
    if not roots:
        roots = [LOCAL_DATA]
    return [root.resolve() for root in [*roots, DOWNLOAD_CACHE]]


def confine(folder: str | os.PathLike[str]) -> Path:
    """`folder` resolved, if it lies under a data root (a relative folder is taken under the first root);
    FolderRefused otherwise, with one message that does not say whether the folder exists."""
    roots = data_roots()
    text = str(folder).strip()
    # "~name" is never expanded: expanduser would look the account up (and fail differently for a missing
    # one), telling a visitor which accounts the server has.
    if text and not text.startswith("~") and len(text) <= MAX_PATH_CHARS and not _CONTROL.search(text):
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = roots[0] / candidate
        try:
            resolved = candidate.resolve()  # follows symbolic links and "..", so neither leads out of a root
        except (OSError, RuntimeError, ValueError):  # a symbolic-link loop, a name the system refuses
            resolved = None
        if resolved is not None and any(resolved == root or root in resolved.parents for root in roots):
            return resolved
    raise FolderRefused(
        f"This server reads data only from its data folders ({', '.join(str(root) for root in roots)}). "
        f"Choose a folder inside one of them; to use another folder, start the app with {ENVIRONMENT_VARIABLE} "
        f"set to it (several folders separated by '{os.pathsep}')."
    )
