"""Benches cannot rot: every Python script in bench/ (found here, so a new one is covered the day it lands) runs
its --smoke mode, which takes seconds and needs no git history, and the two shell scripts get smoke tests of
their own. A smoke run checks that a bench still runs, never its numbers (those depend on the machine).

The Chromium benches start the real server and the browser; without Chromium they print SKIPPED and pass.
The smoke runs go SMOKE_AT_ONCE at a time (most of a run is waiting: on a server, a browser, a poll), the
Chromium ones first, so all of them take about as long as the slowest few.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from core.lab.shipped import SHIPPED_STUDIES
from core.lab.study import load_study
from core.lab.study.cli import build_parser
from tests.apptest_utils import ROOT

BENCHES = sorted((ROOT / "bench").glob("*.py"))
CWRU_DIR = ROOT.parent / "shared" / "data" / "cwru"
SMOKE_TIMEOUT_S = 600  # a hung bench fails here instead of holding the suite; each takes seconds on an idle machine
SMOKE_AT_ONCE = 3
SLOWEST_FIRST = ("hosted", "one_button", "memory", "step_floor", "fault_lab", "train")  # the rest in name order


def tracked_changes() -> str:
    """What `git status` says about the checkout, to tell that a smoke run wrote nothing into it."""
    status = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return status.stdout if status.returncode == 0 else ""


def run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=SMOKE_TIMEOUT_S,
    )


def test_every_python_bench_is_found_and_says_how_to_smoke_it():
    assert len(BENCHES) >= 14 and {"train.py", "one_button.py", "hosted.py"} <= {b.name for b in BENCHES}
    for bench in BENCHES:
        assert "--smoke" in bench.read_text(encoding="utf-8"), f"{bench.name} has no --smoke mode"


@pytest.fixture(scope="module")
def smoke_runs(request) -> dict[str, Future]:
    """The smoke run of every bench this session selected, started together (SMOKE_AT_ONCE at a time), by
    name; the checkout must be as it was once they have all finished."""
    chosen = {item.callspec.params["bench"] for item in request.session.items if item.originalname == SMOKE_TEST}
    order = sorted(chosen, key=lambda b: (SLOWEST_FIRST.index(b.stem) if b.stem in SLOWEST_FIRST else 99, b.name))
    before = tracked_changes()
    with ThreadPoolExecutor(max_workers=SMOKE_AT_ONCE) as pool:
        yield {bench.name: pool.submit(run, [sys.executable, str(bench), "--smoke"]) for bench in order}
    assert tracked_changes() == before, "a bench's --smoke changed the checkout"


SMOKE_TEST = "test_every_bench_runs_its_smoke_mode"


@pytest.mark.slow
@pytest.mark.parametrize("bench", BENCHES, ids=[bench.stem for bench in BENCHES])
def test_every_bench_runs_its_smoke_mode(bench, smoke_runs):
    done = smoke_runs[bench.name].result()
    output = done.stdout[-3000:] + done.stderr[-3000:]
    assert done.returncode == 0, output
    assert "Traceback" not in done.stderr, output
    assert done.stdout.strip(), f"{bench.name} --smoke printed nothing"


@pytest.mark.slow
def test_the_gpu_check_runs_its_cpu_fallback_as_its_header_says(tmp_path):
    if not CWRU_DIR.is_dir():
        pytest.skip(f"CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
    done = run(["bash", "bench/gpu_check.sh"], {"ALLOW_CPU": "1", "EPOCHS": "1", "SEEDS": "0", "OUT": str(tmp_path)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "no CUDA GPU, running the CPU fallback" in done.stdout or "device: cuda" in done.stdout
    # its own table: model, seed, accuracy, F1, epochs, windows/s, device
    rows = [line.split() for line in done.stdout.splitlines() if line.endswith((" cpu", " cuda"))]
    assert [(row[0], row[1], row[4]) for row in rows if len(row) == 7] == [("A", "0", "1"), ("B", "0", "1")]
    assert (tmp_path / "gpu_check.json").is_file()


def test_the_gpu_check_stops_with_its_reason_without_a_gpu_unless_told_to_use_the_cpu():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: the check would run on it")
    done = run(["bash", "bench/gpu_check.sh"], {"ALLOW_CPU": "0"})
    assert done.returncode == 1 and "sees no CUDA GPU" in done.stderr, done.stderr


def test_the_studies_script_runs_exactly_the_shipped_studies_commands():
    # the dry run is this script's smoke test: each study trains for hours and writes results/
    done = run(["bash", "bench/studies_v2.sh"], {"DRY_RUN": "1"})
    assert done.returncode == 0, done.stderr
    commands = [shlex.split(line) for line in done.stdout.splitlines()]
    assert all(words[:3] == ["python", "-m", "core.study"] for words in commands), done.stdout
    parsed = {Path(args.out).name: args for args in (build_parser().parse_args(words[3:]) for words in commands)}
    assert set(parsed) == set(SHIPPED_STUDIES)
    for name, args in parsed.items():
        stored = build_parser().parse_args(shlex.split(load_study(ROOT / "results" / name)["config"]["command"])[3:])
        # the stored command names the uncompressed file the runner wrote before it was packed
        assert {**vars(stored), "out": None} == {**vars(args), "out": None}, name


def test_the_version_3_studies_script_runs_protocol_3_with_one_recipe_for_every_study():
    # the dry run is this script's smoke test: each study trains for an hour or more and writes results/
    done = run(["bash", "bench/studies_v3.sh"], {"DRY_RUN": "1"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # the curve's first run, kept at its cap of 100, then protocol 3's amendment 1 (cap 300, rates from the first)
    assert lines[1] == "python bench/order_curve.py --protocol 3 --out results/study_order_curve_cap100.json.gz"
    assert lines[2] == (
        "python bench/order_curve.py --protocol 3 --epochs 300 --tune-epochs 100 --work checkpoints/order_curve_cap300 "
        "--carry-from checkpoints/order_curve -- --workers 2"
    )
    commands = [shlex.split(line) for line in lines if line.startswith("python -m core.study")]
    parsed = [build_parser().parse_args(words[3:]) for words in commands]
    assert len(parsed) == 5
    recipe = {(args.protocol, tuple(args.seeds), args.epochs, args.patience, args.min_delta) for args in parsed}
    assert recipe == {(3, (0, 1, 2, 3, 4), 100, 20, 0.001)}, recipe  # the protocol's one rule for every study
    assert all("spectrum-LR" in args.models for args in parsed)
