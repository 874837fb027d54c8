"""A study's checkpoint: each finished run appended to a JSON-lines file as it ends, so a study stopped half-way
(a crash, a lost machine, Ctrl-C) resumes with the same command and retrains only the cells it lacks.

    line 1      {"checkpoint": "study", "identity": {...}}: what the study trains (design, folds, repeats,
                seeds, models, window, stride, train, data, tune_lr); a file of another study is refused
    then        {"kind": "run" | "tuning", "key": [repeat, fold, seed, model(, rate)], "record": {...},
                "profile": {...} or null}, one per finished run, in the order they finished

A run's record is the study's own (core.lab.study.contract.study_run / tuning_run), the probe profile of the
first seed's first fold with it, so a resumed study is the same JSON as an uninterrupted one (its runs'
train_seconds aside). A last line cut short by a crash is ignored. Appends are serialised by a lock: runs side
by side finish on several threads.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.lab.contract import to_plain

HEADER = "study"


class Checkpoint:
    """The finished runs of one study, read from `path` when it exists and appended to it as runs finish."""

    def __init__(self, path: str | Path, identity: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.identity = json.loads(json.dumps(to_plain(dict(identity))))
        self._lock = threading.Lock()
        self._done: dict[tuple[str, tuple], dict[str, Any]] = {}
        if self.path.exists() and self.path.stat().st_size:
            self._read()
        else:
            self._append({"checkpoint": HEADER, "identity": self.identity})

    def _read(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0])
        except (json.JSONDecodeError, IndexError):
            header = None
        if not isinstance(header, dict) or header.get("checkpoint") != HEADER:
            raise ValueError(f"{self.path} is not a study checkpoint; name another file for --checkpoint")
        if header.get("identity") != self.identity:
            differs = sorted(k for k in self.identity if header.get("identity", {}).get(k) != self.identity[k])
            raise ValueError(
                f"{self.path} is the checkpoint of another study (its {', '.join(differs) or 'settings'} differ); "
                f"remove it or name another file for --checkpoint"
            )
        for number, line in enumerate(lines[1:], start=2):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):  # the last line, cut short when the study stopped: retrained
                    break
                raise ValueError(
                    f"{self.path} line {number} is damaged; remove the checkpoint to start again"
                ) from None
            self._done[(entry["kind"], tuple(entry["key"]))] = entry

    def _append(self, entry: Mapping[str, Any]) -> None:
        text = json.dumps(to_plain(dict(entry)), separators=(",", ":"), allow_nan=False)
        with self.path.open("a", encoding="utf-8") as file:
            file.write(text + "\n")

    def get(self, kind: str, key: tuple) -> dict[str, Any] | None:
        """The stored entry {"record", "profile"} of a finished run of this kind and key, or None."""
        return self._done.get((kind, tuple(key)))

    def put(self, kind: str, key: tuple, record: Mapping[str, Any], profile: Mapping[str, Any] | None = None) -> None:
        """Append one finished run (thread-safe)."""
        entry = {"kind": kind, "key": list(key), "record": record, "profile": profile}
        with self._lock:
            self._append(entry)
            self._done[(kind, tuple(key))] = json.loads(json.dumps(to_plain(entry)))

    def __len__(self) -> int:
        return len(self._done)
