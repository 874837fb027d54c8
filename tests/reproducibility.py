"""Shared by the tests that recompute stored numbers: bit for bit only on the machine that stored them.

A stored file carries its machine's fingerprint (core.fingerprint). `skip_unless_same_machine` lets a
bit-for-bit assertion run only where the fingerprint matches and otherwise skips with the reason, so the
suite passes on any x86-64 machine; each such test has a tolerance check beside it that runs everywhere
(`assert_same_json_within`: every float within a tolerance, everything else exactly), marked
`@pytest.mark.any_machine` so that `.ci/run` runs it again on a narrower numeric path (tools/numeric_path.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from core.fingerprint import same_machine_or_reason
from tests.data.make_fixtures import first_difference

# Recomputing a stored statistic (a mean, a normalisation, an interval) from the same inputs on another CPU sums
# in another order: the last digits move (the 17th of a normalisation mean between AVX-512 and AVX2), nothing more.
RECOMPUTED_RELATIVE = 1e-9
# A value read off a likelihood's maximum (the REML fit of core.lab.stats.variance_components, found by golden
# section) is fixed only to about the square root of machine epsilon in its parameter: near the top the
# likelihood is flat, so which of two nearly equal points wins turns on the last digits, and an interval built on
# the fit moves by about 1e-9 relative between AVX-512 and AVX2 (seen on one CWRU interval). Ten times sqrt(eps).
FITTED_RELATIVE = 1e-7


def skip_unless_same_machine(stored_fingerprint: Mapping[str, Any] | None, what: str) -> None:
    """Skip the calling test, naming what differs, unless `stored_fingerprint` is this machine's."""
    reason = same_machine_or_reason(stored_fingerprint, what)
    if reason is not None:
        pytest.skip(reason)


def assert_same_json_within(expected: Any, actual: Any, where: str, relative: float = RECOMPUTED_RELATIVE) -> None:
    """Fail, naming the first place, unless two JSON values have the same structure, strings, integers and
    booleans, and every float within `relative` (relative, and absolute near zero)."""
    difference = first_difference(expected, actual, where, float_tolerance=relative)
    assert difference is None, f"{where} differs: {difference}"
