"""Which machine a stored number was computed on, precisely enough to decide whether it can be recomputed bit for bit.

Floating-point results of the same code differ between machines that report the same torch version and the
same CPU capability: torch's matrix products go through MKL, which picks its kernels by CPU vendor and model
(an Intel and an AMD machine, both "AVX512", round the same training step differently). So a file that stores
numbers meant to be recomputed exactly also stores `machine_fingerprint()`:

    torch           torch's version
    machine         the architecture (platform.machine())
    cpu_capability  the vector instruction set torch's own kernels use
    cpu_flags       every flag the kernel reports for the CPU, sorted
    probe           SHA-256 of the exact output bits of a tiny fixed computation (products, softmax, layer norm,
                    a backward pass) run on one thread: the kernels' actual rounding, whatever chose them
    numpy_disabled  numpy's dispatched targets turned off by NPY_DISABLE_CPU_FEATURES (its sums then run
                    narrower kernels: another machine's rounding on this one), sorted; "" when none. A file
                    written before this key existed was written with none, so a missing one reads as ""

`fingerprint_differences(stored, here)` names what differs; a bit-for-bit comparison runs only where nothing
does. The probe's code is frozen: changing it would make every stored fingerprint foreign, so a new probe
gets a new PROBE_VERSION and files keep the one they were made with.
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

PROBE_VERSION = 1
FINGERPRINT_KEYS = ("torch", "machine", "cpu_capability", "cpu_flags", "probe", "numpy_disabled")
# what a key added after files were stored means when a stored fingerprint lacks it
MISSING_MEANS = {"numpy_disabled": ""}


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The first CPU's flags as the kernel lists them, sorted and space-separated ("" where unreadable)."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(("flags", "Features")):  # x86 says flags, Arm says Features
                return " ".join(sorted(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return ""


def probe_digest() -> str:
    """SHA-256 of a small attention-like forward and backward pass with fixed inputs, on one torch thread.

    The shapes are those of the lab's models (batch 64, 32 tokens, width 32, three projections), so the probe
    exercises the same product kernels a training step does."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the thread count can change how a product is split, so fix it
    try:
        generator = torch.Generator().manual_seed(20261201)
        tokens = torch.randn(64, 32, 32, generator=generator, dtype=torch.float32)  # (batch, tokens, width)
        weight = torch.randn(32, 96, generator=generator, dtype=torch.float32).requires_grad_(True)
        query, key, value = (tokens @ weight).split(32, dim=-1)  # (batch, tokens, width) each
        scores = torch.softmax(query @ key.transpose(1, 2) / 32**0.5, dim=-1)  # (batch, tokens, tokens)
        mixed = torch.nn.functional.layer_norm(scores @ value, (32,))
        loss = mixed.pow(2).mean() + torch.exp2(mixed).mean()
        loss.backward()
        digest = hashlib.sha256(f"probe v{PROBE_VERSION}".encode())
        digest.update(mixed.detach().numpy().tobytes())
        digest.update(weight.grad.numpy().tobytes())
        return digest.hexdigest()
    finally:
        torch.set_num_threads(threads)


def numpy_disabled(environ: Mapping[str, str] | None = None) -> str:
    """The names in NPY_DISABLE_CPU_FEATURES that numpy dispatches and reports off, sorted and space-separated
    ("" when none). numpy ignores the names it does not dispatch, so those change nothing and are left out; a
    name this CPU lacks anyway is kept (the fingerprint then differs where the bits may not: a skip, never a
    false match)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    environ = os.environ if environ is None else environ
    asked = set(environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split())
    return " ".join(sorted(name for name in asked if name in __cpu_dispatch__ and not __cpu_features__.get(name)))


_CACHED: dict[str, str] = {}


def machine_fingerprint() -> dict[str, str]:
    """This machine's fingerprint (FINGERPRINT_KEYS); computed once per process."""
    if not _CACHED:
        _CACHED.update(
            torch=torch.__version__,
            machine=platform.machine(),
            cpu_capability=torch.backends.cpu.get_cpu_capability(),
            cpu_flags=cpu_flags(),
            probe=f"v{PROBE_VERSION}:{probe_digest()}",
            numpy_disabled=numpy_disabled(),
        )
    return dict(_CACHED)


def fingerprint_differences(stored: Mapping[str, Any] | None, here: Mapping[str, Any] | None = None) -> list[str]:
    """The fingerprint keys whose values differ between a stored fingerprint and this machine's, in words (a
    missing or partial stored fingerprint differs in every key it lacks)."""
    here = machine_fingerprint() if here is None else here
    stored = stored if isinstance(stored, Mapping) else {}
    differences = []
    for key in FINGERPRINT_KEYS:
        if stored.get(key, MISSING_MEANS.get(key)) == here.get(key):
            continue
        if key in MISSING_MEANS:
            there = stored.get(key, MISSING_MEANS[key])
            differences.append(f"{key} ({there or 'none'!r} there, {here.get(key) or 'none'!r} here)")
        elif key == "cpu_flags" and isinstance(stored.get(key), str):
            mine, theirs = set(str(here.get(key, "")).split()), set(stored[key].split())
            differences.append(f"cpu_flags ({len(theirs - mine)} only there, {len(mine - theirs)} only here)")
        elif key in stored:
            differences.append(f"{key} ({str(stored[key])[:24]!r} there, {str(here.get(key))[:24]!r} here)")
        else:
            differences.append(f"{key} (not stored)")
    return differences


def same_machine_or_reason(stored: Mapping[str, Any] | None, what: str) -> str | None:
    """None when `stored` matches this machine; else one sentence saying why `what` cannot be compared bit for
    bit here (for a test's skip)."""
    differences = fingerprint_differences(stored)
    if not differences:
        return None
    return (
        f"{what} was computed on another machine: its fingerprint differs in {', '.join(differences)}; "
        "floating-point sums round differently there, so only the tolerance check applies"
    )
