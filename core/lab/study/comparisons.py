"""`compare(study, a, b)`: one comparison of a study JSON, and every comparison a study reports.

    primary     B vs B-noPE     the positional encoding alone (the same embedding with and without it)
    secondary   A+PE vs A       the encoding without an embedding (the key secondary)
                B vs A          the article's comparison (embedding plus encoding)
                B-noPE vs A     the embedding alone
                B-learned vs B  a learned position table instead of the sinusoids
                B-concat vs B   the PE concatenated instead of added
                CNN vs A        the practitioner's baseline

The primary is the first of these pairs whose two models the study ran (B vs B-noPE whenever both ran); it is
marked `primary: true` and keeps its own level. The other m comparisons are secondary: their ci95 / ci90 hold
at 1 - 0.05 / m and 1 - 0.10 / m (Bonferroni, `adjusted: "bonferroni"`, said in the sentence too) and
p_holm adjusts their p-values together (Holm).

Every interval is over the (repeat, fold, seed) cells of metric(b) - metric(a) in points: `diff` is their
unweighted mean; ci95 / ci90 / p / mde80 come from the corrected resampled t (core.lab.stats.resampled:
folds that share training data), with n_test / n_train averaged over the study's folds; ci95_independent,
beside them, takes the fold means as independent (it under-covers; kept as the reference). A fault-size study
has three folds, one per held-out size: it reports each size's effect (`by_fold`) and no pooled verdict.

A study whose config.protocol_version is 3 or more (absent: 2) takes ci95 / ci90 / p / mde80, the leave-one-fold-out
table and the decomposition from the protocol-3 interval instead (core.lab.stats.variance_components: seeds,
folds and retested windows, with the share of test windows two folds hold in common read off the stored
folds), and stores its components as `variance_components`; beside it, `ci95_resampled` keeps version 2's
corrected resampled t as the conservative reading (at the comparison's own level: Bonferroni-adjusted for a
secondary one). Older studies re-analyse exactly as before.

A study whose folds share one training set (config.train_loads: every fold trains the same models on the same
windows and tests them at another load) takes the seed as the unit instead, whatever its protocol
(core.lab.stats.shared_training): the t interval over seeds of each seed's difference pooled over every test
window (S - 1 df), conditional on these test windows; `diff` is then that pooled mean, each fold weighing its
test windows, and `by_fold` keeps the per-load differences.

An experiment is a study with one fold (design ONE_FOLD, `one_fold_view`): its windows are cut once, so only
the seeds vary, and its interval is the t interval over seeds (core.lab.stats.intervals.paired_interval, "training
seeds only"); `one_fold_comparisons` compares its runs as a study's are compared, and a model that no pair
names is compared with A.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from core.lab.models import BASELINE_MODELS
from core.lab.names import ONE_FOLD, ONE_FOLD_NAME
from core.lab.stats import words
from core.lab.stats.intervals import (
    Interval,
    bonferroni_confidence,
    bounded,
    holm,
    metric_bound,
    paired_interval,
    verdict,
)
from core.lab.stats.resampled import error_rate_ratio, independent_interval, leave_one_fold_out, resampled_interval
from core.lab.stats.shared_training import seed_interval, seed_leave_one_out
from core.lab.stats.summary import PRIMARY_PAIR
from core.lab.stats.variance_components import block_interval, block_leave_one_out, components_record
from core.lab.study.order_gap import order_gap

STUDY_METRICS = ("accuracy", "balanced_accuracy", "f1", "log_loss")
COMPARED_METRICS = (*STUDY_METRICS, "precision", "recall")  # an experiment's runs record precision and recall too
PRIMARY = PRIMARY_PAIR  # (a, b): b - a
ARTICLE = ("A", "B")  # the article's comparison: embedding plus encoding against neither
PAIRS = (PRIMARY, ("A", "A+PE"), ARTICLE, ("A", "B-noPE"), ("B", "B-learned"), ("B", "B-concat"), ("A", "CNN"))
SECONDARY = PAIRS[1:]
COMPARISON_KEYS = (
    "a",
    "b",
    "metric",
    "diff",
    "ci95",
    "ci90",
    "margin",
    "mde80",
    "p",
    "p_holm",
    "verdict",
    "sentence",
    "primary",
    "adjusted",
    "ci95_independent",
    "error_rate_ratio",
    "leave_one_fold_out",
    "by_fold",
)
OPTIONAL_COMPARISON_KEYS = ("variance_components", "ci95_resampled")  # protocol 3 on
DECOMPOSITION = (("embedding", "A", "B-noPE"), ("encoding", "B-noPE", "B"), ("total", "A", "B"))


@dataclasses.dataclass(frozen=True)
class BonferroniInterval(Interval):
    """An interval whose ci(level) holds at the Bonferroni level of m comparisons (verdict and sentence read
    the adjusted intervals through it; diff, p and mde80 are the unadjusted ones)."""

    m: int = 1

    def ci(self, confidence: float) -> list[float] | None:
        """[low, high] at 1 - (1 - confidence) / m."""
        return super().ci(bonferroni_confidence(confidence, self.m))


def _bonferroni(interval: Interval, m: int) -> BonferroniInterval:
    values = {f.name: getattr(interval, f.name) for f in dataclasses.fields(Interval)}
    values["method"] = f"{interval.method}; Bonferroni-adjusted for {m} secondary comparisons"
    return BonferroniInterval(**values, m=m)


def cell_differences(
    study: Mapping[str, Any], a: str, b: str, metric: str = "accuracy"
) -> tuple[np.ndarray, list[tuple[int, int]], list[int]]:
    """The (repeats, folds, seeds) table of metric(b) - metric(a) in points, its (repeat, fold) keys in the
    table's row order (repeat-major) and its seeds; ValueError when a cell lacks a run of a or b."""
    if metric not in COMPARED_METRICS:
        raise ValueError(f"metric must be one of {COMPARED_METRICS}, got {metric!r}")
    score = {(r["model"], r["repeat"], r["fold"], r["seed"]): float(r[metric]) for r in study["runs"]}
    cells = {key[1:] for key in score if key[0] in (a, b)}
    repeats, folds, seeds = (sorted({cell[i] for cell in cells}) for i in range(3))
    grid = [(r, f, s) for r in repeats for f in folds for s in seeds]
    missing = [(m, *cell) for m in (a, b) for cell in grid if (m, *cell) not in score]
    if missing:
        raise ValueError(f"{a} and {b} must both have a run in every (repeat, fold, seed); missing {missing[:3]}")
    table = np.array([100 * (score[(b, *cell)] - score[(a, *cell)]) for cell in grid])
    return table.reshape(len(repeats), len(folds), len(seeds)), [(r, f) for r in repeats for f in folds], seeds


