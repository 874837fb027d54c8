"""Another CPU's numeric path on this one: the environment `.ci/run`'s second pass runs `pytest -m any_machine` under.

    eval "$(python tools/numeric_path.py)"    # exports the assignments below, then run the tests

The same code rounds differently on another CPU, because numpy and torch pick their vector kernels by what the
CPU offers. This script prints the shell assignments that make this host take a narrower path:

    NPY_DISABLE_CPU_FEATURES  numpy's widest dispatched x86-64 level this host runs (X86_V4 on an AVX-512 host,
                              X86_V3 on an AVX2 one), and every dispatched target above it that is on (an
                              AVX512_ICL host also has AVX512_ICL turned off: numpy disables exactly the names
                              it is given). numpy ignores a name it does not dispatch and refuses a baseline one,
                              so only names this build dispatches and this host runs are printed.
    ATEN_CPU_CAPABILITY       one level below torch's (avx512 -> avx2, avx2 -> default)
    MKL_CBWR                  COMPATIBLE: MKL's vendor-neutral kernels
    PE_LAB_NUMERIC_PATH       what was turned off, for tests/test_numeric_path.py to check that it really is

The host is read with these variables removed, so running the script twice prints the same lines.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence

# numpy's x86-64 levels, narrowest first: the ones that can be turned off (X86_V2 and below are baseline)
X86_LEVELS = ("X86_V3", "X86_V4")
# torch's capabilities, narrowest first, by the name ATEN_CPU_CAPABILITY takes
ATEN_LEVELS = ("default", "avx2", "avx512")
OVERRIDES = ("NPY_DISABLE_CPU_FEATURES", "ATEN_CPU_CAPABILITY", "MKL_CBWR", "PE_LAB_NUMERIC_PATH")


def numpy_features_to_disable(features: Mapping[str, bool], dispatch: Sequence[str]) -> list[str]:
    """The widest x86-64 level among numpy's dispatched targets (`dispatch`, narrowest first, as numpy lists
    them) that this host runs (`features`), with every dispatched target after it that is also on; [] when
    none is on (a host at numpy's baseline: nothing narrower to take)."""
    levels_on = [name for name in dispatch if name in X86_LEVELS and features.get(name, False)]
    if not levels_on:
        return []
    widest = dispatch.index(max(levels_on, key=X86_LEVELS.index))
    return [name for name in dispatch[widest:] if features.get(name, False)]


def aten_capability_below(capability: str) -> str | None:
    """The ATEN_CPU_CAPABILITY value one level below torch's reported `capability` ("AVX2" -> "default"), or
    None when it is already the narrowest or not an x86 level."""
    name = capability.lower()
    if name not in ATEN_LEVELS or name == ATEN_LEVELS[0]:
        return None
    return ATEN_LEVELS[ATEN_LEVELS.index(name) - 1]


def assignments(features: Mapping[str, bool], dispatch: Sequence[str], capability: str) -> dict[str, str]:
    """The environment of the narrower path for a host with numpy's `features`/`dispatch` and torch's
    `capability` (PE_LAB_NUMERIC_PATH says what was turned off, e.g. "numpy:X86_V3 aten:default")."""
    disabled = numpy_features_to_disable(features, dispatch)
    below = aten_capability_below(capability)
    chosen = {"MKL_CBWR": "COMPATIBLE"}
    if disabled:
        chosen["NPY_DISABLE_CPU_FEATURES"] = " ".join(disabled)
    if below is not None:
        chosen["ATEN_CPU_CAPABILITY"] = below
    chosen["PE_LAB_NUMERIC_PATH"] = f"numpy:{','.join(disabled) or '-'} aten:{below or '-'}"
    return chosen


def host_assignments() -> dict[str, str]:
    """`assignments` for this host, read with the overrides removed from the environment first (numpy and
    torch read them when they load)."""
    for name in OVERRIDES:
        os.environ.pop(name, None)
    import torch
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return assignments(__cpu_features__, __cpu_dispatch__, torch.backends.cpu.get_cpu_capability())


def main() -> int:
    for name, value in host_assignments().items():
        print(f"export {name}={shlex.quote(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
