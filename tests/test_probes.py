"""Inside the trained models: A cannot see token order (identical classes, logits within 1e-5 under any
permutation), a model trained on an order-only task loses accuracy when its tokens are shuffled while A does not,
the attention-vs-offset profile of a hand-built attention is recovered, and the position energy by hand."""

import numpy as np
import pytest
import torch

from core.lab.models import ModelConfig, build_model
from core.lab.probes.attention import attention_by_offset, attention_weights, profile_of
from core.lab.probes.order import order_summary, permutations, predict, reorder_patches
from core.lab.probes.position import cosine_matrix, energy_ratio, learned_table, similarity_by_offset
from core.lab.training import TrainConfig, train
from core.lab.vibration.windows import WindowSet

CONFIG = ModelConfig(patch=8, heads=2, layers=2)


def test_model_a_gives_the_same_classes_and_logits_under_any_permutation():
    torch.manual_seed(0)
    model = build_model("A", 64, 3, CONFIG)
    x = torch.randn(50, 64)
    order = torch.as_tensor(permutations(50, 8, seed=3))
    plain, shuffled = predict(model, x), predict(model, x, order)
    assert torch.equal(plain.argmax(1), shuffled.argmax(1))
    assert torch.allclose(plain, shuffled, atol=1e-5)
    # the same shuffle of the raw window, as the CNN gets it, is the same reordering of A's tokens
    assert torch.allclose(predict(model, reorder_patches(x, order)), shuffled, atol=1e-6)
    b = build_model("B", 64, 3, CONFIG)
    assert not torch.allclose(predict(b, x), predict(b, x, order), atol=1e-3)  # B sees positions


def order_only_windows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes made of the same two patches (a ramp and a flat stretch) in the two orders."""
    rng = np.random.default_rng(seed)
    ramp, flat = np.linspace(-1, 1, 32), np.zeros(32)
    y = rng.integers(0, 2, n)
    x = np.stack([np.concatenate([ramp, flat] if label else [flat, ramp]) for label in y]) + 0.05 * rng.standard_normal(
        (n, 64)
    )
    return x.astype(np.float32), y.astype(np.int64)


def test_a_model_that_needs_order_drops_when_shuffled_and_a_does_not():
    (xt, yt), (xv, yv), (xs, ys) = (order_only_windows(n, s) for n, s in ((400, 0), (100, 1), (200, 2)))
    windows = WindowSet(xt, yt, xv, yv, xs, ys, ["flat first", "ramp first"], 1000.0, 64, 64, "time", 0.0, 1.0)
    config = TrainConfig(model=ModelConfig(patch=32, heads=2, layers=1, d_model=16), epochs=30, patience=30)
    b = train(windows, "B", config, seed=0)["order_test"]
    a = train(windows, "A", config, seed=0)["order_test"]
    assert b["accuracy"] >= 0.95 and b["reversed"] <= 0.10  # two patches: reversing swaps the classes
    assert a["accuracy"] == a["shuffled"] == a["reversed"] and a["accuracy"] <= 0.65  # a bag of patches: chance


def test_the_order_summary_reads_the_drops_in_points():
    runs = [
        {"model": "B", "order_test": {"accuracy": a, "shuffled": s, "reversed": r}}
        for a, s, r in ((0.9, 0.5, 0.4), (0.8, 0.6, 0.4), (1.0, 0.4, 0.4))
    ]
    summary = order_summary(runs)["B"]
    assert summary["runs"] == 3 and summary["shuffled_drop"]["mean"] == pytest.approx(40.0)
    assert summary["reversed_drop"]["mean"] == pytest.approx(50.0) and summary["reversed_drop"]["sd"] == pytest.approx(
        10.0
    )
    low, high = summary["shuffled_drop"]["ci95"]
    assert low < 40 < high


def test_the_profile_of_a_hand_built_attention_with_a_positional_bias():
    tokens = 5
    q, k = np.meshgrid(np.arange(tokens), np.arange(tokens), indexing="ij")
    logits = -np.abs(k - q - 1.0)  # every query prefers the next key
    weights = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    profile = profile_of(weights[None, None])
    expected = [np.mean([weights[i, i + d] for i in range(tokens) if 0 <= i + d < tokens]) for d in range(-4, 5)]
    assert profile == pytest.approx(expected) and int(np.argmax(profile)) - (tokens - 1) == 1
    uniform = profile_of(np.full((2, tokens, tokens), 1 / tokens))
    assert uniform == pytest.approx([1 / tokens] * (2 * tokens - 1))


def test_attention_of_a_model_and_its_position_signal():
    torch.manual_seed(1)
    b = build_model("B", 64, 3, CONFIG)
    x = torch.randn(6, 64)
    weights = attention_weights(b, x)
    assert weights.shape == (2, 6, 2, 8, 8) and np.allclose(weights.sum(-1), 1, atol=1e-5)
    profile = attention_by_offset(b, x, batch=4)
    assert profile.shape == (2, 15) and profile == pytest.approx(np.stack([profile_of(w) for w in weights]), rel=1e-5)
    assert energy_ratio(build_model("A", 64, 3, CONFIG), x) is None
    ratio = energy_ratio(b, x)
    with torch.no_grad():
        tokens = b.embedding(b.tokenizer(x))
        expected = float(b.position_table.pow(2).sum(-1).mean() / tokens.pow(2).sum(-1).mean())
    assert ratio == pytest.approx(expected, rel=1e-5)
    learned = learned_table(build_model("B-learned", 64, 3, CONFIG))
    assert learned.shape == (8, 8) and learned_table(b) is None  # 8 tokens, d_model = patch 8
    assert np.allclose(np.diag(cosine_matrix(learned)), 1) and similarity_by_offset(learned)[0] == pytest.approx(1)


def test_b_at_pe_scale_0_is_b_nope_bit_for_bit_and_the_sweep_runs_from_the_cli(tmp_path):
    from core.lab.experiment.cli import command_line, main
    from core.lab.experiment.results import load_results
    from core.lab.vibration import make_windows, synthetic_bearing_set

    windows = make_windows(
        synthetic_bearing_set(seed=0, duration_s=1.0, classes=("normal", "IR007", "OR007")), window=128
    )
    config = TrainConfig(model=ModelConfig(patch=16, heads=2, layers=1, pe_scale=0.0), epochs=2)
    silent, plain = train(windows, "B", config, seed=4), train(windows, "B-noPE", config, seed=4)
    assert silent["history"] == plain["history"] and silent["predictions"] == plain["predictions"]
    out = tmp_path / "r.json"
    argv = "--duration 1.0 --models A,B,B-learned --seeds 0 --epochs 1 --window 128 --patch 16 --heads 2 --layers 1"
    assert main([*argv.split(), "--pe-scale-sweep", "0,0.5", "--quiet", "--out", str(out)]) == 0
    results = load_results(out)
    block = results["pe_scale_sweep"]
    assert block["scales"] == [0.0, 0.5] and block["models"] == ["B", "B-learned"]
    assert results["config"]["train"]["model"]["pe_scale"] == 0.0  # the experiment runs at the first scale
    command = command_line(results["config"])
    assert "--pe-scale-sweep 0,0.5" in command and "--pe-scale 0 " in command