def differences(study: Mapping[str, Any], a: str, b: str, metric: str = "accuracy") -> np.ndarray:
    """The (repeats x folds, seeds) table of metric(b) - metric(a) in points, rows repeat-major."""
    cells, _, _ = cell_differences(study, a, b, metric)
    return cells.reshape(-1, cells.shape[2])


def fold_test_train_ratio(study: Mapping[str, Any]) -> float:
    """n_test / n_train in windows, averaged over the study's folds (every repeat's)."""
    return float(np.mean([fold["n_test"] / max(fold["n_train"], 1) for fold in study["folds"]]))


def protocol_version(study: Mapping[str, Any]) -> int:
    """The protocol a study was run under: config.protocol_version, 2 where it is absent."""
    return int(study["config"].get("protocol_version", 2))


def shares_training(study: Mapping[str, Any]) -> bool:
    """Whether every fold trains the same models on the same windows (a load-out study with config.train_loads),
    so that the seed is the unit of its intervals."""
    config = study["config"]
    return config["design"] == "load-out" and config.get("train_loads") is not None  # one-fold: its cross-load tests


def fold_test_windows(study: Mapping[str, Any], keys: Sequence[tuple[int, int]]) -> np.ndarray:
    """The test windows of each (repeat, fold) of `keys`, in that order."""
    n_test = {(fold["repeat"], fold["fold"]): fold["n_test"] for fold in study["folds"]}
    return np.array([n_test[key] for key in keys], dtype=np.float64)


