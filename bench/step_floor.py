"""Where one training step's time goes, against the budget that would double the previous loop's speed.

    python bench/step_floor.py                 # A and B, one thread, batch 64 (about a minute)
    python bench/step_floor.py --compile       # also torch.compile of the same step (minutes: it compiles)
    python bench/step_floor.py --smoke         # seconds: every measurement with 2 calls a block (numbers rough)

bench/train.py measures whole training loops; this script explains the gap to issue 15's target (new ≥ 2×
previous windows/s) from the inside of one step. For model A and B, on one thread at batch 64:

1. the step of the new model (core.lab.models) and of the previous one (bench/train.py's OLDER_LOOP_COMMIT,
   checked out with `git worktree add`; --smoke skips it, as it needs git history), each timed alone: forward,
   cross-entropy, backward, the fused AdamW step; the budget is half the previous step;
2. the step recorded at the ATen level (a TorchDispatchMode): every matrix product (mm, addmm, bmm) with its
   exact shapes and strides, and how many other tensor operations the step dispatches;
3. lower bounds for three parts of the step, each timed on its own with warm caches:
   - the matrix products alone, on fresh tensors of the recorded shapes and layouts, each product repeated on
     its own (also reported: all of them replayed in order, where most inputs are out of cache as in a step);
   - the step's dropout bits: DropoutStream.mask for every mask the step draws;
   - eager dispatch: the other operations' count × the time of the cheapest tensor op (a one-element add);
4. what the budget leaves, after those three, for all the elementwise work, softmaxes, layer norms and the
   optimizer (each a separate pass over memory in eager PyTorch).

With --compile, the same step written as one function of the weights and precomputed masks (no graph break)
is compiled by torch.compile (inductor's default mode and max-autotune-no-cudagraphs) and timed against
its eager run: the route the issue names for fusing the elementwise work.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.lab.encoder_kernels import DropoutStream  # noqa: E402
from core.lab.models import ModelConfig, build_model  # noqa: E402
from core.lab.training import TrainConfig, make_optimizer  # noqa: E402

BATCH, WINDOW, CLASSES = 64, 1024, 10
PRODUCTS = {"mm", "addmm", "bmm"}


def timed(work: Callable[[], Any], repeats: int, warm_up: int = 10) -> float:
    """Seconds per call: the median of five blocks of `repeats` calls, after `warm_up` untimed ones."""
    for _ in range(warm_up):
        work()
    blocks = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeats):
            work()
        blocks.append((time.perf_counter() - started) / repeats)
    return statistics.median(blocks)


def step_function(model_name: str, models: Any, stream_type: Any) -> Callable[[], None]:
    """One training step of `model_name` built by the module `models`, on a fixed batch of random windows."""
    torch.manual_seed(0)
    model = models.build_model(model_name, WINDOW, CLASSES, models.ModelConfig())
    model.dropout_stream = stream_type(0)
    model.train()
    optimizer = make_optimizer(model, TrainConfig(), torch.device("cpu"))
    x, y = torch.randn(BATCH, WINDOW), torch.randint(0, CLASSES, (BATCH,))

    def step() -> None:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss.item()

    return step


class Recorder(TorchDispatchMode):
    """Every matrix product's op and argument layouts, and a count of all other ops, of what runs under it."""

    def __init__(self) -> None:
        super().__init__()
        self.products: list[tuple[Any, list[Any]]] = []
        self.others: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in PRODUCTS:
            layouts = [(a.shape, a.stride()) if isinstance(a, torch.Tensor) else a for a in args]
            self.products.append((func, layouts))
        else:
            self.others[name] += 1
        return func(*args, **(kwargs or {}))


def replay_products(products: list[tuple[Any, list[Any]]]) -> Callable[[], None]:
    """The recorded products on fresh tensors of the same shapes and strides, one after another."""
    calls = []
    for func, layouts in products:
        args = [torch.empty_strided(*layout).normal_() if isinstance(layout, tuple) else layout for layout in layouts]
        calls.append((func, args))

    def run() -> None:
        for func, args in calls:
            func(*args)

    return run


def dropout_bits(model_name: str) -> Callable[[], None]:
    """Every mask one training step of the new model draws, from a DropoutStream, without the model."""
    shapes: list[tuple[tuple[int, ...], float]] = []
    original = DropoutStream.mask

    def recording(self, shape, p):
        shapes.append((tuple(shape), p))
        return original(self, shape, p)

    DropoutStream.mask = recording
    try:
        step_function(model_name, sys.modules["core.lab.models"], DropoutStream)()
    finally:
        DropoutStream.mask = original
    stream = DropoutStream(1)

    def run() -> None:
        for shape, p in shapes:
            stream.mask(shape, p)

    return run


def cheapest_op() -> float:
    """Seconds to dispatch one tiny tensor op in eager PyTorch (a one-element add), a floor per op."""
    a, b = torch.ones(1), torch.ones(1)
    return timed(lambda: torch.add(a, b), repeats=20_000)


