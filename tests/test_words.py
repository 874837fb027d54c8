"""One writer of verdict words and one formatter of numbers (core.lab.stats.words): the verdict words are written
in that module alone, and every number is printed the one way it prints them (issue 34: four writers of verdict
sentences had let the quick comparison's caption say "±200 points")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.lab.stats import words

ROOT = Path(__file__).resolve().parents[1]
WRITER = ROOT / "core" / "lab" / "stats" / "words.py"
VERDICT_WORDS = re.compile(r"could only detect|equivalent within|inconclusive", re.IGNORECASE)
SOURCES = ("app.py", "core", "ui", "pages", "bench", "tools")  # everything that ships or prints; not the tests


def python_files() -> list[Path]:
    found = []
    for name in SOURCES:
        path = ROOT / name
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def test_the_verdict_words_are_written_in_one_module_only():
    writers = sorted(
        str(path.relative_to(ROOT)) for path in python_files() if VERDICT_WORDS.search(path.read_text("utf-8"))
    )
    assert writers == ["core/lab/stats/words.py"]


def test_the_grep_would_find_a_second_writer(tmp_path):
    stray = tmp_path / "caption.py"
    stray.write_text('CAPTION = "otherwise Inconclusive"\n', encoding="utf-8")
    assert VERDICT_WORDS.search(stray.read_text("utf-8")) and VERDICT_WORDS.search(WRITER.read_text("utf-8"))


@pytest.mark.parametrize(
    ("printed", "expected"),
    [
        (words.points(0.63), "+0.6"),
        (words.points(-3.27), "-3.3"),
        (words.points(2.0, 2), "+2.00"),
        (words.interval([-34.71, 35.94]), "-34.7 to +35.9"),
        (words.interval(None), "-"),
        (words.with_interval(1.7, [-5.4, 8.7]), "+1.7 (-5.4 to +8.7)"),
        (words.with_interval(1.7, None), "+1.7"),
        (words.ci_words(90, [-1.55, 0.42]), "90 % CI -1.6 to +0.4"),  # -1.55 is -1.5500000000000000444 in binary
        (words.percent(0.92149), "92.1"),
        (words.percent_mean_sd(0.921, 0.021), "92.1 ± 2.1"),
        (words.percent_mean_sd(0.5, None), "50.0 ± -"),
        (words.percent_cell({"mean": 0.25, "sd": 0.125, "n": 2}), "25.0 ± 12.5"),
        (words.amount(74.04), "74.0"),
        (words.amount(100 / 90, 2), "1.11"),
    ],
)
def test_every_number_prints_one_way(printed, expected):
    assert printed == expected


# a number formatted in place, as a difference or a share: "{x:.1f} points", "{x:.1f} %", "{x:+.1f} to", "{:+.1f}"
INLINE_NUMBER = re.compile(r"\.\d+f\}(?= ?(?:points|%| to ))|\{:\+?\.\d+f\}")
# the Fault lab's text writers; its figures format on the chart (plotly), its file readers in MB and Hz
NUMBER_WRITERS = ("core/lab", "ui/lab")
NOT_WRITERS = ("core/lab/figures", "core/lab/vibration", "core/lab/stats/words.py")


def inline_numbers(root: Path = ROOT) -> list[str]:
    """ "path:line" of every point, interval or percentage formatted outside core.lab.stats.words."""
    found = []
    for folder in NUMBER_WRITERS:
        for path in sorted((root / folder).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where.startswith(NOT_WRITERS):
                continue
            lines = path.read_text("utf-8").splitlines()
            found += [f"{where}:{i}" for i, line in enumerate(lines, 1) if INLINE_NUMBER.search(line)]
    return found


def test_points_and_percentages_are_formatted_by_the_one_formatter():
    assert inline_numbers() == []


def test_the_scan_would_find_a_number_formatted_in_place(tmp_path):
    stray = tmp_path / "core" / "lab" / "caption.py"
    stray.parent.mkdir(parents=True)
    stray.write_text('LINE = f"costs it {drop:.1f} points, {share:.1f} %, from {low:+.1f} to"\nFORM = "{:+.1f}"\n')
    assert inline_numbers(tmp_path) == ["core/lab/caption.py:1", "core/lab/caption.py:2"]


def stored(verdict: str, diff: float, ci95, ci90=None, mde80=None, ratio=None) -> dict:
    return {
        "a": "B-noPE",
        "b": "B",
        "metric": "accuracy",
        "diff": diff,
        "ci95": ci95,
        "ci90": ci90 or ci95,
        "margin": 2.0,
        "mde80": mde80,
        "verdict": verdict,
        "error_rate_ratio": ratio,
    }


TIME_CV = words.Design("1,090 test windows", 3, 5, 3, "corrected resampled t (Nadeau and Bengio), 3 x 5 folds")


def test_the_sentence_is_written_from_the_stored_values_and_the_design():
    sentence = words.verdict_sentence(stored("inconclusive", -3.27, [-15.1, 8.44], mde80=16.49, ratio=2.1), TIME_CV)
    assert sentence == (
        "B (embedding + sinusoidal encoding) vs B-noPE (embedding, no encoding): inconclusive, -3.3 points (95 % CI "
        "-15.1 to +8.4; this study could only detect differences of 16.5 points or more; B makes 2.1x B-noPE's "
        "errors; 3 seeds × 5 folds × 3 repeats, 1,090 test windows; corrected resampled t (Nadeau and Bengio), 3 x 5 "
        "folds)."
    )
    equivalent = words.verdict_sentence(stored("equivalent", -0.6, [-1.8, 0.7], [-1.5, 0.4]), TIME_CV)
    assert equivalent.startswith("B (embedding + sinusoidal encoding) vs B-noPE (embedding, no encoding): equivalent ")
    assert ": equivalent within ±2 points, -0.6 (90 % CI -1.5 to +0.4; 3 seeds × 5 folds" in equivalent


def test_the_order_gap_joins_the_sentence_as_the_room_order_has():
    gap = {"gap": -0.44, "best": "B", "best_accuracy": 0.995, "baseline": "spectrum-LR", "baseline_accuracy": 0.9994}
    design = words.Design("x", 5, 4, gap=gap, method="m")
    sentence = words.verdict_sentence(stored("better", 3.0, [2.5, 3.5]), design)
    assert "; the room order has: -0.4 points (B, the best model that sees order, 99.5 % vs spectrum-LR 99.9 %); " in (
        sentence
    )