def study_interval(
    study: Mapping[str, Any], cells: np.ndarray, keys: Sequence[tuple[int, int]], metric: str
) -> Interval:
    """The interval a study reports for its (repeats, folds, seeds) table `cells` (fold keys `keys`), within what
    `metric` allows: seeds as the unit where the folds share one training set; protocol 3's interval
    (core.lab.stats.variance_components) from version 3 on; else version 2's corrected resampled t
    (core.lab.stats.resampled, unchanged, so stored studies re-analyse to the bit)."""
    if study["config"]["design"] == ONE_FOLD:
        interval = paired_interval(cells.reshape(1, -1))  # one cut of the windows: the seeds alone vary
    elif shares_training(study):
        interval = seed_interval(cells, fold_test_windows(study, keys))
    elif protocol_version(study) >= 3:
        interval = block_interval(cells, fold_overlap(study, keys))
    else:
        interval = resampled_interval(cells, fold_test_train_ratio(study))
    return bounded(interval, metric)


def fold_overlap(study: Mapping[str, Any], keys: Sequence[tuple[int, int]]) -> np.ndarray:
    """(J, J) share of test samples two folds hold in common, folds in the order of `keys`: shared samples over
    sqrt of each fold's tested samples (a window tests config.window samples from its start)."""
    window = int(study["config"]["window"])
    by_key = {(fold["repeat"], fold["fold"]): fold for fold in study["folds"]}
    spans = [_tested_spans(by_key[key], window) for key in keys]
    size = np.array([sum(float((b - a).sum()) for a, b in span.values()) for span in spans])
    shared = np.zeros((len(keys), len(keys)))
    for i, first in enumerate(spans):
        for j in range(i, len(keys)):
            total = 0.0
            for recording, (a0, a1) in first.items():
                if recording in spans[j]:
                    b0, b1 = spans[j][recording]
                    low = np.maximum(a0[:, None], b0[None, :])
                    total += float(np.clip(np.minimum(a1[:, None], b1[None, :]) - low, 0, None).sum())
            shared[i, j] = shared[j, i] = total
    return shared / np.sqrt(np.outer(size, size))


