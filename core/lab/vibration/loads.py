"""Recordings by motor load: which loads the data holds, and which classes were recorded at every load asked
for (the cross-load evaluation and the study's load-out design both train at some loads and test at others)."""

from __future__ import annotations

from collections.abc import Sequence

from core.lab.vibration.types import DataError, Recording


def loads_of(recordings: Sequence[Recording]) -> dict[int, list[Recording]]:
    """Recordings by motor load (meta["load_hp"]); a recording without a load is a DataError."""
    by_load: dict[int, list[Recording]] = {}
    for recording in recordings:
        load = recording.meta.get("load_hp")
        if load is None:
            where = recording.meta.get("file") or recording.label
            raise DataError(
                f"Cross-load needs the motor load of every recording, and {where} has none (meta 'load_hp'). "
                f"Use CWRU or the synthetic set, or run without train and test loads."
            )
        by_load.setdefault(int(load), []).append(recording)
    return by_load


def common_classes(
    recordings: Sequence[Recording], train_loads: Sequence[int], test_loads: Sequence[int]
) -> tuple[list[str], list[str]]:
    """(classes recorded at every train and test load, in recording order; classes left out)."""
    by_load = loads_of(recordings)
    wanted = list(dict.fromkeys([*train_loads, *test_loads]))
    absent = [load for load in wanted if load not in by_load]
    if absent:
        raise DataError(
            f"No recordings at load(s) {absent} HP; the data holds loads {sorted(by_load)}. Load those loads "
            f"too, or choose train and test loads among them."
        )
    all_labels = list(dict.fromkeys(recording.label for recording in recordings))
    at_every_load = set.intersection(*({r.label for r in by_load[load]} for load in wanted))
    kept = [label for label in all_labels if label in at_every_load]
    dropped = [label for label in all_labels if label not in at_every_load]
    if len(kept) < 2:
        raise DataError(
            f"Only {len(kept)} class(es) ({', '.join(kept) or 'none'}) are recorded at every load of "
            f"{wanted} HP; a classifier needs two. Choose loads that share more classes."
        )
    return kept, dropped
