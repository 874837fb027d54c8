"""A study's checkpoint: each finished run appended to a JSON-lines file as it ends, so a study stopped half-way
(a crash, a lost machine, Ctrl-C) resumes with the same command and retrains only the cells it lacks.

    line 1      {"checkpoint": "study", "identity": {...}}: what the study trains (design, folds, repeats,
                seeds, models, window, stride, train, data, tune_lr); a file of another study is refused
    then        {"kind": "run" | "tuning" | "trial run", "key": [repeat, fold, seed, model(, rate)], "record":
                {...}, "profile": {...} or null}, one per finished run, in the order they finished; a trial
                writes "trial run" (its full record) before "tuning" (what choosing the rate reads)

A run's record is the study's own (core.lab.study.contract.study_run / tuning_run), the probe profile of the
first seed's first fold with it, so a resumed study is the same JSON as an uninterrupted one (its runs'
train_seconds aside). A last line cut short by a crash is ignored. Appends are serialised by a lock: runs side
by side finish on several threads.

`carry_to_cap` starts the checkpoint of the same study with a higher epoch cap from an earlier one (protocol 3's
amendment 1): the trials and the runs that stopped before the old cap are carried, the rest are trained again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.lab.contract import to_plain

HEADER = "study"
TRIAL_RUN = "trial run"  # a learning-rate trial's full record, kept for the study's run it is (study.final_runs)


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


def carry_to_cap(old: str | Path, new: str | Path, identity: Mapping[str, Any], leave_out: int = 1) -> dict[str, Any]:
    """Start the checkpoint `new`, of a study whose runs' epoch cap was raised, from `old`'s finished runs: every
    learning-rate trial (the study keeps its trials' cap, `tune_epochs`), and every run that stopped before the old
    cap, which is the same run under a higher one (the stopping rule has read only epochs before it stopped; the
    schedule must be constant, so no epoch's rate depends on the cap). Runs that reached the old cap are not carried:
    the study retrains them. The first `leave_out` early-stopped Transformer runs are not carried either, so the
    study retrains them as a check that training repeats exactly on this machine (`same_runs`). Returns {"carried",
    "retrain", "check"}: counts, and the check runs' keys."""
    old_path, new_path = Path(old), Path(new)
    lines = old_path.read_text(encoding="utf-8").splitlines()
    before = json.loads(lines[0])["identity"]
    after = json.loads(json.dumps(to_plain(dict(identity))))
    cap = before["train"]["epochs"]
    same_but_cap = {**after, "train": {**after["train"], "epochs": cap}}
    same_but_cap.pop("tune_epochs", None)
    if same_but_cap != before or after["train"]["epochs"] <= cap or after.get("tune_epochs") != cap:
        raise ValueError(f"{new_path} must be {old_path}'s study with a higher epoch cap and tune_epochs {cap}")
    if after["train"]["lr_schedule"] != "constant":
        raise ValueError("only a constant learning-rate schedule leaves a stopped run unchanged by a higher cap")
    if new_path.exists() and new_path.stat().st_size:
        raise ValueError(f"{new_path} exists; carry into a new file")
    carried, retrain, check = 0, 0, []
    with new_path.open("w", encoding="utf-8") as file:
        file.write(json.dumps({"checkpoint": HEADER, "identity": after}, separators=(",", ":")) + "\n")
        for line in lines[1:]:
            entry = json.loads(line)
            if entry["kind"] == TRIAL_RUN:  # a trial is not the study's run under another cap: not carried
                continue
            record = entry["record"]
            stopped = entry["kind"] == "tuning" or record["epochs"] < cap
            if stopped and entry["kind"] == "run" and record["epochs"] > 0 and len(check) < leave_out:
                check.append(entry["key"])
                stopped = False
            if not stopped:
                retrain += 1
                continue
            carried += 1
            file.write(json.dumps(entry, separators=(",", ":"), allow_nan=False) + "\n")
    return {"carried": carried, "retrain": retrain, "check": check}


def same_runs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two records of one run agree in everything but their wall time (train_seconds)."""
    return {k: v for k, v in old.items() if k != "train_seconds"} == {
        k: v for k, v in new.items() if k != "train_seconds"
    }
