"""Shared by the tests that recompute stored numbers: bit for bit only on the machine that stored them.

A stored file carries its machine's fingerprint (core.fingerprint). `skip_unless_same_machine` lets a
bit-for-bit assertion run only where the fingerprint matches and otherwise skips with the reason, so the
suite passes on any x86-64 machine; each such test has a tolerance check beside it that runs everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from core.fingerprint import same_machine_or_reason


def skip_unless_same_machine(stored_fingerprint: Mapping[str, Any] | None, what: str) -> None:
    """Skip the calling test, naming what differs, unless `stored_fingerprint` is this machine's."""
    reason = same_machine_or_reason(stored_fingerprint, what)
    if reason is not None:
        pytest.skip(reason)
