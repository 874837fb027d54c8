"""Writes the pipeline's regression fixtures: the results JSON of a few fixed tiny plans, run through the CLI.

    python tests/data/make_fixtures.py            # (re)write tests/data/pipeline_*.json
    python tests/data/make_fixtures.py --check    # run the plans and compare with the stored files
    python tests/data/make_fixtures.py --check --migrated   # the same, for stored files of results schema 3:
                                                            # the values migrated to points compare to 1e-12

--check reads each stored file through the one migration (core.lab.study.migration.migrate): the fixtures stay at
results schema 4, so that a version-4 file is seen to open, and its comparisons are made again from its runs.

Each plan is a `python -m core.experiment` argument list on the built-in synthetic set (CPU, one torch
thread, fixed seeds), so the fixtures pin what the CLI and the Fault lab produce, not how the code is laid
out inside. `tests/test_fixtures.py` runs the same plans and requires the same JSON, bit for bit, except
the fields that measure time and `schema_version`. A change that moves numbers on purpose regenerates the
fixtures with this script, in a commit of its own that names the cause.

Floating-point results depend on the CPU and on torch's kernels, so each file records the machine's
fingerprint (core.fingerprint: torch, CPU flags and the bits of a fixed probe computation); on another
machine the bit-for-bit test skips and says what differs, and a tolerance check runs instead.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HERE = Path(__file__).resolve().parent
TINY = ["--duration", "1.0", "--window", "128", "--patch", "16", "--heads", "2", "--layers", "1", "--threads", "1"]
PLANS: dict[str, list[str]] = {
    # A and B with every evaluation on: windowing comparison, cross-load, noise and the d_model sweep
    "every_evaluation": [
        *TINY,
        *(
            "--loads 0,1 --models A,B --seeds 0,1 --epochs 2 --workers 1 --windowing time,random "
            "--train-loads 0,1 --test-loads 0,1 --snr=-4,0,8 --d-model-sweep 16,32"
        ).split(),
    ],
    # every other model, FFT tokens, two runs side by side
    "every_model_fft": [
        *TINY,
        *(
            "--models A,A+PE,B-noPE,B,B-learned,B-concat,CNN --seeds 3 --epochs 2 --tokens fft --workers 2 --d-model 32"
        ).split(),
    ],
    # the leaky random windowing, a cosine schedule, an overlapping stride and other shares, metric F1
    "random_split_cosine": [
        *TINY,
        *(
            "--models A,B --seeds 0,1 --epochs 3 --windowing random --lr-schedule cosine --stride "
            "96 --shares 0.6,0.2,0.2 --data-seed 2 --split-seed 5 --metric f1 --embed-scale "
            "--pe-scale 0.5 --workers 1"
        ).split(),
    ],
}
# Fields that measure time (or say which schema wrote the file), not what was computed.
TIMING_KEYS = frozenset({"train_seconds", "windows_per_second", "wall_seconds", "schema_version"})
# With --migrated: a paired difference the migration multiplied by 100 (fractions to points) may differ from the
# one computed in points by the last bit of its float, so these compare to 1e-12 relative; every other value exactly.
RESCALED_TOLERANCE = 1e-12


def environment() -> dict[str, str]:
    """What the numbers depend on besides the code: this machine's fingerprint (core.fingerprint)."""
    from core.fingerprint import machine_fingerprint

    return machine_fingerprint()


def fixture_path(name: str) -> Path:
    return HERE / f"pipeline_{name}.json"


def run_plan_argv(argv: list[str]) -> dict:
    """The results JSON the CLI writes for `argv`."""
    from core.lab.experiment.cli import main

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "results.json"
        with contextlib.redirect_stdout(io.StringIO()):  # the CLI prints its tables even when quiet
            code = main([*argv, "--quiet", "--out", str(out)])
        if code != 0:
            raise RuntimeError(f"the plan {argv} exited with status {code}")
        return json.loads(out.read_text(encoding="utf-8"))