def _tested_spans(fold: Mapping[str, Any], window: int) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per recording, the (begins, ends) of the sample ranges a fold tests, overlapping windows merged."""
    spans = {}
    recording, start = np.asarray(fold["recording"]), np.asarray(fold["start"])
    for r in np.unique(recording):
        begins = np.sort(start[recording == r])
        ends = begins + window
        new = np.concatenate([[True], begins[1:] > np.maximum.accumulate(ends)[:-1]])
        spans[int(r)] = (begins[new], np.maximum.reduceat(ends, np.flatnonzero(new)))
    return spans


def _mean_accuracies(study: Mapping[str, Any], a: str, b: str) -> tuple[float, float]:
    """The mean accuracy (fraction) of a and of b over the cells both ran."""
    accuracy: dict[str, dict[tuple[int, int, int], float]] = {a: {}, b: {}}
    for run in study["runs"]:
        if run["model"] in accuracy:
            accuracy[run["model"]][(run["repeat"], run["fold"], run["seed"])] = float(run["accuracy"])
    both = accuracy[a].keys() & accuracy[b].keys()
    return float(np.mean([accuracy[a][c] for c in both])), float(np.mean([accuracy[b][c] for c in both]))


def by_fold(study: Mapping[str, Any], cells: np.ndarray, keys: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    """Per (repeat, fold): its name, the mean difference over seeds and their sd (null with one seed)."""
    names = {(fold["repeat"], fold["fold"]): fold["name"] for fold in study["folds"]}
    rows = cells.reshape(len(keys), -1)
    return [
        {
            "repeat": repeat,
            "fold": fold,
            "name": names.get((repeat, fold), f"fold {fold}"),
            "diff": float(row.mean()),
            "sd": float(row.std(ddof=1)) if row.size > 1 else None,
        }
        for (repeat, fold), row in zip(keys, rows)
    ]


def compare(
    study: Mapping[str, Any],
    a: str,
    b: str,
    metric: str = "accuracy",
    margin: float = 2.0,
    secondary_count: int = 0,
) -> dict[str, Any]:
    """b against a on `metric` (see the module docstring): as the primary comparison when `secondary_count` is
    0 (its own level, the leave-one-fold-out table), else as one of that many Bonferroni-adjusted secondary
    ones; p_holm = p here (compare_all adjusts the secondary ones)."""
    if not margin > 0:
        raise ValueError(f"the equivalence margin must be positive (in points), got {margin}")
    cells, keys, _ = cell_differences(study, a, b, metric)
    interval = study_interval(study, cells, keys, metric)
    independent = bounded(independent_interval(cells), metric)
    resampled = _conservative(study, cells, metric, secondary_count)
    components = components_record(interval)
    if secondary_count:
        interval, independent = _bonferroni(interval, secondary_count), _bonferroni(independent, secondary_count)
    accuracy_a, accuracy_b = _mean_accuracies(study, a, b)
    ratio_of_errors = error_rate_ratio(accuracy_a, accuracy_b)
    per_fold = by_fold(study, cells, keys)
    fault_size = study["config"]["design"] == "fault-size"  # three sizes, three tasks: no pooled verdict
    word = words.CANNOT_TELL if fault_size else verdict(interval, margin, metric in words.LOWER_IS_BETTER)
    comparison = {
        "a": a,
        "b": b,
        "metric": metric,
        "diff": interval.diff,
        "ci95": interval.ci(0.95),
        "ci90": interval.ci(0.90),
        "margin": float(margin),
        "mde80": interval.mde80,
        "p": interval.p,
        "p_holm": interval.p,
        "verdict": word,
        "sentence": "",
        "primary": not secondary_count,
        "adjusted": "bonferroni" if secondary_count else None,
        "ci95_independent": independent.ci(0.95),
        "error_rate_ratio": ratio_of_errors,
        "leave_one_fold_out": None if secondary_count or len(keys) == 1 else _leave_one_out(study, cells, keys, metric),
        "by_fold": per_fold,
    }
    if components is not None:
        comparison["variance_components"] = components
    if resampled is not None:
        comparison["ci95_resampled"] = resampled.ci(0.95)
    comparison["sentence"] = words.verdict_sentence(comparison, sentence_design(study, interval, fault_size))
    return comparison


def sentence_design(study: Mapping[str, Any], interval: Interval, fault_size: bool = False) -> words.Design:
    """What a comparison's sentence says of the study's design: its population, seeds, folds and repeats, the
    interval's method and clipping, and the order gap where the study ran spectrum-LR (older sentences stay)."""
    return words.Design(
        study["config"]["population"],
        interval.seeds,
        interval.folds,
        interval.repeats,
        interval.method,
        interval.clipped,
        interval.bound,
        order_gap(study),
        fault_size,
    )


def _conservative(study: Mapping[str, Any], cells: np.ndarray, metric: str, secondary_count: int) -> Interval | None:
    """Version 2's corrected resampled t of a protocol-3 comparison, at its level (Bonferroni-adjusted for a
    secondary one): the conservative reading stored beside version 3's interval; None before protocol 3."""
    if protocol_version(study) < 3:
        return None
    resampled = bounded(resampled_interval(cells, fold_test_train_ratio(study)), metric)
    return _bonferroni(resampled, secondary_count) if secondary_count else resampled


def _leave_one_out(
    study: Mapping[str, Any], cells: np.ndarray, keys: Sequence[tuple[int, int]], metric: str
) -> list[dict[str, Any]]:
    """The primary's leave-one-fold-out table by the study's own interval (study_interval)."""
    bound = metric_bound(metric)
    if shares_training(study):
        rows = seed_leave_one_out(cells, fold_test_windows(study, keys), bound)
    elif protocol_version(study) < 3:
        rows = leave_one_fold_out(cells, fold_test_train_ratio(study), bound)
    else:  # protocol 3's interval, cut at the bound as leave_one_fold_out cuts its own
        rows = block_leave_one_out(cells, fold_overlap(study, keys))
        for row in rows:
            if row["ci95"] is not None and bound is not None:
                row["ci95"] = [max(row["ci95"][0], -bound), min(row["ci95"][1], bound)]
    return [{**row, "repeat": repeat, "fold": fold} for row, (repeat, fold) in zip(rows, keys)]


