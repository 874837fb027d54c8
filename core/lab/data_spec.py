"""Where a Fault-lab data set comes from, as one frozen value the page, the CLI and the results JSON share.

    spec = DataSpec("cwru", loads=(0,), channel="FE")
    recordings = spec.load()                 # the recordings (CWRU's also list .missing files)
    spec.to_dict()                           # the data part of a results config
    DataSpec.from_dict(config["data"])       # and back
    spec.argv()                              # ["--dataset", "cwru", ...] for python -m core.experiment

Files the user brought (uploaded CSVs or CWRU .mat files) are recorded by name and SHA-256, never by a
path on the server: `load(files={name: bytes})` takes their contents and checks them against the recorded
hashes, and `argv()` names them, so a reproduced run reads files saved under those names. One key name
per fact, everywhere: `data_seed`, `loads`, `channel`, `seu_condition`, `sample_rate_override`, ...
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.lab.report import format_number, plural
from core.lab.vibration.order_curve import curve_level
from core.lab.vibration.rates import to_lowest_rate
from core.lab.vibration.types import DataError, Recording

DATASETS = ("synthetic", "cwru", "seu", "csv", "order_control", "spectraquest", "order_curve")
# the shared data folder sits beside the repository: <repo>/../shared/data
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
DEFAULT_DATA_DIRS = {name: SHARED_DATA / name for name in ("cwru", "seu", "spectraquest")}
DEFAULT_CHANNELS: dict[str, str | int] = {"cwru": "DE", "seu": 2, "spectraquest": "a2"}
# the loads read when none are given: 0 HP, except SpectraQuest: all ten of its loads (percent), a fold each
DEFAULT_LOADS: dict[str, tuple[int, ...]] = {"spectraquest": tuple(range(0, 100, 10))}
WITH_LOADS = ("cwru", "synthetic", "spectraquest")
WITH_CHANNEL = ("cwru", "seu", "spectraquest")
WITH_RATE = ("csv", "seu", "spectraquest")  # the sets whose sample rate can be given
SYNTHETIC = ("synthetic", "order_control", "order_curve")  # generated: a seed and a duration
SYNTHETIC_SECONDS = 10.0
DEFAULT_SEU_CONDITION = "20_0"
FILE_CHOICES = ("label", "channel", "sample_rate", "variable", "interpretation")
FILES_SPEC = "pe_lab_files.json"  # the per-file choices beside the files, for --files-spec


@dataclass(frozen=True)
class FileRef:
    """A file the user brought: its name (as uploaded, or as given on the command line), SHA-256, and the
    choices made for it in the preview where they differ from what the reader proposes by itself."""

    name: str
    sha256: str
    label: str | None = None  # the class of a file read as one recording (channels, single column, .mat)
    channel: str | int | None = None  # the column to train on when the columns are channels
    sample_rate: float | None = None  # Hz, over what the file says
    variable: str | None = None  # the vector of a .mat file
    interpretation: str | None = None  # "channels" or "classes" for a file of several numeric columns

    @classmethod
    def of(cls, name: str, content: bytes, **choices: Any) -> FileRef:
        """The reference of a file: its name and the SHA-256 of its bytes, with the reading choices made for it."""
        return cls(name, hashlib.sha256(content).hexdigest(), **choices)

    def choices(self) -> dict[str, Any]:
        """The reading choices that were made (those left at None are not)."""
        return {key: getattr(self, key) for key in FILE_CHOICES if getattr(self, key) is not None}


@dataclass(frozen=True)
class DataSpec:
    """One data set: the dataset and the settings that matter for it (the others keep their defaults)."""

    dataset: str = "synthetic"
    data_seed: int = 0  # the synthetic set's seed (and the random windowing's, unless windowing_seed is given)
    loads: tuple[int, ...] | None = None  # motor loads in HP (synthetic, CWRU), percent (SpectraQuest); None: default
    synthetic_duration_s: float = SYNTHETIC_SECONDS  # seconds per class (synthetic, order control)
    folder: str | None = None  # CWRU, SEU or SpectraQuest folder; None: the shared data folder
    channel: str | int | None = None  # CWRU "DE"/"FE"/"BA", SEU 1-8, SpectraQuest a1-a4; None: the default
    seu_condition: str = DEFAULT_SEU_CONDITION
    sample_rate_override: float | None = None  # Hz, for CSV (over a time column) and SEU
    files: tuple[FileRef, ...] = field(default_factory=tuple)  # uploaded CSVs or CWRU .mat files
    order_classes: int = 4  # the order control's classes
    order_patch: int = 32  # the order control's patch in samples: train with the same model patch
    order_level: int = 0  # the order-dose curve's difficulty level (0 is the easiest)

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ValueError(f"dataset must be one of {DATASETS}, got {self.dataset!r}")
        loads = DEFAULT_LOADS.get(self.dataset, (0,)) if self.loads is None else self.loads
        object.__setattr__(self, "loads", tuple(int(load) for load in loads))
        object.__setattr__(self, "files", tuple(self.files))
        if self.channel is None and self.dataset in DEFAULT_CHANNELS:
            object.__setattr__(self, "channel", DEFAULT_CHANNELS[self.dataset])
        if self.dataset == "csv" and not self.files:
            raise DataError("--dataset csv needs --data PATH naming the CSV file(s).")
        if self.folder is not None and self.files:
            raise ValueError("a data set comes from a folder or from files, not both")

    # --- the results config ------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The data part of a results config (the keys of every dataset; those that do not apply are None)."""
        dataset = self.dataset
        settings = {
            "dataset": dataset,
            "data": self.folder,
            "loads": list(self.loads) if dataset in WITH_LOADS else None,
            "channel": self.channel if dataset in WITH_CHANNEL else None,
            "seu_condition": self.seu_condition if dataset == "seu" else None,
            "sample_rate_override": self.sample_rate_override if dataset in WITH_RATE else None,
            "synthetic_duration_s": self.synthetic_duration_s if dataset in SYNTHETIC else None,
            "data_seed": self.data_seed,
        }
        if dataset == "order_control":
            settings.update(order_classes=self.order_classes, order_patch=self.order_patch)
        if dataset == "order_curve":  # the level, and what it stands for (read back from the level alone)
            settings.update(order_level=self.order_level, order_curve=curve_level(self.order_level).to_dict())
        if self.files:
            settings["files"] = [{"name": ref.name, "sha256": ref.sha256, **ref.choices()} for ref in self.files]
        return settings

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any]) -> DataSpec:
        """The spec a results config's data part records (other keys there, such as the window, are ignored)."""
        given = {
            "dataset": settings.get("dataset", "synthetic"),
            "data_seed": settings.get("data_seed"),
            "loads": settings.get("loads"),
            "synthetic_duration_s": settings.get("synthetic_duration_s"),
            "folder": settings.get("data"),
            "channel": settings.get("channel"),
            "seu_condition": settings.get("seu_condition"),
            "sample_rate_override": settings.get("sample_rate_override"),
            "files": tuple(FileRef(**f) for f in settings.get("files") or ()),
            "order_classes": settings.get("order_classes"),
            "order_patch": settings.get("order_patch"),
            "order_level": settings.get("order_level"),
        }
        return cls(**{key: value for key, value in given.items() if value is not None})

    # --- the command line --------------------------------------------------------------------------

    def argv(self) -> list[str]:
        """The `python -m core.experiment` words that read this data set again."""
        words = ["--dataset", self.dataset]
        if self.folder is not None:
            words += ["--data", self.folder]
        if self.files:
            words += ["--data", *(ref.name for ref in self.files)]
        if any(ref.choices() for ref in self.files):
            words += ["--files-spec", FILES_SPEC]
        if self.dataset in WITH_LOADS:
            words += ["--loads", ",".join(str(load) for load in self.loads)]
        if self.dataset in ("cwru", "spectraquest"):
            words += ["--channel", str(self.channel)]
        if self.dataset == "seu":
            words += ["--seu-condition", self.seu_condition, "--seu-channel", str(self.channel)]
        if self.dataset in WITH_RATE and self.sample_rate_override is not None:
            words += ["--sample-rate", format_number(self.sample_rate_override)]
        return [*words, *self._generated_words(), "--data-seed", str(self.data_seed)]

    def _generated_words(self) -> list[str]:
        """The words of a generated set's settings: the order control's or the order curve's, its duration."""
        if self.dataset not in SYNTHETIC:
            return []
        own = {
            "order_control": ["--order-classes", str(self.order_classes), "--order-patch", str(self.order_patch)],
            "order_curve": ["--order-level", str(self.order_level)],
        }
        return [*own.get(self.dataset, []), "--duration", format_number(self.synthetic_duration_s)]

    @staticmethod
    def add_arguments(
        parser: argparse.ArgumentParser, parse_ints: Callable[[str], list[int]]
    ) -> argparse._ArgumentGroup:
        """The data flags of both CLIs, in a "data" group (returned, for the flags a CLI adds to it)."""
        group = parser.add_argument_group("data")
        group.add_argument("--dataset", choices=DATASETS, default="synthetic")
        group.add_argument(
            "--data",
            nargs="+",
            help="folder (cwru, seu, spectraquest) or files (CSV, CWRU .mat); default ../shared/data/<dataset>",
        )
        group.add_argument(
            "--loads",
            type=parse_ints,
            help="motor loads: cwru / synthetic in HP (0,1,2,3; default 0), spectraquest in percent (default all ten)",
        )
        group.add_argument("--channel", help="CWRU channel DE (default), FE or BA; SpectraQuest a1-a4 (default a2)")
        group.add_argument(
            "--seu-condition", default=DEFAULT_SEU_CONDITION, help="SEU speed_load condition: 20_0 or 30_2"
        )
        group.add_argument("--seu-channel", type=int, default=2, help="SEU channel 1-8 (2: planetary gearbox x)")
        group.add_argument(
            "--sample-rate", type=float, help="sample rate in Hz: CSV (overrides a time column), SEU, spectraquest"
        )
        group.add_argument(
            "--duration", type=float, default=SYNTHETIC_SECONDS, help="seconds per class of synthetic / order sets"
        )
        group.add_argument("--order-classes", type=int, default=4, help="order_control: classes (2-10)")
        group.add_argument(
            "--order-patch", type=int, default=32, help="order_control: samples per patch (keep it the model's --patch)"
        )
        group.add_argument(
            "--order-level",
            "--level",
            dest="order_level",
            type=int,
            default=0,
            help="order_curve: difficulty level, 0 (easiest) to 3",
        )
        group.add_argument(
            "--data-seed", type=int, default=0, help="seed of the synthetic set (and of the random windowing)"
        )
        group.add_argument(
            "--files-spec", help="JSON of per-file choices (label, channel, sample_rate, variable, interpretation)"
        )
        return group

    @classmethod
    def from_args(cls, args: argparse.Namespace, loads: Sequence[int] | None = None) -> DataSpec:
        """The spec of parsed CLI arguments; files named after --data are read to record their SHA-256.
        `loads` replaces --loads (cross-load reads every train and test load)."""
        dataset, paths = args.dataset, list(args.data or [])
        folder, files = None, ()
        mat_files = dataset == "cwru" and all(path.lower().endswith(".mat") for path in paths)
        if paths and (dataset == "csv" or mat_files):
            choices = _files_spec(getattr(args, "files_spec", None), paths)
            files = tuple(FileRef.of(path, _read_file(path), **choices.get(path, {})) for path in paths)
        elif paths:
            if len(paths) != 1:
                raise DataError(f"--dataset {dataset} reads one folder; got {len(paths)} paths after --data.")
            folder = paths[0]
        channel = {"cwru": args.channel, "seu": args.seu_channel, "spectraquest": args.channel}.get(dataset)
        loads = loads if loads is not None else args.loads
        return cls(
            dataset=dataset,
            data_seed=args.data_seed,
            loads=None if loads is None else tuple(loads),
            synthetic_duration_s=args.duration,
            folder=folder,
            channel=channel,
            seu_condition=args.seu_condition,
            sample_rate_override=args.sample_rate if dataset in WITH_RATE else None,
            files=files,
            order_classes=getattr(args, "order_classes", 4),
            order_patch=getattr(args, "order_patch", 32),
            order_level=getattr(args, "order_level", 0),
        )

    # --- loading -----------------------------------------------------------------------------------

    def load(self, files: Mapping[str, bytes] | None = None) -> list[Recording]:
        """The recordings; every loader raises DataError on bad or missing data. `files` gives the content
        of the spec's files by name (uploads); without it they are read from the paths their names give.
        CWRU files missing from a folder are left out and listed in `.missing` of the list returned."""
        import core.lab.vibration as vibration  # loaders resolve lazily, so only the chosen one is imported

        if self.dataset in SYNTHETIC:
            return self._generate()
        contents = [(ref, self._content(ref, files)) for ref in self.files]
        if self.dataset == "csv":
            recordings = []
            for ref, content in contents:
                try:
                    recordings += self._read_own_file(ref, content)
                except DataError as error:  # name the file, unless the message already starts with it
                    name = Path(ref.name).name
                    raise DataError(str(error) if str(error).startswith(name) else f"{name}: {error}") from None
            return to_lowest_rate(recordings)[0]
        if self.dataset == "cwru":
            if not contents:
                return vibration.load_cwru(self._folder(), loads=self.loads, channel=self.channel, allow_missing=True)
            with tempfile.TemporaryDirectory(prefix="pe-lab-cwru-") as folder:
                for ref, content in contents:
                    (Path(folder) / Path(ref.name).name).write_bytes(content)
                return vibration.load_cwru(folder, loads=self.loads, channel=self.channel, allow_missing=True)
        rate = {} if self.sample_rate_override is None else {"sample_rate": self.sample_rate_override}
        if self.dataset == "spectraquest":
            return vibration.load_spectraquest(self._folder(), channel=self.channel, loads=self.loads, **rate)
        return vibration.load_seu(self._folder(), condition=self.seu_condition, channel=self.channel, **rate)

    def _generate(self) -> list[Recording]:
        """The recordings of a generated set: the synthetic bearings, the order control or the order curve."""
        import core.lab.vibration as vibration

        if self.dataset == "order_control":
            return vibration.load_order_control(
                self.data_seed, self.order_classes, self.synthetic_duration_s, self.order_patch
            )
        if self.dataset == "order_curve":
            return vibration.load_order_curve(self.data_seed, self.order_level, self.synthetic_duration_s)
        return vibration.synthetic_bearing_set(
            seed=self.data_seed, loads=self.loads, duration_s=self.synthetic_duration_s
        )

    def _read_own_file(self, ref: FileRef, content: bytes) -> list[Recording]:
        """One file of the user's: a .mat vector, or a CSV-like table read as proposed or as chosen."""
        from core.lab.vibration.csv_reader import read_vibration_csv
        from core.lab.vibration.matlab import inspect_mat, read_mat_variable

        base = Path(ref.name).name
        rate = ref.sample_rate or self.sample_rate_override
        if base.lower().endswith(".mat"):
            found = inspect_mat(content, base)
            variable, label = ref.variable or found.variable, ref.label or found.label
            return [read_mat_variable(content, base, variable, rate or found.sample_rate, label)]
        return read_vibration_csv(
            content,
            name=base,
            sample_rate=rate,
            interpretation=ref.interpretation,
            channel=ref.channel,
            label=ref.label,
        )

    def files_spec(self) -> list[dict[str, Any]]:
        """The per-file choices as --files-spec reads them (the page offers them as FILES_SPEC)."""
        return [{"name": ref.name, **ref.choices()} for ref in self.files if ref.choices()]

    def _folder(self) -> Path:
        return Path(self.folder).expanduser() if self.folder is not None else DEFAULT_DATA_DIRS[self.dataset]

    @staticmethod
    def _content(ref: FileRef, files: Mapping[str, bytes] | None) -> bytes:
        content = files[ref.name] if files is not None and ref.name in files else _read_file(ref.name)
        if FileRef.of(ref.name, content).sha256 != ref.sha256:
            raise DataError(
                f"{ref.name} is not the file these settings were made with: its SHA-256 differs from the recorded "
                f"{ref.sha256[:12]}…"
            )
        return content

    def describe(self, n_recordings: int) -> str:
        """The data set in words, for the page's "Current data" line."""
        loads = ", ".join(str(load) for load in self.loads)
        if self.dataset == "synthetic":
            return f"the built-in synthetic set (seed {self.data_seed}, loads {loads} HP)"
        names = ", ".join(Path(ref.name).name for ref in self.files)
        if self.dataset == "cwru":
            where = f"uploaded files {names}" if self.files else plural(n_recordings, "file")
            return f"CWRU {self.channel} at {loads} HP ({where})"
        if self.dataset == "seu":
            return f"SEU bearing set, condition {self.seu_condition}, channel {self.channel}"
        if self.dataset == "order_control":
            return (
                f"the order control ({plural(self.order_classes, 'class', 'classes')} told apart only by where each "
                f"{self.order_patch}-sample patch sits in a revolution, seed {self.data_seed})"
            )
        if self.dataset == "order_curve":
            level = curve_level(self.order_level)
            return (
                f"the order-dose curve at level {level.index} (which of two pulse trains leads by the short silence; "
                f"silences {level.contrast} samples apart, seed {self.data_seed})"
            )
        if self.dataset == "spectraquest":
            return f"SpectraQuest gearbox, healthy vs broken tooth, channel {self.channel} at loads {loads} %"
        return f"{plural(n_recordings, 'recording')} from {names}"


def _files_spec(path: str | None, names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The choices of a --files-spec JSON by file name; DataError for a file it names that --data does not."""
    if path is None:
        return {}
    try:
        entries = json.loads(_read_file(path))
        by_name = {entry["name"]: {k: v for k, v in entry.items() if k in FILE_CHOICES} for entry in entries}
    except (ValueError, TypeError, KeyError) as error:
        raise DataError(f"{path} is not a files spec (a JSON list of {{'name': ..., choices}}): {error}") from None
    unknown = sorted(set(by_name) - set(names))
    if unknown:
        raise DataError(f"{path} names files not given after --data: {', '.join(unknown)}.")
    return by_name


def _read_file(path: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except FileNotFoundError:
        raise DataError(f"File {path} does not exist.") from None
    except OSError as error:
        raise DataError(f"File {path} cannot be read: {error.strerror}.") from None