def without_timing(value):
    """`value` with every timing field removed, at any depth."""
    if isinstance(value, dict):
        return {key: without_timing(item) for key, item in value.items() if key not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timing(item) for item in value]
    return value


def first_difference(
    expected,
    actual,
    where: str = "results",
    allow_new: bool = False,
    rescaled: frozenset[str] = frozenset(),
    float_tolerance: float = 0.0,
) -> str | None:
    """Where two JSON values first differ, in words, or None when they are equal. With `allow_new`, keys
    only `actual` has are passed over: a new setting at its old value must leave every stored value alone.
    Floats under a key of `rescaled` compare to RESCALED_TOLERANCE (relative); every other float to
    `float_tolerance` (relative, and absolute near zero; 0: exactly). Strings, integers, booleans, None and the
    structure always compare exactly."""
    if isinstance(expected, float) and isinstance(actual, float):  # numpy's float64 is a float too
        return _float_difference(expected, actual, where, rescaled, float_tolerance)
    if type(expected) is not type(actual):
        return f"{where}: {type(expected).__name__} {expected!r:.80} != {type(actual).__name__} {actual!r:.80}"
    if isinstance(expected, dict):
        if set(expected) != (set(actual) & set(expected) if allow_new else set(actual)):
            missing, new = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
            return f"{where}: keys differ: missing {missing}, new {new}"
        pairs = [(expected[key], actual[key], f"{where}.{key}") for key in expected]
    elif isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{where}: {len(expected)} items != {len(actual)}"
        pairs = [(one, other, f"{where}[{i}]") for i, (one, other) in enumerate(zip(expected, actual))]
    else:
        return None if expected == actual else f"{where}: {expected!r} != {actual!r}"
    found = (first_difference(one, other, at, allow_new, rescaled, float_tolerance) for one, other, at in pairs)
    return next((difference for difference in found if difference), None)


def _float_difference(
    expected: float, actual: float, where: str, rescaled: frozenset[str], float_tolerance: float
) -> str | None:
    key = where.rsplit(".", 1)[-1].split("[")[0]
    tolerance = RESCALED_TOLERANCE if key in rescaled else float_tolerance
    if expected == actual or math.isclose(expected, actual, rel_tol=tolerance, abs_tol=tolerance):
        return None
    return f"{where}: {expected!r} != {actual!r}" + (f" (beyond {tolerance:g} relative)" if tolerance else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored fixtures instead of writing")
    parser.add_argument("--plans", default=",".join(PLANS), help="comma-separated among " + ",".join(PLANS))
    parser.add_argument("--extra", default="", help="CLI words added to every plan, e.g. old settings made explicit")
    parser.add_argument(
        "--allow-new-keys", action="store_true", help="with --check: pass over keys the stored JSON lacks"
    )
    parser.add_argument(
        "--migrated",
        action="store_true",
        help="with --check: the stored JSON is of results schema 3 (fractions migrated to points compare to 1e-12)",
    )
    args = parser.parse_args(argv)
    failed = 0
    for name in args.plans.split(","):
        results = run_plan_argv([*PLANS[name], *args.extra.split()])
        path = fixture_path(name)
        if args.check:
            from core.lab.study.migration import POINTS_KEYS, migrate

            stored = migrate(json.loads(path.read_text(encoding="utf-8"))["results"])
            rescaled = frozenset(POINTS_KEYS) if args.migrated else frozenset()
            difference = first_difference(
                without_timing(stored), without_timing(results), allow_new=args.allow_new_keys, rescaled=rescaled
            )
            print(f"{name}: {'identical' if difference is None else 'DIFFERS at ' + difference}")
            failed += difference is not None
        else:
            fixture = {"argv": PLANS[name], "environment": environment(), "results": results}
            path.write_text(json.dumps(fixture, separators=(",", ":"), allow_nan=False) + "\n", encoding="utf-8")
            print(f"{name}: wrote {path.name} ({path.stat().st_size:,} bytes)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
