"""Tables a study's figures are drawn from (and offered as CSV): every model's accuracy (spectrum-LR beside the
Transformers), accuracy per fold, the paired differences, pooled confusion matrices, the CI half-width other
designs would give, and a study's expected duration.
Folds are (repeat, fold) pairs throughout: a study of R repeats shows R K folds."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from core.lab.models import BASELINE_MODELS, has_position
from core.lab.stats import words
from core.lab.stats.intervals import paired_interval
from core.lab.stats.summary import mean_sd
from core.lab.study.comparisons import ARTICLE, cell_differences, differences, primary_comparison

PARTS = (
    ("embedding", "the embedding (B-noPE − A)"),
    ("encoding", "the encoding (B − B-noPE)"),
    ("total", "both (B − A)"),
)


def model_table(study: Mapping[str, Any]) -> pd.DataFrame:
    """One row per model in run order: what it is, whether it sees order (a position signal), its runs, its
    accuracy in % (mean ± sd over its (repeat, fold, seed) runs) and how many converged (a baseline is exempt)."""
    runs: dict[str, list[Mapping[str, Any]]] = {}
    for run in study["runs"]:
        runs.setdefault(run["model"], []).append(run)
    rows = []
    for model, own in runs.items():
        spread = mean_sd([float(run["accuracy"]) for run in own])
        converged = sum(run["converged"] for run in own)
        rows.append(
            {
                "model": model,
                "what it is": ROLE_WORDS.get(model, ""),
                "sees order": "yes" if has_position(model) else "no",
                "runs": len(own),
                "accuracy %": words.percent_mean_sd(spread["mean"], spread["sd"]),
                "converged": "exempt" if model in BASELINE_MODELS else f"{converged} of {len(own)}",
            }
        )
    return pd.DataFrame(rows)


def order_gap_line(study: Mapping[str, Any]) -> str | None:
    """The study's order gap in one line, or None when it stores none (no spectrum-LR)."""
    gap = study.get("order_gap")
    return None if gap is None else words.order_gap_line(gap)


ROLE_WORDS = {**words.MODEL_ROLES, "spectrum-LR": "order-blind spectrum baseline"}  # what each model is, in a few words
GAP_COLUMNS = ("spectrum-LR accuracy %", "order gap (best model that sees order − spectrum-LR)")


