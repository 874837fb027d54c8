"""Every budget a visitor of a hosted link can meet, in one place, each with the reason for its number.

A shared link serves anonymous visitors from one CPU and about 1 GB of memory (Streamlit Community Cloud).
Every upload, reopened file, link value and job is checked against these numbers *before* the work starts,
and a request past one is refused with one line (`BudgetExceeded`, a ValueError, so every caller that
already turns a ValueError into a message on the page refuses it without a traceback). The command-line tools
run in the user's own shell and are bound only where a limit protects the process itself (decompression,
JSON nesting).
"""

from __future__ import annotations

import math
from typing import Any


class BudgetExceeded(ValueError):
    """A request past one of the budgets below; its message is the one-line refusal a visitor sees."""


# --- memory of the hosted process -------------------------------------------------------------------------
# Measured (bench/memory.py): torch and the app take about 500 MB before any training, and two visitors
# training the default comparison at once peak at about 900 MB. What visitors upload or reopen must fit in
# the rest, for several visitors at once.
HOST_MEMORY_BYTES = 1_073_741_824  # the 1 GiB a hosted app gets; bench/hosted.py runs under exactly this

# --- uploads -------------------------------------------------------------------------------------------------
# One file: the largest file users bring is CWRU's 99.mat at 15.5 MB (uncompressed MATLAB v5 doubles); a
# two-minute, four-channel CSV at 12 kHz is about 20 MB of text. .streamlit/config.toml's
# server.maxUploadSize says the same number in MB, so the transport refuses a larger file before it arrives.
MAX_UPLOAD_FILE_BYTES = 25_000_000
# All files one session has selected at once: the whole 12 kHz CWRU drive-end set at one load is about
# 30 MB; three sessions at this budget hold under a fifth of the memory beside torch and two trainings.
MAX_SESSION_UPLOAD_BYTES = 60_000_000
# Files one session selects at once: the whole 12 kHz CWRU set, every load, is 40 files. Each one is a row of
# the preview table and one inspection, so their count is bounded as well as their bytes.
MAX_UPLOAD_FILES = 64
# The largest magnitude a sample may have: the squares of 100 million samples this size still sum within
# float64's 1.8e308, so a standard deviation or RMS stays finite. No sensor writes numbers near it in any
# unit; a larger value is corrupt data, not vibration.
MAX_SAMPLE_MAGNITUDE = 1e150

# --- MATLAB files --------------------------------------------------------------------------------------------
# What a .mat may expand to, counted element by element before scipy reads it: 4x the largest official CWRU
# file, so a 30 KB file that inflates a thousandfold is refused after reading at most this much.
MAX_MAT_DECOMPRESSED_BYTES = 64_000_000
# A stored sample rate must be a plausible vibration rate (the CSV reader's range).
MIN_SAMPLE_RATE_HZ = 1.0
MAX_SAMPLE_RATE_HZ = 10_000_000.0
# Cells and structs nested in one another: the reader looks 4 levels deep, and scipy reads the nest by recursing
# in C, so a file of a few kilobytes nested many thousands deep crashes the whole server process.
MAX_MAT_NESTING = 32

# --- reopened results and study files ------------------------------------------------------------------------
MAX_REOPENED_BYTES = 20_000_000  # as expanded; every shipped study is under 3 MB compressed, 12 MB expanded
MAX_JSON_DEPTH = 32  # the deepest object this lab writes is 6 levels; a deeper one is not ours
MAX_CLASSES = 64  # CWRU has 10 classes, SEU 5; a confusion matrix of 64 classes is 4,096 cells to draw
MAX_RUNS = 5_000  # the largest shipped study holds a few hundred runs
MAX_HISTORY_EPOCHS = 1_000  # the page's epoch cap is 200
MAX_MATRIX_CELLS = 100_000  # any one matrix drawn from a file (attention profiles, similarity tables)
MAX_SNRS = 16  # SNRs a study scores its runs at (the page offers 5); each is a row per compared pair to draw
MAX_TEST_LOADS = 16  # loads a study's folds or cross-load tests test at, each a row per compared pair (CWRU has 4)
MAX_SWEEP_VALUES = 16  # values of a reopened study's sweep, each a row per compared pair (the page offers 5)
# Any one string of a reopened file, and a paragraph of it shown whole (a verdict: one sentence per model
# against A): the longest string this lab writes is a study's command line, which grows only with the names
# of the files it reads. A class name is a free text field (MAX_TEXT_CHARS).
MAX_REOPENED_TEXT_CHARS = 10_000

# --- jobs ----------------------------------------------------------------------------------------------------
# Training runs one job at a time per server; these bound the queue behind it.
MAX_JOBS_PER_SESSION = 1  # one running-or-waiting job per visitor
MAX_QUEUED_JOBS = 4  # running plus waiting, server-wide: the fourth visitor in line waits about 3 default runs
ABANDONED_AFTER_S = 30.0  # a job whose page has not polled for this long is cancelled (the tab was closed)
MAX_PAGE_RUNS = 60  # training runs one press of the page may start (the default comparison is 6)
MAX_PAGE_SECONDS = 600  # estimated seconds one press may take; past it the page prints the command instead

# --- text and paths typed by a visitor ----------------------------------------------------------------------
MAX_PATH_CHARS = 1_024  # Linux allows 4,096; no data folder needs more, and a longer one is refused unread
MAX_TEXT_CHARS = 500  # free text fields (tokens, score lists)

# --- a Ray cluster named by the server's environment --------------------------------------------------------
CLUSTER_PROBE_TIMEOUT_S = 5.0  # one connection attempt, off the page draw
CLUSTER_PROBE_CACHE_S = 60.0  # the answer is reused this long, so an unreachable cluster costs one wait a minute


def check_budget(value: float, limit: float, what: str, unit: str = "", advice: str = "") -> None:
    """Refuse with one line when `value` exceeds `limit` (bytes are shown in MB)."""
    if value > limit:
        shown = (
            (f"{value / 1e6:,.1f} MB", f"{limit / 1e6:,.0f} MB") if unit == "bytes" else (f"{value:,g}", f"{limit:,g}")
        )
        unit_text = f" {unit}" if unit and unit != "bytes" else ""
        tail = f" {advice}" if advice else ""
        raise BudgetExceeded(f"{what} is {shown[0]}{unit_text}, over the limit of {shown[1]}{unit_text}.{tail}")


def finite_or_none(value: Any) -> float | None:
    """`value` as a finite float, or None when it is not a number or is infinite / NaN (link values)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None