def compared_pairs(study: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The pairs of PAIRS whose two models the study ran, in that order (the first is the primary), then each
    other model that no pair names, against A (a baseline such as spectrum-LR is compared with none)."""
    models = list(dict.fromkeys(run["model"] for run in study["runs"]))
    pairs = [pair for pair in PAIRS if set(pair) <= set(models)]
    named = {model for pair in pairs for model in pair}
    if "A" in models:
        pairs += [("A", m) for m in models if m not in named and m != "A" and m not in BASELINE_MODELS]
    return pairs


def compare_all(study: Mapping[str, Any], metric: str = "accuracy", margin: float = 2.0) -> list[dict[str, Any]]:
    """The primary comparison, then every secondary one the study ran, Bonferroni-adjusted with Holm p-values."""
    pairs = compared_pairs(study)
    m = len(pairs) - 1
    comparisons = [compare(study, a, b, metric, margin, 0 if i == 0 else m) for i, (a, b) in enumerate(pairs)]
    secondary = [c for c in comparisons[1:] if c["p"] is not None]
    for comparison, adjusted in zip(secondary, holm([c["p"] for c in secondary])):
        comparison["p_holm"] = adjusted
    return comparisons


def one_fold_view(runs: Sequence[Mapping[str, Any]], population: str) -> dict[str, Any]:
    """An experiment's runs as a study of one fold (design ONE_FOLD) that `compare` reads: every run placed in
    repeat 0, fold 0, and only the seeds every model finished (a stopped experiment's last seed may lack some)."""
    models = {run["model"] for run in runs}
    by_seed: dict[int, set[str]] = {}
    for run in runs:
        by_seed.setdefault(int(run["seed"]), set()).add(run["model"])
    whole = {seed for seed, done in by_seed.items() if done == models}
    return {
        "config": {"design": ONE_FOLD, "population": population},
        "folds": [{"repeat": 0, "fold": 0, "name": ONE_FOLD_NAME}],
        "runs": [{**run, "repeat": 0, "fold": 0} for run in runs if int(run["seed"]) in whole],
    }


def one_fold_comparisons(
    runs: Sequence[Mapping[str, Any]], population: str, metric: str = "accuracy", margin: float = 2.0
) -> list[dict[str, Any]]:
    """Every comparison of an experiment's runs, as `compare_all` makes a study's (none without a whole seed)."""
    view = one_fold_view(runs, population)
    return compare_all(view, metric, margin) if view["runs"] else []


def primary_comparison(study: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The comparison marked primary (B vs B-noPE in a version-4 study, B vs A in an older one), or None."""
    return next((c for c in study["comparisons"] if c.get("primary")), None)


def decomposition(study: Mapping[str, Any], metric: str = "accuracy") -> dict[str, Any] | None:
    """B - A split into the embedding's effect (B-noPE - A) and the encoding's (B - B-noPE), each with its
    unadjusted ci95 (the study's own interval, study_interval): the diffs are means over
    the same cells, so total = embedding + encoding (to the last bit of rounding). None unless the study ran A,
    B and B-noPE."""
    if not {"A", "B", "B-noPE"} <= {run["model"] for run in study["runs"]}:
        return None
    parts: dict[str, Any] = {"metric": metric}
    for name, a, b in DECOMPOSITION:
        cells, keys, _ = cell_differences(study, a, b, metric)
        interval = study_interval(study, cells, keys, metric)
        parts[name] = {"a": a, "b": b, "diff": interval.diff, "ci95": interval.ci(0.95)}
    return parts


def _role(comparison: Mapping[str, Any]) -> str:
    if comparison.get("primary"):
        return "primary"
    return "secondary, Bonferroni" if comparison.get("adjusted") == "bonferroni" else "secondary"


def comparisons_table(comparisons: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per comparison, as the page and the CLI show it (points, p-values, verdict)."""

    def number(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    return pd.DataFrame(
        [
            {
                "comparison": f"{c['b']} vs {c['a']}",
                "role": _role(c),
                "metric": c["metric"],
                "diff (points)": words.points(c["diff"], 2),
                "95 % CI": words.interval(c["ci95"]),
                "90 % CI": words.interval(c["ci90"]),
                "95 % CI, folds independent": words.interval(c.get("ci95_independent")),
                "margin": f"±{c['margin']:g}",
                "detectable (80 %)": number(c["mde80"], 1),
                "p": number(c["p"], 3),
                "p (Holm)": number(c["p_holm"], 3),
                "verdict": c["verdict"],
            }
            for c in comparisons
        ]
    )
