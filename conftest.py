"""Puts the repository root on sys.path so tests and AppTest scripts import `core` and `ui` alike."""

import os
from pathlib import Path

# The app reads server folders only under its data roots (core.lab.data_roots): the tests' real data sit in the
# shared folder beside the repository.
os.environ.setdefault("PE_LAB_DATA_DIR", str(Path(__file__).resolve().parent.parent / "shared" / "data"))
