"""The Fault lab's link: every widget it binds to the URL (bind="query-params"), with the range or the options
that widget is given.

The widgets of ui.lab.data and ui.lab.experiment take their options and bounds from the constants here, and
pages/fault_lab.py hands LINK_NUMBERS and LINK_CHOICES to ui.navigation.use_app_navigation: one source for both, so a
shared link's value that no widget could take (`?window=999`, `?models=Z`) is dropped and named in one line
(ui.link_values) instead of being reset without a word. The page names its choices, so it has named every key of
its link: a bound widget missing here would lose its value from every link ("not a setting of this page"), which
tests/test_fault_lab_links.py guards by collecting the key of every bound widget the page renders.

Keys are a public contract: shared links use them. Each is the long name of the CLI flag that sets the same
thing (`window` is --window, `data_seed` --data-seed, `n_seeds` --n-seeds); the short codes of older links
(`win`, `dseed`, `seeds`, ...) are read as these through core.lab.names.URL_ALIASES.
"""

from __future__ import annotations

from core.lab import evaluations
from core.lab.models import MODEL_NAMES
from core.lab.names import WINDOWINGS
from core.lab.training import TrainConfig
from core.lab.vibration import cwru, order_control, seu, spectraquest
from ui.link_values import Choices, NumberRange

# --- 1 · Data (ui.lab.data) ---------------------------------------------------------------------------------
# The options are the CLI's --dataset names (they go into shared links as ?dataset=csv); the captions say what.
SOURCES = {
    "synthetic": "built-in, ready at once",
    "cwru": "Case Western bearing data",
    "seu": "Southeast University gearbox",
    "csv": "your own CSV files",
    "order_control": "positive control: the class only in the patch order",
    "spectraquest": "SpectraQuest gearbox, broken tooth",
}
DATA_SEEDS: NumberRange = (0, 999)  # the synthetic set's and the order control's data seed
MOTOR_LOADS_HP: tuple[int, ...] = tuple(cwru.NOMINAL_RPM)  # 0-3 HP: the synthetic set's and CWRU's loads
CWRU_CHANNELS: tuple[str, ...] = cwru.CHANNELS
SEU_CONDITIONS: tuple[str, ...] = tuple(seu.CONDITIONS)
SEU_CHANNELS: NumberRange = (min(seu.CHANNELS), max(seu.CHANNELS))
ORDER_CLASSES: NumberRange = (2, order_control.MAX_CLASSES)
ORDER_PATCHES: tuple[int, ...] = (16, 32)
SPECTRAQUEST_CHANNELS: tuple[str, ...] = spectraquest.CHANNELS
SPECTRAQUEST_LOADS: tuple[int, ...] = spectraquest.LOADS  # percent
# Every motor load a source's recordings can carry (meta "load_hp"): a setting offering the current data's loads
# (an evaluation's choices == "loads") shows a subset of these, which the link cannot know before the data load.
ANY_MOTOR_LOAD: tuple[int, ...] = tuple(sorted({*MOTOR_LOADS_HP, *SPECTRAQUEST_LOADS}))

# --- 3 · Experiment (ui.lab.experiment) ---------------------------------------------------------------------
TOKENS: tuple[str, ...] = ("time", "fft")
WINDOWS: tuple[int, ...] = (256, 512, 1024, 2048)
PATCHES: tuple[int, ...] = (8, 16, 32, 64)
D_MODEL_OF_PATCH = "= patch"  # the d_model option that means "the patch width"
D_MODELS: tuple[object, ...] = (D_MODEL_OF_PATCH, 16, 32, 64, 128)
HEADS: tuple[int, ...] = (1, 2, 4, 8)
LAYERS: NumberRange = (1, 4)
EPOCHS: NumberRange = (1, 50)
SEEDS: NumberRange = (1, 5)
LEARNING_RATES: tuple[float, ...] = tuple(sorted({3e-4, 1e-3, 3e-3, 1e-2, TrainConfig().learning_rate}))
FLAG: tuple[bool, bool] = (False, True)  # a checkbox


def evaluation_choices() -> dict[str, Choices]:
    """The options of each registered evaluation setting that has a page key, as ui.lab.experiment's
    `_setting_control` offers them: a flag is a checkbox, "loads" the current data's loads (any of them here)."""
    choices: dict[str, Choices] = {}
    for evaluation in evaluations.registered():
        for setting in evaluation.settings:
            if not setting.key:
                continue
            if setting.kind == "flag":
                choices[setting.key] = FLAG
            elif setting.choices == "loads":
                choices[setting.key] = ANY_MOTOR_LOAD
            else:
                choices[setting.key] = tuple(setting.choices)
    return choices


LINK_NUMBERS: dict[str, NumberRange] = {
    "data_seed": DATA_SEEDS,  # the synthetic set's and the order control's
    "seu_channel": SEU_CHANNELS,
    "order_classes": ORDER_CLASSES,
    "layers": LAYERS,
    "epochs": EPOCHS,
    "n_seeds": SEEDS,
}
# The keys one control of each of several sources holds, with options that differ by source (a motor load in HP
# or in percent, a CWRU or a SpectraQuest channel): the link takes any of them, each source's control its own.
SOURCE_CHOICE_KEYS = ("loads", "channel")
LINK_CHOICES: dict[str, Choices] = {
    "dataset": tuple(SOURCES),
    "loads": ANY_MOTOR_LOAD,
    "channel": (*CWRU_CHANNELS, *SPECTRAQUEST_CHANNELS),
    "seu_condition": SEU_CONDITIONS,
    "order_patch": ORDER_PATCHES,
    "models": MODEL_NAMES,
    "tokens": TOKENS,
    "windowing": WINDOWINGS,
    "window": WINDOWS,
    "patch": PATCHES,
    "d_model": D_MODELS,
    "heads": HEADS,
    "learning_rate": LEARNING_RATES,
    **evaluation_choices(),
}
