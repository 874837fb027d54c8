"""The interface every evaluation implements, and the typed key of a stage of training runs.

An evaluation is one class: its settings (name, kind, page choices, CLI flag, help), the extra stages of
training runs it needs, the extra test sets each run scores, its block of the results JSON, that block's
validation, and its tables. `core.lab.experiment.plan.run_plan` calls the hooks in this order:

    check(values, plan)        -> the checked settings, or None when the evaluation is off
    main_recordings(recordings)   which recordings the experiment itself trains on (cross-load narrows them)
    main_config(config)           the experiment's TrainConfig (the d_model sweep sets its first width)
    prepare(context)              add stages with context.add_stage(...), or fixed test sets to context.main
    run_test_sets(stage, seed)    extra (x, y) test sets scored by one run's restored model
    block(plan, runs)             the block of the results JSON, from the finished runs of every stage

`validate(block, results)` and `tables(block)` are class methods: they serve a results JSON read back from
disk, with no plan behind it. The CLI flags and the page's controls come from `settings`.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from core.lab.cli_args import parse_list
from core.lab.names import SWEEP_FLAGS
from core.lab.report import format_list
from core.lab.runs import MAIN, PlanContext, PlanSettings, RunsByStage, Stage, StageKey

if TYPE_CHECKING:
    from core.lab.training import TrainConfig
    from core.lab.vibration import Recording

__all__ = ["MAIN", "Evaluation", "RunsByStage", "Setting", "StageKey", "parse_list", "sweep_values"]

SETTING_KINDS = ("flag", "ints", "floats")


@dataclass(frozen=True)
class Setting:
    """One setting of an evaluation, as the Plan, the results config, the CLI and the page know it."""

    name: str  # key in Plan.evaluations and in the results config["evaluations"]
    kind: str  # "flag" (on/off), "ints" or "floats" (a comma-separated list)
    help: str
    flag: str | None = None  # the CLI flag; None when the evaluation reads a flag of the core CLI instead
    default: Any = None  # the value when the evaluation is off
    label: str = ""  # the page control's label
    key: str | None = None  # the page control's key (also its URL key); None keeps it off the page
    choices: Sequence[Any] | str = ()  # page choices; "loads" offers the motor loads of the current data
    equals: bool = False  # write the CLI flag as --flag=value, since a value may start with "-"

    def __post_init__(self) -> None:
        if self.kind not in SETTING_KINDS:
            raise ValueError(f"setting kind must be one of {SETTING_KINDS}, got {self.kind!r}")


def sweep_values(sweep: list | None, single: list | None, single_flag: str) -> list | None:
    """A sweep's values from the CLI: the list after its own flag, or a list of several after `single_flag`
    (the one-value flag, whose list kept meaning the sweep); None without either. ValueError when both give one."""
    old = single if single is not None and len(single) > 1 else None
    if sweep is not None and old is not None:
        raise ValueError(
            f"a list after {single_flag} is the sweep: give it once, there or after {SWEEP_FLAGS[single_flag]}"
        )
    return sweep if sweep is not None else old


class Evaluation:
    """Base class: override `key`, `title`, `settings`, `check`, `block`, `validate` and `tables`; the other
    hooks do nothing by default."""

    key: ClassVar[str]  # the results JSON block
    title: ClassVar[str]  # heading above its tables
    settings: ClassVar[tuple[Setting, ...]]
    needs_recordings: ClassVar[bool] = False  # cuts recordings itself, so a finished WindowSet will not do
    caption: ClassVar[str] = ""  # what the page says under its controls

    def __init__(self, values: Mapping[str, Any]):
        self.values = dict(values)

    # --- the plan ----------------------------------------------------------------------------------

    @classmethod
    def check(cls, values: Mapping[str, Any], plan: PlanSettings) -> dict[str, Any] | None:
        """The checked values when the evaluation is on, None when it is off; ValueError when they are bad."""
        raise NotImplementedError

    @classmethod
    def data_loads(cls, values: Mapping[str, Any]) -> list[int] | None:
        """The motor loads the data must hold for these settings, or None when they ask for none."""
        return None

    def runs_per_seed(self, plan: PlanSettings) -> int:
        """Training runs this evaluation adds for each seed."""
        return 0

    def main_recordings(self, recordings: list[Recording]) -> list[Recording]:
        """The recordings the experiment itself trains on: all of them unless overridden."""
        return recordings

    def main_config(self, config: TrainConfig) -> TrainConfig:
        """The experiment's TrainConfig: unchanged unless overridden."""
        return config

    def prepare(self, context: PlanContext) -> None:
        """Add this evaluation's stages (context.add_stage) and fixed test sets of the main stage."""

    def run_test_sets(self, stage: Stage, seed: int) -> dict[str, tuple[Any, Any]]:
        """Extra (x, y) test sets one run of `stage` with `seed` scores; none unless overridden."""
        return {}

    def stage_key(self, variant: Any) -> StageKey:
        """The key of this evaluation's stage of runs for `variant`."""
        return StageKey(self.key, variant, self.stage_label(variant))

    def stage_label(self, variant: Any) -> str:
        """What progress lines and the page call the stage of `variant`."""
        return f"{self.key} {variant}"

    def block(self, plan: PlanSettings, runs: RunsByStage) -> dict[str, Any]:
        """This evaluation's block of the results JSON, from the finished runs of every stage."""
        raise NotImplementedError

    # --- a results JSON read back ------------------------------------------------------------------

    @classmethod
    def validate(cls, block: Any, results: Mapping[str, Any]) -> None:
        """ValueError, naming the place, where `block` (read back from a results JSON) breaks the contract."""
        raise NotImplementedError

    @classmethod
    def tables(cls, block: Mapping[str, Any]) -> list[tuple[str, pd.DataFrame]]:
        """(heading, table) pairs that show `block` on the page and in the CLI's output."""
        raise NotImplementedError

    # --- the command line --------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, group: argparse._ArgumentGroup) -> None:
        """A CLI flag for each setting that has one: on/off for a flag, a comma-separated list otherwise."""
        for setting in cls.settings:
            if setting.flag is None:
                continue
            if setting.kind == "flag":
                group.add_argument(setting.flag, dest=setting.name, action="store_true", help=setting.help)
            else:
                group.add_argument(setting.flag, dest=setting.name, type=parse_list(setting.kind), help=setting.help)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> dict[str, Any]:
        """The values of the settings that have a CLI flag, from parsed arguments."""
        return {setting.name: getattr(args, setting.name) for setting in cls.settings if setting.flag is not None}

    @classmethod
    def argv(cls, values: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
        """The CLI words that set `values` (as recorded in a results config) again."""
        words = []
        for setting in cls.settings:
            value = values.get(setting.name, setting.default)
            if setting.flag is None or value is None or value is False or value == setting.default:
                continue
            if setting.kind == "flag":
                words.append(setting.flag)
            elif setting.equals:
                words.append(f"{setting.flag}={format_list(value)}")
            else:
                words += [setting.flag, format_list(value)]
        return words
