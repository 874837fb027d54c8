"""The training benchmark of the Fault lab on CWRU 0 HP (1024-sample windows): accuracy, evaluations, speed.

    python bench/train.py                      # everything the issue lists (tens of minutes on 2 cores)
    python bench/train.py --quick              # one seed, few epochs, A / B / CNN
    python bench/train.py --smoke              # seconds: every section once on a tiny synthetic set, 1 epoch
    python bench/train.py --sections throughput,synthetic --out /tmp/bench.txt

Prints, with a timestamp on every line (flushed, so a partial run is still useful):

- every model x {time, FFT} tokens x {time, random} split x seeds: mean ± sd accuracy and F1 and each
  model's verdict against A, then the leak of the random split per model;
- cross-load accuracy (train 0 HP, test 0-3 HP on the nine fault classes) and the noise curve
  (SNR -4, 0, 4, 8 dB) for A, B and the CNN;
- training throughput of our loop (core.lab.training.train) against a plain reference loop (a DataLoader over
  a TensorDataset, the textbook PositionalEncoding module, torch's own nn.TransformerEncoder forward, the
  default AdamW) with the same model and starting weights, batch size and thread count, for A and B, and
  the ratio; and, in the same run, the previous loop (where issue 15 started: commit OLDER_LOOP_COMMIT, checked
  out with `git worktree add` beside the repository and removed again; --smoke skips it, as it needs the git
  history), FLOPs per window (torch.utils.flop_counter) and this run's sgemm GFLOP/s. Ours is faster mostly in the model
  (core.lab.encoder_kernels: dropout masks from 16-bit slices of PCG64's raw output, the attention core with
  its backward written out; no SDPA masked-math path), then in the fused AdamW and the loop itself;
- the synthetic default set: A and B, 3 seeds, wall time;
- the targets, and the total wall time.

The output also goes to --out, and every results JSON to the same path with ".json". The CWRU data is read
from ../shared/data/cwru beside the repository; without it the CWRU sections are skipped with a message.
--smoke runs every section on a synthetic set of SMOKE_SECONDS per class (the CWRU sections on it in place of
CWRU), one seed, one epoch, A and B: it checks the benchmark still runs (tests/test_benches.py), nothing more.
Training runs through core.lab.experiment.plan.run_plan, the code path of the page and the CLI, with the default
hyper-parameters of core.lab.training.TrainConfig, one run per CPU core side by side as the CLI does by default
(each run's numbers are those it gets alone; the throughput section runs one loop at a time).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.lab import report  # noqa: E402
from core.lab.data_spec import DataSpec  # noqa: E402
from core.lab.evaluations.windowing_comparison import windowing_comparison_block, windowing_table  # noqa: E402
from core.lab.experiment.cli import report_text  # noqa: E402
from core.lab.experiment.plan import Plan, run_plan  # noqa: E402
from core.lab.experiment.results import build_results  # noqa: E402
from core.lab.models import MODEL_NAMES, build_model  # noqa: E402
from core.lab.runs import RunFinished, StageStarted  # noqa: E402
from core.lab.training import TrainConfig, default_workers  # noqa: E402
from core.lab.vibration import load_cwru, make_windows, synthetic_bearing_set  # noqa: E402

CWRU_DIR = REPO.parent / "shared" / "data" / "cwru"
SMOKE_SECONDS = 1.5  # per class and load of the synthetic set --smoke runs on
SECTIONS = ("models", "evaluations", "throughput", "synthetic")
WINDOW = 1024
TARGETS = {
    "A accuracy (time tokens, time split)": ">= 98 %",
    "A and B, time tokens, time split, wall": "<= 300 s for 3 seeds",
    "our loop / reference loop": ">= 1.5x",
    "synthetic default set, A and B, 3 seeds, wall": "<= 60 s",
}


class Log:
    """print with a timestamp and the seconds since the start, flushed, and copied to a file."""

    def __init__(self, path: Path):
        self.started = time.perf_counter()
        self.file = path.open("w", encoding="utf-8")

    def __call__(self, text: str = "") -> None:
        stamp = f"[{time.strftime('%H:%M:%S')} +{time.perf_counter() - self.started:5.0f}s]"
        for line in str(text).splitlines() or [""]:
            print(f"{stamp} {line}", flush=True)
            self.file.write(f"{stamp} {line}\n")
        self.file.flush()


# --- the reference loop -------------------------------------------------------------------------------


class TextbookPositionalEncoding(nn.Module):
    """The positional-encoding module of the PyTorch transformer tutorial, batch first: a sinusoidal table
    (sin at even, cos at odd columns, wavelengths up to 10000·2π) added to the input, then dropout."""

    def __init__(self, d_model: int, dropout: float, max_len: int = 5000):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        position = torch.arange(max_len).unsqueeze(1)  # (max_len, 1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(1, max_len, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(x + self.pe[:, : x.size(1)])  # (batch, tokens, d_model)


class ReferenceModel(nn.Module):
    """Model A or B as the textbook writes it, with a fresh model's own weights (so both loops start from
    the same weights): torch's own nn.TransformerEncoder forward (global-generator dropout, attention
    through scaled_dot_product_attention) and, for B, the textbook PE module in place of ours. It has no
    pe_scale or embed_scale: at their defaults (1, off), which the benchmark uses, ours computes the same."""

    def __init__(self, ours: nn.Module, dropout: float):
        super().__init__()
        self.tokenizer, self.embedding, self.head = ours.tokenizer, ours.embedding, ours.head
        self.encoder = nn.TransformerEncoder(
            copy.deepcopy(ours.encoder.layers[0]), len(ours.encoder.layers), enable_nested_tensor=False
        )
        self.encoder.load_state_dict(ours.encoder.state_dict())
        has_position = ours.position is not None
        self.position = TextbookPositionalEncoding(self.head.in_features, dropout) if has_position else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tokenizer(x)  # (batch, tokens, patch)
        if self.embedding is not None:
            h = self.embedding(h)  # (batch, tokens, d_model)
        h = self.position(h)
        return self.head(self.encoder(h).mean(dim=1))  # (batch, n_classes)


def reference_model(model_name: str, windows: Any, config: TrainConfig, seed: int) -> nn.Module:
    if model_name not in ("A", "B"):
        raise ValueError(f"the reference loop is built for A and B, not {model_name}")
    torch.manual_seed(seed)
    ours = build_model(model_name, windows.window, len(windows.class_names), config.model)
    return ReferenceModel(ours, config.model.dropout)


def reference_loop(model: nn.Module, windows: Any, config: TrainConfig, epochs: int, seed: int) -> dict[str, float]:
    """The textbook loop: DataLoader batches, zero_grad / forward / backward / step, then a validation pass
    per epoch under no_grad. Returns windows per second of the whole loop and of the training passes."""
    torch.set_num_threads(config.threads)
    train_set = TensorDataset(torch.from_numpy(windows.x_train), torch.from_numpy(windows.y_train))
    val_set = TensorDataset(torch.from_numpy(windows.x_val), torch.from_numpy(windows.y_val))
    loader = DataLoader(
        train_set, batch_size=config.batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed)
    )
    val_loader = DataLoader(val_set, batch_size=config.batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    loss_fn = nn.CrossEntropyLoss()
    training_seconds = 0.0
    started = time.perf_counter()
    for _ in range(epochs):
        epoch_started = time.perf_counter()
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
        training_seconds += time.perf_counter() - epoch_started
        model.eval()
        with torch.no_grad():
            val_loss = sum(loss_fn(model(xb), yb).item() * len(yb) for xb, yb in val_loader) / len(val_set)
    loop_seconds = time.perf_counter() - started
    n = len(windows.x_train) * epochs
    return {"loop": n / loop_seconds, "training": n / training_seconds, "val_loss": val_loss}


# --- the older loop, checked out from git ----------------------------------------------------------------
# The loop issue 15 started from: core/training.py and core/models.py at this commit, before the lab moved under
# core/lab/ (its measured speed and accuracy are in the README, with this commit). A bench that runs it checks
# the commit out with `git worktree add`, loads the two files from there as a pair, and removes the checkout.
OLDER_LOOP_COMMIT = "3f783c5ae8de4c98b02527c10826b9108c69a184"
# what the older files import from modules that have moved since -> today's module (the same code there)
MOVED_MODULES = {
    "core.probes.order": "core.lab.probes.order",
    "core.vibration.types": "core.lab.vibration.types",
    "core.vibration.windows": "core.lab.vibration.windows",
    "core.encodings": "core.explain.encodings",
}
OLDER_SETTING_NAMES = {
    "heads": "n_heads",
    "layers": "n_layers",
}  # today's model settings, as the older loop spells them
SKIPPED_IN_SMOKE = (
    f"the older loop (commit {OLDER_LOOP_COMMIT[:7]}) is skipped in --smoke: its checkout needs git history"
)


def load_older_loop(commit: str = OLDER_LOOP_COMMIT) -> SimpleNamespace:
    """The older loop's modules, `training` wired to `models` (its `from core.models import ...` binds to the
    older models module, not today's), loaded from a `git worktree add` checkout of `commit` that is removed
    again once they are loaded. SystemExit in one line when the commit cannot be checked out (a shallow clone)."""
    import shutil

    folder = Path(tempfile.mkdtemp(prefix="pe_lab_older_loop_"))
    tree = folder / "tree"
    added = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(tree), commit],
        capture_output=True,
        text=True,
    )
    if added.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        raise SystemExit(f"cannot check out the older loop's commit {commit[:7]}: {added.stderr.strip()}")
    try:
        models = _module_with("pe_lab_older_models", tree / "core" / "models.py", {})
        training = _module_with("pe_lab_older_training", tree / "core" / "training.py", {"core.models": models})
    finally:
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
    return SimpleNamespace(training=training, models=models, commit=commit)


def _module_with(name: str, path: Path, extra: dict[str, ModuleType]) -> ModuleType:
    """The module of the file at `path`, registered as `name`, executed while each moved module's old name
    (and `extra`'s) stands for today's module; the names are put back afterwards."""
    stand_ins = {old: importlib.import_module(new) for old, new in MOVED_MODULES.items()} | extra
    saved = {old: sys.modules.get(old) for old in stand_ins}
    sys.modules.update(stand_ins)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is made
        spec.loader.exec_module(module)
        return module
    finally:
        for old, module_before in saved.items():
            if module_before is None:
                sys.modules.pop(old, None)
            else:
                sys.modules[old] = module_before


def as_older_config(training: ModuleType, config: Any, **changes: Any) -> Any:
    """Today's TrainConfig (with `changes`) as the older loop's own TrainConfig: renamed settings under their
    old names; a setting the older loop predates must be at today's default, where it changes nothing."""
    settings = {**config.to_dict(), **changes}
    model_fields = {field.name for field in dataclasses.fields(training.ModelConfig)}
    model = {OLDER_SETTING_NAMES.get(key, key): value for key, value in settings.pop("model").items()}
    train_fields = {field.name for field in dataclasses.fields(training.TrainConfig)}
    defaults = type(config)().to_dict()
    moved = sorted(key for key in set(settings) - train_fields if settings[key] != defaults[key])
    if moved:
        raise ValueError(f"the older loop has no setting {', '.join(moved)}: leave it at its default")
    kept = {key: value for key, value in settings.items() if key in train_fields}
    return training.TrainConfig(model={k: v for k, v in model.items() if k in model_fields}, **kept)


def older_trainer(training: ModuleType) -> Callable[..., dict[str, Any]]:
    """The older loop's `train`, taking today's TrainConfig: a trainer for core.lab.runs."""

    def train(windows: Any, model_name: str, config: Any, seed: int, *more: Any, **options: Any):
        return training.train(windows, model_name, as_older_config(training, config), seed, *more, **options)

    return train


def our_loop(
    model_name: str, windows: Any, config: TrainConfig, epochs: int, seed: int, training: Any = None
) -> dict[str, float]:
    """core.lab.training.train, or the older loop's (`training`, from load_older_loop), every epoch run."""
    module = training or sys.modules["core.lab.training"]
    fixed = dataclasses.replace(config, epochs=epochs, patience=epochs)  # patience = epochs: every epoch runs
    if training is not None:  # the older loop spells some settings its own way
        fixed = as_older_config(training, fixed)
    run = module.train(windows, model_name, fixed, seed, device="cpu")
    return {"loop": len(windows.x_train) * epochs / run["train_seconds"], "training": run["windows_per_second"]}


def flops_per_window(model_name: str, windows: Any, config: TrainConfig) -> float:
    """FLOPs of one training window, forward and backward, counted by torch.utils.flop_counter on a batch."""
    from torch.utils.flop_counter import FlopCounterMode

    model = build_model(model_name, windows.window, len(windows.class_names), config.model)
    x = torch.from_numpy(windows.x_train[: config.batch_size])
    y = torch.from_numpy(windows.y_train[: config.batch_size])
    with FlopCounterMode(display=False) as counter:
        nn.functional.cross_entropy(model(x), y).backward()
    return counter.get_total_flops() / len(x)


def sgemm_gflops(threads: int, size: int = 2048, repeats: int = 5) -> float:
    """This machine's single-precision matrix multiply speed on `threads` threads, GFLOP/s (best of repeats)."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)  # warm-up
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(repeats))
    return 2 * size**3 / best / 1e9


def _timed(work: Any) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def throughput(
    log: Log, windows: Any, config: TrainConfig, epochs: int, repeats: int, older: SimpleNamespace | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Our loop against the reference (per model, whole loop and training passes), and the summary the JSON
    keeps under "throughput": new, previous (the older loop, `older`; None: skipped) and reference windows/s,
    model GFLOP/s and this run's sgemm."""
    log(
        f"Throughput: {epochs} epochs of {len(windows.x_train)} training windows, batch {config.batch_size}, "
        f"{config.threads} thread(s), CPU; ours and the reference alternate, median of {repeats}"
    )
    if older is None:
        log(f"  {SKIPPED_IN_SMOKE}")
    sgemm = sgemm_gflops(config.threads)
    log(f"  sgemm 2048 x 2048 on {config.threads} thread(s): {sgemm:.1f} GFLOP/s")
    rows, summary = {}, {}
    for model_name in ("A", "B"):
        loops = {"ours": None, **({} if older is None else {"previous": older.training}), "reference": "reference"}
        timings = _timed_loops(model_name, windows, config, epochs, repeats, loops)
        row = {
            kind: {name: statistics.median(r[kind] for r in timings[name]) for name in ("ours", "reference")}
            for kind in ("loop", "training")
        }
        for kind in row:
            row[kind]["ratio"] = row[kind]["ours"] / row[kind]["reference"]
        rows[model_name] = row
        flops = flops_per_window(model_name, windows, config)
        new = row["training"]["ours"]
        previous = statistics.median(r["training"] for r in timings["previous"]) if older is not None else None
        summary[model_name] = {
            "new": new,
            "previous": previous,
            "reference": row["training"]["reference"],
            "gflops": flops * new / 1e9,
            "sgemm_gflops": sgemm,
        }
        _log_throughput(log, model_name, row, summary[model_name], flops)
    return rows, summary


def _timed_loops(
    model_name: str, windows: Any, config: TrainConfig, epochs: int, repeats: int, loops: dict[str, Any]
) -> dict[str, list[dict[str, float]]]:
    """Each loop of `loops` (name -> None: ours, "reference": the textbook loop, else an older training module)
    timed `repeats` times, alternating, after one untimed epoch of each (the first model built in a process pays
    for allocator and kernel warm-up)."""

    def run(loop: Any, epochs: int, seed: int) -> dict[str, float]:
        if loop == "reference":
            return reference_loop(reference_model(model_name, windows, config, seed), windows, config, epochs, seed)
        return our_loop(model_name, windows, config, epochs, seed=seed, training=loop)

    for loop in loops.values():
        run(loop, 1, seed=0)
    timings: dict[str, list[dict[str, float]]] = {name: [] for name in loops}
    for repeat in range(repeats):
        for name, loop in loops.items():
            timings[name].append(run(loop, epochs, seed=repeat))
    return timings


def _log_throughput(log: Log, model_name: str, row: dict[str, Any], got: dict[str, Any], flops: float) -> None:
    new, previous = got["new"], got["previous"]
    against = "" if previous is None else f", previous {previous:.0f} (x{new / previous:.2f})"
    log(
        f"  {model_name}: training passes, windows/s: new {new:.0f}{against}, reference "
        f"{row['training']['reference']:.0f}; {flops / 1e6:.2f} MFLOP per window, {got['gflops']:.1f} GFLOP/s, "
        f"{100 * got['gflops'] / got['sgemm_gflops']:.0f} % of sgemm"
    )
    log(
        f"  {model_name}: whole loop {row['loop']['ours']:.0f} vs {row['loop']['reference']:.0f} windows/s "
        f"(ratio {row['loop']['ratio']:.2f}); training passes only {row['training']['ours']:.0f} vs "
        f"{row['training']['reference']:.0f} (ratio {row['training']['ratio']:.2f})"
    )


# --- experiments ----------------------------------------------------------------------------------------


def run_logged(log: Log, plan: Plan, label: str) -> tuple[dict[str, Any], float]:
    log(f"{label}: models {', '.join(plan.models)}; seeds {plan.seeds}; {plan.run_count()} runs")
    started = time.perf_counter()

    def progress(event: Any) -> None:
        if isinstance(event, StageStarted):
            w = event.windows
            log(
                f"  {event.stage.label}: {len(w.class_names)} classes, train/val/test "
                f"{len(w.x_train)}/{len(w.x_val)}/{len(w.x_test)}, {w.mode} split"
            )
        elif isinstance(event, RunFinished):
            run = event.run
            log(
                f"  {run['model']:<9} seed {run['seed']}{'' if run['stage'] == 'main' else ' [' + run['stage'] + ']'}: "
                f"accuracy {100 * run['accuracy']:.1f} %, F1 {100 * run['f1']:.1f} %, {run['epochs']} epochs "
                f"(best {run['best_epoch']}), {run['train_seconds']:.1f} s, {run['windows_per_second']:.0f} windows/s"
            )

    results = run_plan(plan, progress=progress)
    wall = time.perf_counter() - started
    log(f"  wall {wall:.0f} s")
    return results, wall


def cwru_plan(
    recordings: list, models: list[str], seeds: list[int], config: TrainConfig, mode: str = "time", **extra
) -> Plan:
    spec = DataSpec("cwru", loads=tuple(sorted({r.meta["load_hp"] for r in recordings})), folder=str(CWRU_DIR))
    settings = {**spec.to_dict(), "missing_files": list(getattr(recordings, "missing", []))}
    return Plan(
        data=recordings,
        models=models,
        seeds=seeds,
        config=config,
        device="cpu",
        data_settings=settings,
        keep_weights=False,
        windowing={"window": WINDOW, "mode": mode},
        workers=default_workers(config.threads),
        evaluations=extra,
    )


def merge(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """One results JSON from two experiments on the same data and seeds (A's comparisons span both)."""
    config = dict(first["config"], models=first["config"]["models"] + second["config"]["models"])
    return build_results(config, first["class_names"], first["runs"] + second["runs"], config["metric"])


def verdict_words(results: dict[str, Any]) -> str:
    words = [f"{c['b']} vs {c['a']}: {c['verdict']}" for c in results["comparisons"]]
    return "; ".join(words)


def models_section(
    log: Log,
    recordings: list,
    models: list[str],
    seeds: list[int],
    config: TrainConfig,
    saved: dict[str, Any],
    facts: dict[str, Any],
) -> None:
    by_split: dict[str, dict[str, Any]] = {}
    for tokens in ("time", "fft"):
        token_config = TrainConfig(**{**config.to_dict(), "model": {**config.to_dict()["model"], "tokens": tokens}})
        for mode in ("time", "random"):
            label = f"CWRU 0 HP, {tokens} tokens, {mode} split"
            first = [m for m in ("A", "B") if m in models]
            rest = [m for m in models if m not in first]
            results, wall = run_logged(
                log, cwru_plan(recordings, first, seeds, token_config, mode), label + " (A and B)"
            )
            if tokens == "time" and mode == "time":
                facts["A and B wall"] = wall
            if rest:
                more, _ = run_logged(
                    log, cwru_plan(recordings, rest, seeds, token_config, mode), label + " (the others)"
                )
                results = merge(results, more)
            saved[label] = results
            by_split.setdefault(tokens, {})[mode] = results
            log(f"{label}: mean ± sd over {len(seeds)} seeds")
            log(report.as_text(report.results_table(results)))
            log("verdict: " + verdict_words(results))
            log(results["verdict"])
            if tokens == "time" and mode == "time":
                facts["A accuracy"] = results["summary"]["A"]["accuracy"]["mean"] if "A" in results["summary"] else None
    for tokens, runs in by_split.items():
        if len(runs) == 2:
            block = windowing_comparison_block(
                {mode: runs[mode]["runs"] for mode in ("time", "random")}, list(runs["time"]["summary"]), seeds
            )
            log(f"Split comparison, {tokens} tokens: accuracy % (mean ± sd), leak = random - time in points (95 % CI)")
            log(report.as_text(windowing_table(block), index=True))


def evaluations_section(
    log: Log, seeds: list[int], config: TrainConfig, saved: dict[str, Any], recordings: list | None = None
) -> None:
    """Cross-load and noise on CWRU 0-3 HP (or on `recordings`: --smoke's synthetic loads)."""
    if recordings is None:
        recordings = load_cwru(CWRU_DIR, loads=(0, 1, 2, 3), allow_missing=True)
        log(f"CWRU 0-3 HP: {len(recordings)} files; not in the shared copy: {', '.join(recordings.missing) or 'none'}")
    plan = cwru_plan(
        recordings, ["A", "B", "CNN"], seeds, config, train_loads=[0], test_loads=[0, 1, 2, 3], snr_db=[-4, 0, 4, 8]
    )
    results, _ = run_logged(log, plan, "Cross-load (train 0 HP) and noise, time tokens, time split")
    saved["cross-load and noise"] = results
    log(report_text(results))


def synthetic_section(
    log: Log, config: TrainConfig, saved: dict[str, Any], facts: dict[str, Any], smoke: bool = False
) -> None:
    """The synthetic default set, A and B, 3 seeds: with `config` (the training defaults unless --quick), then
    with the Fault lab's default epochs (--smoke: SMOKE_SECONDS per class, one seed, `config` only)."""
    runs = [("defaults", config)]
    page_epochs = None if smoke else fault_lab_default_epochs()
    if page_epochs is not None and page_epochs != config.epochs:
        runs.append(("page", TrainConfig(**{**config.to_dict(), "epochs": page_epochs})))
    for kind, run_config in runs:
        started = time.perf_counter()
        # the default set: seed 0, 0 HP, 10 s per class
        recordings = synthetic_bearing_set(duration_s=SMOKE_SECONDS) if smoke else synthetic_bearing_set()
        plan = Plan(
            data=recordings,
            models=["A", "B"],
            seeds=[0] if smoke else [0, 1, 2],
            config=run_config,
            device="cpu",
            keep_weights=False,
            windowing={"window": WINDOW},
            workers=default_workers(run_config.threads),
            data_settings=DataSpec().to_dict(),
        )
        label = f"Synthetic default set (seed 0, 0 HP, 10 s per class), time split, {run_config.epochs} epochs"
        results, _ = run_logged(log, plan, label)
        wall = time.perf_counter() - started
        saved[f"synthetic, {run_config.epochs} epochs"] = results
        log(report.as_text(report.results_table(results)))
        log(f"synthetic, {run_config.epochs} epochs: generation and training {wall:.0f} s")
        if kind == "defaults":
            facts["synthetic wall"] = (run_config.epochs, wall)
        else:
            facts["synthetic wall, page epochs"] = (run_config.epochs, wall)


def fault_lab_default_epochs() -> int | None:
    """The Fault lab's default epochs (ui/lab/experiment.py), or None where the page cannot be imported."""
    try:
        import streamlit.logger

        streamlit.logger.set_log_level("error")  # no "no runtime" warnings from the page's cache decorators
        from ui.lab.experiment import DEFAULT_EPOCHS
    except Exception:  # the page's module needs streamlit; the benchmark does not
        return None
    return int(DEFAULT_EPOCHS)


def report_targets(log: Log, facts: dict[str, Any]) -> None:
    log("Targets")
    checks = []
    if facts.get("A accuracy") is not None:
        checks.append(
            ("A accuracy (time tokens, time split)", f"{100 * facts['A accuracy']:.1f} %", facts["A accuracy"] >= 0.98)
        )
    if "A and B wall" in facts:
        checks.append(
            (
                "A and B, time tokens, time split, wall",
                f"{facts['A and B wall']:.0f} s for {facts['seeds']} seed(s)",
                facts["A and B wall"] <= 300,
            )
        )
    if "throughput" in facts:
        ratios = {m: row["loop"]["ratio"] for m, row in facts["throughput"].items()}
        text = ", ".join(f"{m} {r:.2f}x" for m, r in ratios.items())
        checks.append(("our loop / reference loop", text, min(ratios.values()) >= 1.5))
    if "synthetic wall" in facts:
        epochs, wall = facts["synthetic wall"]
        checks.append(("synthetic default set, A and B, 3 seeds, wall", f"{wall:.0f} s at {epochs} epochs", wall <= 60))
    for name, value, met in checks:
        log(f"  {name}: {value} (target {TARGETS[name]}): {'met' if met else 'NOT met'}")
    if "synthetic wall, page epochs" in facts:
        epochs, wall = facts["synthetic wall, page epochs"]
        log(f"  (at the Fault lab's default of {epochs} epochs the synthetic A and B, 3 seeds, take {wall:.0f} s)")


def smoke_sections(
    log: Log, sections: list[str], seeds: list[int], config: TrainConfig, saved: dict, facts: dict
) -> dict[str, Any]:
    """Every asked section once, on a synthetic set of SMOKE_SECONDS per class in place of CWRU; the
    throughput summary (empty without that section)."""
    log(f"smoke: a synthetic set of {SMOKE_SECONDS} s per class stands in for CWRU; numbers mean nothing")
    recordings = synthetic_bearing_set(duration_s=SMOKE_SECONDS)
    if "models" in sections:
        models_section(log, recordings, ["A", "B"], seeds, config, saved, facts)
    if "evaluations" in sections:
        loads = synthetic_bearing_set(loads=(0, 1, 2, 3), duration_s=SMOKE_SECONDS)
        evaluations_section(log, seeds, config, saved, recordings=loads)
    speeds: dict[str, Any] = {}
    if "throughput" in sections:
        windows = make_windows(recordings, window=WINDOW)
        facts["throughput"], speeds = throughput(log, windows, config, 1, repeats=1, older=None)
    if "synthetic" in sections:
        synthetic_section(log, config, saved, facts, smoke=True)
    return speeds


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="the log (default: pe_lab_bench_train.txt in the temp folder)")
    parser.add_argument("--quick", action="store_true", help="one seed, 3 epochs, A / B / CNN: a smoke run")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated among {','.join(SECTIONS)}")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--threads", type=int, default=TrainConfig.threads, help="torch CPU threads for every loop")
    parser.add_argument("--throughput-epochs", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="seconds: every section on a tiny synthetic set")
    args = parser.parse_args(argv)
    args.sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose among {SECTIONS}")
    if args.out is None:  # a smoke run leaves a real run's output alone
        args.out = Path(tempfile.gettempdir()) / f"pe_lab_bench_train{'_smoke' if args.smoke else ''}.txt"
    return args


