"""The Fault lab's words, one per concept, and the old words still accepted for each (the README's glossary).

Every renamed concept keeps its old spellings working: an old URL key is read as its new key
(`new_url_key`), an old CLI flag is an argparse alias of the new one (`EXPERIMENT_FLAG_ALIASES`,
`STUDY_FLAG_ALIASES`), an old keyword of a plan is renamed on the way in (`CUTTING_KEY_RENAMES`,
`SETTING_RENAMES`), and a JSON file of the previous schema version is migrated key by key
(`RESULTS_KEY_RENAMES`, `STUDY_KEY_RENAMES`, applied by `rename_keys`). The page, both CLIs and both JSON
contracts read these tables, so an alias is added in one place. This module imports nothing of the lab:
every layer may read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# --- the words ---------------------------------------------------------------------------------------------

WINDOWINGS = ("time", "random")  # windowing: how the windows of a recording go to train / val / test
ONE_FOLD = "one-fold"  # the design of an experiment: one cutting of the windows (core.lab.vibration.windows)
ONE_FOLD_NAME = "the one fold"
DESIGNS = ("time-cv", "load-out", "fault-size", ONE_FOLD)  # design: how a study cuts its folds

# --- old URL keys (the page's widget keys) -> new ----------------------------------------------------------
# A Fault-lab URL key is the long name of the CLI flag that sets the same thing, with "_" for "-" (?window=512
# is --window 512): the short codes of earlier links are read as these names and leave the link.

URL_ALIASES: dict[str, str] = {
    "src": "dataset",
    "dseed": "data_seed",  # the synthetic set's seed
    "oseed": "data_seed",  # the order control's seed: one flag, --data-seed, sets both
    "dloads": "loads",  # the synthetic set's motor loads (HP)
    "cloads": "loads",  # CWRU's motor loads (HP)
    "sqloads": "loads",  # SpectraQuest's loads (percent): one flag, --loads, sets all three
    "cch": "channel",  # CWRU's channel
    "sqch": "channel",  # SpectraQuest's channel: one flag, --channel, sets both
    "scond": "seu_condition",
    "sch": "seu_channel",
    "oclasses": "order_classes",
    "opatch": "order_patch",
    "tok": "tokens",
    "win": "window",
    "dm": "d_model",
    "lr": "learning_rate",
    "seeds": "n_seeds",  # a count on the page; --seeds lists the seeds themselves
    "split": "windowing",
    "trl": "train_loads",
    "tel": "test_loads",
    "dms": "d_model_sweep",
    "pes": "pe_scale_sweep",
    "cmp": "compare_windowings",
}
# The one URL key that is no flag of its own: the windowing comparison is the second value of --windowing.
URL_KEYS_WITHOUT_A_FLAG: dict[str, str] = {"compare_windowings": "--windowing time,random"}


def new_url_key(key: str) -> str:
    """The current URL key for `key`: its new name when `key` is an old one, else `key` itself."""
    return URL_ALIASES.get(key, key)


def url_key_of_flag(flag: str) -> str:
    """The URL key of a CLI flag: its long name with "_" for "-" (--data-seed -> data_seed)."""
    return flag.removeprefix("--").replace("-", "_")


# --- CLI flags: new flag -> the old flags that still parse to the same value ------------------------------
# Commands the lab writes use the new flag; an old command still runs.

SHARED_FLAG_ALIASES: dict[str, tuple[str, ...]] = {"--learning-rate": ("--lr",)}  # both CLIs (core.lab.cli_args)
EXPERIMENT_FLAG_ALIASES: dict[str, tuple[str, ...]] = {
    "--windowing": ("--split",),
    "--windowing-seed": ("--split-seed",),
    **SHARED_FLAG_ALIASES,
}
STUDY_FLAG_ALIASES: dict[str, tuple[str, ...]] = {"--design": ("--split",), **SHARED_FLAG_ALIASES}
# A list after `--d-model` or `--pe-scale` keeps meaning the sweep, as before these flags existed; one value
# sets the one width or scale.
SWEEP_FLAGS: dict[str, str] = {"--d-model": "--d-model-sweep", "--pe-scale": "--pe-scale-sweep"}


def flag_names(flag: str, aliases: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """`flag` followed by its old spellings, as argparse's add_argument takes them."""
    return (flag, *aliases.get(flag, ()))


# --- keywords of a plan: old -> new ------------------------------------------------------------------------

# Plan.cutting (was Plan.windowing): its seed is the random windowing's, not a run's
CUTTING_KEY_RENAMES: dict[str, str] = {"split": "shares", "mode": "windowing", "seed": "windowing_seed"}
SETTING_RENAMES: dict[str, str] = {"compare_splits": "compare_windowings"}  # Plan.evaluations, config.evaluations
MODEL_KEY_RENAMES: dict[str, str] = {"n_heads": "heads", "n_layers": "layers"}  # ModelConfig fields


def renamed(values: Mapping[str, Any], renames: Mapping[str, str]) -> dict[str, Any]:
    """`values` with each old key in `renames` under its new name, in its place; ValueError when both the old
    and the new name are given."""
    both = sorted(old for old, new in renames.items() if old in values and new in values)
    if both:
        raise ValueError(f"give {[renames[old] for old in both]} or their old names {both}, not both")
    return {renames.get(key, key): value for key, value in values.items()}


# --- JSON keys: path of the old key -> its new name, applied in this order --------------------------------

RESULTS_KEY_RENAMES: dict[tuple[str, ...], str] = {
    ("config", "data", "split_mode"): "windowing",
    ("config", "train", "model", "n_heads"): "heads",
    ("config", "train", "model", "n_layers"): "layers",
    ("config", "evaluations", "compare_splits"): "compare_windowings",
    ("split_comparison",): "windowing_comparison",
    ("windowing_comparison", "modes"): "windowings",
}
STUDY_KEY_RENAMES: dict[tuple[str, ...], str] = {
    ("config", "split"): "design",
    ("config", "train", "model", "n_heads"): "heads",
    ("config", "train", "model", "n_layers"): "layers",
}


def rename_keys(document: Mapping[str, Any], renames: Mapping[tuple[str, ...], str]) -> dict[str, Any]:
    """A copy of `document` with the key at each old path renamed in place (its position kept); a path that
    is absent is passed over."""
    copy = _copy(document)
    for path, new in renames.items():
        parent: Any = copy
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[-1] in parent:
            items = [(new if key == path[-1] else key, value) for key, value in parent.items()]
            parent.clear()
            parent.update(items)
    return copy


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value