def functional_step(model_name: str, compile_mode: str | None) -> Callable[[], None]:
    """The new model's training step as one function of the input and precomputed dropout masks, so that
    torch.compile sees the whole forward without a graph break (the masks come from numpy otherwise)."""
    torch.manual_seed(0)
    model = build_model(model_name, WINDOW, CLASSES, ModelConfig())
    model.train()
    optimizer = make_optimizer(model, TrainConfig(), torch.device("cpu"))
    heads = model.encoder.layers[0].self_attn.num_heads
    x, y = torch.randn(BATCH, WINDOW), torch.randint(0, CLASSES, (BATCH,))
    tokens = model.tokenizer(x)  # (batch, tokens, patch)
    n_tokens, width = tokens.shape[1], model.head.in_features
    ff = model.encoder.layers[0].linear1.out_features
    per_layer = [(BATCH, heads, n_tokens, n_tokens), (BATCH, n_tokens, width), (BATCH, n_tokens, ff)]
    per_layer.append((BATCH, n_tokens, width))
    shapes = [(BATCH, n_tokens, width)] + per_layer * len(model.encoder.layers)
    masks = [(torch.rand(shape) >= 0.1).float() / 0.9 for shape in shapes]

    def loss_of(tokens: torch.Tensor, y: torch.Tensor, masks: list[torch.Tensor]) -> torch.Tensor:
        h = model.embedding(tokens) if model.embedding is not None else tokens  # (batch, tokens, width)
        if model.position is not None:
            h = h + model.position_table
        h = h * masks[0]
        for index, layer in enumerate(model.encoder.layers):
            attention_mask, out_mask, inner_mask, ff_mask = masks[1 + 4 * index : 5 + 4 * index]
            attention = layer.self_attn
            batch, n, d = h.shape
            qkv = F.linear(h, attention.in_proj_weight, attention.in_proj_bias)  # (batch, tokens, 3 d)
            q, k, v = qkv.view(batch, n, 3, heads, d // heads).permute(2, 0, 3, 1, 4)  # (batch, heads, tokens, d_h)
            weights = torch.softmax((q * (d // heads) ** -0.5) @ k.transpose(-1, -2), dim=-1) * attention_mask
            mixed = (weights @ v).transpose(1, 2).reshape(batch, n, d)  # (batch, tokens, d)
            h = layer.norm1(h + attention.out_proj(mixed) * out_mask)
            inner = torch.relu(layer.linear1(h)) * inner_mask  # (batch, tokens, ff)
            h = layer.norm2(h + layer.linear2(inner) * ff_mask)
        return F.cross_entropy(model.head(h.mean(dim=1)), y)

    function = loss_of if compile_mode is None else torch.compile(loss_of, fullgraph=True, mode=compile_mode)

    def step() -> None:
        loss = function(tokens, y, masks)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss.item()

    return step


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compile", action="store_true", help="also time torch.compile of the step (slow)")
    parser.add_argument("--smoke", action="store_true", help="seconds: 2 calls a block instead of 40")
    args = parser.parse_args(argv)
    repeats = 2 if args.smoke else 40
    torch.set_num_threads(1)
    from bench.train import SKIPPED_IN_SMOKE, load_older_loop

    previous_models = None if args.smoke else load_older_loop().models
    dispatch = cheapest_op()
    print(f"one thread, batch {BATCH}, {WINDOW}-sample windows; cheapest eager op {1e6 * dispatch:.1f} µs")
    if previous_models is None:
        print(f"{SKIPPED_IN_SMOKE}; the new step stands in for the previous one")
    for model_name in ("A", "B"):
        new_models = sys.modules["core.lab.models"]
        new = timed(step_function(model_name, new_models, DropoutStream), repeats=repeats)
        older = (previous_models, previous_models.DropoutStream) if previous_models else (new_models, DropoutStream)
        previous = timed(step_function(model_name, *older), repeats=repeats)
        budget = previous / 2
        recorder = Recorder()
        step = step_function(model_name, sys.modules["core.lab.models"], DropoutStream)
        step()
        with recorder:
            step()
        in_order = timed(replay_products(recorder.products), repeats=repeats)
        products = sum(timed(replay_products([product]), repeats=repeats) for product in recorder.products)
        bits = timed(dropout_bits(model_name), repeats=repeats)
        others = sum(recorder.others.values())
        left = budget - products - bits - others * dispatch
        print(
            f"{model_name}: step new {1e3 * new:.2f} ms, previous {1e3 * previous:.2f} ms (x{previous / new:.2f}); "
            f"the 2x target allows {1e3 * budget:.2f} ms a step"
        )
        print(
            f"  lower bounds: {len(recorder.products)} matrix products {1e3 * products:.2f} ms (each repeated "
            f"on its own; {1e3 * in_order:.2f} ms replayed in order, inputs mostly out of cache as in a step), "
            f"dropout bits {1e3 * bits:.2f} ms, dispatch of {others} other ops >= {1e3 * others * dispatch:.2f} ms"
        )
        print(
            f"  left for every elementwise pass, softmax, layer norm and the optimizer: {1e3 * left:.2f} ms "
            f"(the new step spends at most {1e3 * (new - products - bits):.2f} ms on them and on dispatch)"
        )
        if args.compile and model_name == "A":
            eager = timed(functional_step(model_name, None), repeats=repeats)
            print(f"  the step as one function, masks precomputed: eager {1e3 * eager:.2f} ms", flush=True)
            for mode in ("default", "max-autotune-no-cudagraphs"):
                compiled = timed(functional_step(model_name, mode), repeats=repeats)
                print(f"  torch.compile (mode {mode}): {1e3 * compiled:.2f} ms", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