def full_sections(
    log: Log, args: argparse.Namespace, seeds: list[int], config: TrainConfig, models: list[str], saved, facts
) -> dict[str, Any]:
    """The sections of a real run (or --quick) on CWRU 0 HP, throughput on synthetic windows without it."""
    sections = args.sections
    cwru_sections = [s for s in sections if s in ("models", "evaluations", "throughput")]
    repeats = 1 if args.quick else 5
    speeds: dict[str, Any] = {}
    if cwru_sections and not CWRU_DIR.is_dir():
        log(f"SKIPPED {', '.join(cwru_sections)}: CWRU data not found at {CWRU_DIR} (see shared/data/README.md)")
        if "throughput" in cwru_sections:
            log("throughput on synthetic windows of the same shape instead (10 classes, 1024-sample windows)")
            windows = make_windows(synthetic_bearing_set(), window=WINDOW)
            epochs = args.throughput_epochs
            facts["throughput"], speeds = throughput(log, windows, config, epochs, repeats, load_older_loop())
        cwru_sections = []
    if cwru_sections:
        recordings = list(load_cwru(CWRU_DIR, loads=(0,)))
        log(f"CWRU 0 HP: {len(recordings)} files, drive end, normal resampled 48 -> 12 kHz, {WINDOW}-sample windows")
    if "models" in cwru_sections:
        models_section(log, recordings, models, seeds, config, saved, facts)
    if "evaluations" in cwru_sections:
        evaluations_section(log, seeds, config, saved)
    if "throughput" in cwru_sections:
        windows = make_windows(recordings, window=WINDOW)
        epochs = 1 if args.quick else args.throughput_epochs
        facts["throughput"], speeds = throughput(log, windows, config, epochs, repeats, load_older_loop())
    if "synthetic" in sections:
        synthetic_section(log, config, saved, facts)
    return speeds