def decomposition_table(studies: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Per study that stores a decomposition: the embedding's effect, the encoding's and both, in points with
    their 95 % CI (unadjusted, corrected resampled t), as the page and the README lead with them; where a study
    ran spectrum-LR, its accuracy and the order gap beside them. A fault-size
    study is left out: its three sizes support no pooled number (it shows each size's effect instead)."""
    rows = []
    for title, study in studies.items():
        parts = study.get("decomposition")
        if not parts or study["config"]["design"] == "fault-size":
            continue
        row = {"study": title}
        row.update({said: words.with_interval(parts[name]["diff"], parts[name]["ci95"]) for name, said in PARTS})
        if gap := study.get("order_gap"):
            row[GAP_COLUMNS[0]] = words.percent(gap["baseline_accuracy"])
            row[GAP_COLUMNS[1]] = f"{words.points(gap['gap'])} ({gap['best']})"
        rows.append(row)
    gaps = [*GAP_COLUMNS] if any(GAP_COLUMNS[0] in row for row in rows) else []  # only where a study has one
    return pd.DataFrame(rows, columns=["study", *(words for _, words in PARTS), *gaps]).fillna("-")


def leave_one_out_table(study: Mapping[str, Any]) -> pd.DataFrame:
    """The primary comparison with each (repeat, fold) left out in turn: which fold, the difference and its
    95 % CI without it (empty when the study stores none)."""
    primary = primary_comparison(study) or {}
    names = _fold_names(study)
    rows = [
        {
            "left out": names.get((row["repeat"], row["fold"]), "?"),
            "difference (95 % CI)": words.with_interval(row["diff"], row["ci95"]),
        }
        for row in primary.get("leave_one_fold_out") or []
    ]
    return pd.DataFrame(rows, columns=["left out", "difference (95 % CI)"])


def _fold_names(study: Mapping[str, Any]) -> dict[tuple[int, int], str]:
    return {(fold["repeat"], fold["fold"]): fold["name"] for fold in study["folds"]}


def fold_scores(study: Mapping[str, Any], metric: str = "accuracy") -> pd.DataFrame:
    """Rows: models; columns: folds (by name, repeat by repeat); cells: the metric in % averaged over seeds."""
    names = _fold_names(study)
    frame = pd.DataFrame(
        [
            {"model": r["model"], "fold": names[(r["repeat"], r["fold"])], "value": 100 * r[metric]}
            for r in study["runs"]
        ]
    )
    table = frame.pivot_table(index="model", columns="fold", values="value", aggfunc="mean", sort=False)
    return table.loc[list(dict.fromkeys(frame["model"])), [names[k] for k in sorted(names)]]


def paired_frame(study: Mapping[str, Any], a: str, b: str, metric: str = "accuracy") -> pd.DataFrame:
    """One row per (repeat, fold, seed): metric(b) - metric(a) in points, the fold by its name."""
    cells, keys, seeds = cell_differences(study, a, b, metric)
    names = _fold_names(study)
    table = cells.reshape(len(keys), len(seeds))
    return pd.DataFrame(
        [
            {"fold": names[key], "repeat": key[0], "seed": s, "difference": table[i, j]}
            for i, key in enumerate(keys)
            for j, s in enumerate(seeds)
        ]
    )


def pooled_confusion(study: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Per model, the confusion matrix (rows true, columns predicted) of every test window of every fold and
    seed, from the stored per-window predictions."""
    n = len(study["class_names"])
    matrices: dict[str, np.ndarray] = {}
    for run in study["runs"]:
        matrix = matrices.setdefault(run["model"], np.zeros((n, n), dtype=np.int64))
        np.add.at(matrix, (run["predictions"]["true"], run["predictions"]["predicted"]), 1)
    return matrices


def half_widths(
    study: Mapping[str, Any],
    a: str = "A",
    b: str = "B",
    metric: str = "accuracy",
    folds: Sequence[int] = (3, 5, 10),
    seeds: Sequence[int] = tuple(range(2, 13)),
) -> pd.DataFrame:
    """The 95 % CI half-width (points) a design of `folds` x `seeds` would give, from this study's variance
    components (the fold part is taken as per fold, so more folds of the same recordings is an approximation)."""
    components = paired_interval(differences(study, a, b, metric)).components
    rows = []
    for k in folds:
        for s in seeds:
            df = k - 1 if components.fold_sd > 0 else k * (s - 1)
            half = stats.t.ppf(0.975, df) * components.standard_error(k, s)
            rows.append({"folds": k, "seeds": s, "runs_per_model": k * s, "half_width": half})
    return pd.DataFrame(rows)


def primary_by_metric(study: Mapping[str, Any], margin: float | None = None) -> pd.DataFrame:
    """The primary comparison (B vs B-noPE; B vs A in a study of version 3 or without B-noPE) on every study
    metric: accuracy beside balanced accuracy and macro-F1 (classes can be unbalanced, as in fault-size) and log
    loss (lower is better)."""
    from core.lab.study.comparisons import STUDY_METRICS, compare, comparisons_table

    primary = primary_comparison(study)
    a, b = ARTICLE if primary is None else (primary["a"], primary["b"])
    margin = study["config"]["margin"] if margin is None else margin
    return comparisons_table([compare(study, a, b, metric, margin) for metric in STUDY_METRICS])


def per_class(study: Mapping[str, Any]) -> pd.DataFrame:
    """Per model and class, over every fold and seed: recall (the share of the class's windows found) and
    precision, in %, from the pooled confusion matrices."""
    rows = []
    for model, matrix in pooled_confusion(study).items():
        for index, name in enumerate(study["class_names"]):
            found, told = matrix[index].sum(), matrix[:, index].sum()
            rows.append(
                {
                    "model": model,
                    "class": name,
                    "test windows": int(found),
                    "recall %": 100 * matrix[index, index] / found if found else float("nan"),
                    "precision %": 100 * matrix[index, index] / told if told else float("nan"),
                }
            )
    return pd.DataFrame(rows).round(1)
