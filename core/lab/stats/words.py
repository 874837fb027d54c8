"""Every word the Fault lab says about a comparison, written once: the verdict words, the numbers as they are
printed (points, intervals, accuracies), the verdict sentence a comparison stores, the short answer's plain lead,
the rule the verdicts follow, and the line that says a test set is too small for a clear answer.

    points(-3.27)                       "-3.3"            a difference in percentage points, signed
    interval([-15.1, 8.4])              "-15.1 to +8.4"   an interval of differences ("-" without one)
    with_interval(-3.3, [-15.1, 8.4])   "-3.3 (-15.1 to +8.4)"
    percent_mean_sd(0.921, 0.021)       "92.1 ± 2.1"      an accuracy over seeds, in %
    verdict_sentence(comparison, design)                  the sentence a comparison stores
    answer_lead(comparison, where, ceiling)               the plain words the short answer puts before it

The sentence is written from the comparison's stored values (diff, ci95, ci90, margin, mde80, verdict,
error_rate_ratio, by_fold) and the few facts of the design they do not hold (`Design`: seeds, folds, repeats,
the population, the interval's method, whether it was clipped, the order gap). Nothing else in the lab writes a
verdict word, so the page, both CLIs, the JSON and the short answer cannot drift apart (tests/test_words.py greps
the tree for them). Units: points (100 x a difference of fractions); for log loss 0.01 nats, lower is better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

EQUIVALENT, BETTER, WORSE, CANNOT_TELL = "equivalent", "better", "worse", "inconclusive"
VERDICTS = (EQUIVALENT, BETTER, WORSE, CANNOT_TELL)  # the verdict values a comparison stores
LOWER_IS_BETTER = ("log_loss",)
MODEL_ROLES = {  # what each model is, in the few words a verdict sentence names it by (core.lab.models builds them)
    "A": "raw patches, no encoding",
    "A+PE": "raw patches + sinusoidal encoding",
    "B-noPE": "embedding, no encoding",
    "B": "embedding + sinusoidal encoding",
    "B-learned": "embedding + learned position table",
    "B-concat": "embedding, sinusoidal encoding concatenated",
    "CNN": "1-D CNN baseline",
}
# what each verdict means, as the short answer's legend and the quick comparison's caption say it
VERDICT_MEANINGS: Mapping[str, str] = {
    BETTER: "the 95 % interval lies above zero",
    EQUIVALENT: "the 90 % interval lies inside the ±2-point margin",
    CANNOT_TELL: "neither: the data cannot tell, and the sentence says how big a difference they could have seen",
    WORSE: "the 95 % interval lies below zero",
}
DETECTABLE = (  # the glossary's "detectable difference"
    "the smallest true difference the design would have found with 80 % probability; an "
    f"{CANNOT_TELL} verdict says how big a difference the study could have seen"
)


# --- numbers -----------------------------------------------------------------------------------------------


def points(value: float, digits: int = 1) -> str:
    """A difference in percentage points, signed: 0.63 -> "+0.6" (`digits` decimals)."""
    return f"{value:+.{digits}f}"


def amount(value: float, digits: int = 1) -> str:
    """A size in points or a share already in %, unsigned: 74.04 -> "74.0" (`digits` decimals)."""
    return f"{value:.{digits}f}"


def interval(ci: Sequence[float] | None, digits: int = 1) -> str:
    """An interval of differences in points: "-34.7 to +35.9"; "-" when there is none."""
    return "-" if ci is None else f"{points(ci[0], digits)} to {points(ci[1], digits)}"


def with_interval(diff: float, ci: Sequence[float] | None) -> str:
    """A difference and its interval: "+1.7 (-5.4 to +8.7)", or "+1.7" without an interval."""
    return points(diff) if ci is None else f"{points(diff)} ({interval(ci)})"


def ci_words(confidence: int, ci: Sequence[float]) -> str:
    """ "95 % CI -4.5 to -0.5"."""
    return f"{confidence} % CI {interval(ci)}"


def percent(fraction: float) -> str:
    """A fraction shown in %, one decimal: 0.9214 -> "92.1"."""
    return f"{100 * fraction:.1f}"


def percent_mean_sd(mean: float, sd: float | None) -> str:
    """ "92.1 ± 2.1" (fractions shown in %); "92.1 ± -" when one seed leaves no spread to measure."""
    return f"{percent(mean)} ± {'-' if sd is None else percent(sd)}"


def percent_cell(cell: Mapping[str, Any]) -> str:
    """A {"mean", "sd", ...} cell of a results table as `percent_mean_sd`."""
    return percent_mean_sd(cell["mean"], cell["sd"])


def windows_words(n_test: int | None) -> str:
    """ "1,090 test windows" (an experiment's population), or "its test windows" when the count is unknown."""
    return f"{n_test:,} test window{'' if n_test == 1 else 's'}" if n_test else "its test windows"


def clipped_words(bound: float = 100.0) -> str:
    """What a sentence or a table heading adds when an interval or a detectable difference was cut at `bound`."""
    return f"clipped to ±{bound:g} points, the largest difference there can be"


# --- the verdict sentence ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Design:
    """What a verdict sentence says of the design behind a comparison, besides the comparison's own values."""

    population: str  # which test windows the verdict speaks for
    seeds: int
    folds: int = 1
    repeats: int = 1
    method: str = ""  # the interval, in words ("corrected resampled t (Nadeau and Bengio), 3 x 5 folds")
    clipped: bool = False  # the interval or the detectable difference was cut at `bound`
    bound: float | None = None
    gap: Mapping[str, Any] | None = None  # the study's order gap (core.lab.study.order_gap), where it ran one
    fault_size: bool = False  # one held-out fault size per fold: no pooled verdict


def design_words(design: Design) -> str:
    """ "6 seeds × 5 folds, 1,126 test windows of these ten recordings" (or one split's caveat)."""
    seeds = f"{design.seeds} seed{'s' if design.seeds != 1 else ''}"
    if design.folds == 1 and design.repeats == 1:
        fixed = "the test windows are fixed, so only training noise is counted"
        return f"{seeds} on one split, {design.population}; {fixed}"
    repeats = f" × {design.repeats} repeats" if design.repeats > 1 else ""
    folds = f"{design.folds} fold{'s' if design.folds != 1 else ''}"
    return f"{seeds} × {folds}{repeats}, {design.population}"


def described(model: str) -> str:
    """ "B (embedding + sinusoidal encoding)": the model and what it is, or the bare name of another model."""
    role = MODEL_ROLES.get(model)
    return f"{model} ({role})" if role else model


def error_words(a: str, b: str, error_ratio: float) -> str:
    """How many of a's errors b makes, in words: "B makes 1.9x A's errors"; a ratio that would print as 0.0x
    says what it is ("B makes no errors", "B makes under 0.05x A's errors")."""
    if error_ratio == 0:
        return f"{b} makes no errors"
    if error_ratio < 0.05:
        return f"{b} makes under 0.05x {a}'s errors"
    return f"{b} makes {error_ratio:.1f}x {a}'s errors"


def room_words(gap: Mapping[str, Any]) -> str:
    """The verdict sentence's clause: "the room order has: -0.4 points (B, the best model that sees order,
    99.5 % vs spectrum-LR 99.9 %)"."""
    return (
        f"the room order has: {points(gap['gap'])} points ({gap['best']}, the best model that sees order, "
        f"{percent(gap['best_accuracy'])} % vs {gap['baseline']} {percent(gap['baseline_accuracy'])} %)"
    )


def order_gap_line(gap: Mapping[str, Any]) -> str:
    """A study's order gap in one line (the study table's caption and the study CLI)."""
    return (
        f"Order gap: {points(gap['gap'])} points: {gap['best']}, the best model that sees order, "
        f"{percent(gap['best_accuracy'])} % against {gap['baseline']} {percent(gap['baseline_accuracy'])} %."
    )


def _units(metric: str, margin: float) -> tuple[str, str, str]:
    """(" in f1" or "", the unit, "the 2-point margin") of a metric."""
    what = "" if metric == "accuracy" else f" in {metric.replace('_', ' ')}"
    if metric in LOWER_IS_BETTER:
        return what, "x 0.01 nats", f"the ±{margin:g} x 0.01 nats margin"
    return what, "points", f"the {margin:g}-point margin"


def beyond_margin(ci95: Sequence[float] | None, margin: float) -> bool:
    """Whether a 95 % CI lies wholly outside ±margin (a better / worse verdict "by more than the margin");
    False when it crosses the margin (the difference may be smaller than the margin) or there is none."""
    return ci95 is not None and (ci95[0] > margin or ci95[1] < -margin)


def verdict_phrase(word: str, ci95: Sequence[float] | None, margin: float) -> str:
    """The verdict with its nuance against the margin: "equivalent"; "better / worse by more than the margin"
    (the 95 % CI lies wholly beyond it); "better / worse, possibly by less than the margin"; "inconclusive"."""
    if word not in (BETTER, WORSE):
        return word
    if beyond_margin(ci95, margin):
        return f"{word} by more than the margin"
    return f"{word}, possibly by less than the margin"


def _finding(c: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The sentence's statement, and the first items of its bracket (the interval it rests on)."""
    what, unit, margin_words = _units(c["metric"], c["margin"])
    diff = f"{points(c['diff'])} {unit}{what}"
    if c["ci95"] is None:
        return f"{CANNOT_TELL}, {diff}", ["one run of each gives no interval"]
    ci95 = ci_words(95, c["ci95"])
    if c["verdict"] == EQUIVALENT:
        return f"{EQUIVALENT} within ±{c['margin']:g} {unit}{what}, {points(c['diff'])}", [ci_words(90, c["ci90"])]
    if c["verdict"] in (BETTER, WORSE):
        nuance = verdict_phrase(c["verdict"], c["ci95"], c["margin"]).replace("the margin", margin_words)
        return f"{c['b']} is {nuance}, {diff}", [ci95]
    mde = f"this study could only detect differences of {c['mde80']:.1f} {unit} or more"
    return f"{CANNOT_TELL}, {diff}", [ci95, mde]


def verdict_sentence(c: Mapping[str, Any], design: Design) -> str:
    """The sentence a comparison `c` stores: "B (embedding + sinusoidal encoding) vs B-noPE (embedding, no
    encoding): B is worse, possibly by less than the 2-point margin, -1.2 points (95 % CI -2.3 to -0.1; B makes
    1.9x B-noPE's errors; 6 seeds × 5 folds × 3 repeats, <population>; corrected resampled t ...)". A fault-size
    design gives each size's effect instead (`fault_size_sentence`)."""
    room = None if design.gap is None else room_words(design.gap)
    if design.fault_size:
        return fault_size_sentence(c, room)
    statement, items = _finding(c)
    items += [clipped_words(design.bound)] if design.clipped else []
    if c.get("error_rate_ratio") is not None:
        items.append(error_words(c["a"], c["b"], c["error_rate_ratio"]))
    if room is not None:
        items.append(room)
    items += [design_words(design), design.method]
    return f"{described(c['b'])} vs {described(c['a'])}: {statement} ({'; '.join(filter(None, items))})."


def fault_size_sentence(c: Mapping[str, Any], room: str | None = None) -> str:
    """Why a fault-size study gives each size's effect (`by_fold`) and no pooled verdict, with the effects (and
    the room order has, `room`, when the study ran spectrum-LR)."""
    what, unit, _ = _units(c["metric"], c["margin"])
    rows = c["by_fold"]
    sizes = "; ".join(
        f"{row['name']}: {points(row['diff'])}" + ("" if row["sd"] is None else f" (sd {row['sd']:.1f} over seeds)")
        for row in rows
    )
    spread = max(row["diff"] for row in rows) - min(row["diff"] for row in rows)
    return (
        f"No pooled verdict for {c['b']} - {c['a']}{what}: {sizes} {unit} (mean {points(c['diff'])}, the sizes span "
        f"{spread:.1f}). With {len(rows)} held-out fault sizes there are only {len(rows)} fold means, each a "
        f"different task, too few to separate the models' difference from how it changes with the size, so each "
        f"size is reported on its own." + ("" if room is None else f" Over all sizes, {room}.")
    )


# --- the short answer and the captions ---------------------------------------------------------------------


def answer_lead(c: Mapping[str, Any], where: str = "", ceiling: float | None = None, no_room: bool = False) -> str:
    """The plain words the short answer puts before a primary comparison's stored sentence, from the same values:
    `where` it was asked ("On real bearings (CWRU)"), who did better against the margin, or that the lab could not
    tell them apart; `ceiling` (both models' lowest mean accuracy, when both are at the ceiling) adds that the task
    was too easy to show anything; else `no_room` (an order gap at or below 0) that the spectrum alone did as well,
    so the task left order no room."""
    a, b, word = c["a"], c["b"], c["verdict"]
    lead = f"{where}, " if where else ""
    margin = f"the {c['margin']:g}-point margin"
    if word == EQUIVALENT:
        said = f"{lead}{b} and {a} scored the same within the ±{c['margin']:g}-point margin"
    elif word in (BETTER, WORSE) and c["ci95"] is not None:
        how = " by more than" if beyond_margin(c["ci95"], c["margin"]) else ", possibly by less than"
        verb = "beat" if word == BETTER else "did worse than"
        said = f"{lead}{b} {verb} {a}{how} {margin}"
    else:
        said = f"{lead}the lab could not tell {b} from {a}"
    if ceiling is not None:
        said += f", but both scored {ceiling:.1f} % or more: the task is too easy there to show what the encoding does"
    elif no_room:
        said += ", and a classifier of the spectrum alone, blind to order, did at least as well: the task left order "
        said += "no room"
    return f"{said[:1].upper()}{said[1:]}."


def rule_caption(judged: str, margin: float) -> str:
    """The quick comparison's caption: which comparisons its verdict makes (`judged`), by which rule."""
    return (
        f"{judged}, by the study's rule: {EQUIVALENT} when the 90 % CI of the difference lies within ±{margin:g} "
        f"points, {BETTER} or {WORSE} when the 95 % CI excludes 0, otherwise {CANNOT_TELL}. One split's test "
        f"windows are fixed, so this interval counts training noise only; a study (python -m core.study) "
        f"cross-validates in time and counts both."
    )


def too_few_windows_line(windows: str, what: str, detectable: float, bound: float, advice: str) -> str:
    """One line saying that `windows` ("6 test windows") leave `what` ("this study") able to detect only
    `detectable` points (80 % power at 90 % accuracy), and `advice`, what to use instead."""
    if detectable >= bound:
        could = f"could not detect even a difference of {bound:g} points, the largest there can be"
    else:
        could = f"could only detect differences of about {detectable:.0f} points or more"
    return (
        f"Too few test windows for a clear answer: with {windows}, {what} {could} (80 % power at 90 % accuracy). "
        f"For a clear answer use {advice}."
    )