def report_speeds(log: Log, speeds: dict[str, Any]) -> None:
    """The loop's targets against the older loop (when it ran) and the machine's sgemm."""
    for model, got in speeds.items():
        against = (
            ""
            if got["previous"] is None
            else f"new loop / previous {got['new'] / got['previous']:.2f}x (target >= 2): "
            f"{'met' if got['new'] >= 2 * got['previous'] else 'NOT met'}; "
        )
        log(
            f"  {model}: {against}model GFLOP/s {got['gflops']:.1f} is "
            f"{100 * got['gflops'] / got['sgemm_gflops']:.0f} % of sgemm (target >= 25 %): "
            f"{'met' if got['gflops'] >= 0.25 * got['sgemm_gflops'] else 'NOT met'}"
        )
    if any(got["previous"] is not None and got["new"] < 2 * got["previous"] for got in speeds.values()):
        log("  where a step's time goes, against the 2x budget: python bench/step_floor.py")


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    log = Log(args.out)
    seeds = [0] if args.quick or args.smoke else [int(s) for s in args.seeds.split(",")]
    shorter = {"epochs": 3} if args.quick else {"epochs": 1} if args.smoke else {}
    config = TrainConfig(threads=args.threads, **shorter)
    models = ["A", "B", "CNN"] if args.quick else ["A", "B"] if args.smoke else list(MODEL_NAMES)
    mode = " (quick)" if args.quick else " (smoke)" if args.smoke else ""
    log(
        f"PE Lab training benchmark: torch {torch.__version__}, {os.cpu_count()} CPU cores, {args.threads} torch "
        f"thread(s) per run, {default_workers(args.threads)} runs side by side in the experiments (as the CLI does); "
        f"sections {', '.join(args.sections)}{mode}"
    )
    log(f"defaults: {json.dumps({k: v for k, v in config.to_dict().items() if k != 'model'})}")
    log(f"model: {json.dumps(config.to_dict()['model'])}")
    saved: dict[str, Any] = {}
    facts: dict[str, Any] = {"seeds": len(seeds)}
    if args.smoke:
        speeds = smoke_sections(log, args.sections, seeds, config, saved, facts)
    else:
        speeds = full_sections(log, args, seeds, config, models, saved, facts)
    report_targets(log, facts)
    report_speeds(log, speeds)
    log(f"total wall {time.perf_counter() - log.started:.0f} s; output in {args.out}")
    json_path = args.out.with_suffix(".json")
    content = {"facts": facts, "results": saved, **({"throughput": speeds} if speeds else {})}
    json_path.write_text(json.dumps(content, indent=1, default=float) + "\n", encoding="utf-8")
    log(f"results JSON in {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
