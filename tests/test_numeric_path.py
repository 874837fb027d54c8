"""tools/numeric_path.py picks a narrower numeric path for either kind of host, and `.ci/run`'s second pass
really runs on it: numpy's widest level off, torch one capability lower, and a fingerprint that tells the
bit-for-bit tests to skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

from core.fingerprint import fingerprint_differences, machine_fingerprint
from tests import test_fixtures
from tests.apptest_utils import ROOT
from tests.data import make_fixtures

sys.path.insert(0, str(ROOT / "tools"))
import numeric_path  # noqa: E402

DISPATCH = ["X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"]  # numpy 2.4's x86 targets, narrowest first
BASELINE = {"SSE42": True, "X86_V2": True}
AVX2_HOST = {**BASELINE, "AVX2": True, "X86_V3": True, "X86_V4": False, "AVX512_ICL": False, "AVX512_SPR": False}
SKYLAKE_X_HOST = {**AVX2_HOST, "AVX512F": True, "X86_V4": True}
ICE_LAKE_HOST = {**SKYLAKE_X_HOST, "AVX512_ICL": True}


def test_an_avx2_host_turns_off_numpys_x86_v3_and_runs_torchs_default_kernels():
    assert numeric_path.assignments(AVX2_HOST, DISPATCH, "AVX2") == {
        "MKL_CBWR": "COMPATIBLE",
        "NPY_DISABLE_CPU_FEATURES": "X86_V3",
        "ATEN_CPU_CAPABILITY": "default",
        "PE_LAB_NUMERIC_PATH": "numpy:X86_V3 aten:default",
    }


def test_an_avx512_host_turns_off_x86_v4_and_every_wider_target_it_runs_and_runs_torchs_avx2_kernels():
    assert numeric_path.assignments(SKYLAKE_X_HOST, DISPATCH, "AVX512") == {
        "MKL_CBWR": "COMPATIBLE",
        "NPY_DISABLE_CPU_FEATURES": "X86_V4",
        "ATEN_CPU_CAPABILITY": "avx2",
        "PE_LAB_NUMERIC_PATH": "numpy:X86_V4 aten:avx2",
    }
    # numpy turns off exactly the names it is given: AVX512_ICL's kernels would still run with X86_V4 off
    assert numeric_path.numpy_features_to_disable(ICE_LAKE_HOST, DISPATCH) == ["X86_V4", "AVX512_ICL"]


def test_a_host_at_the_baseline_has_nothing_narrower_but_mkls_compatible_kernels():
    features = {**BASELINE, "X86_V3": False, "X86_V4": False}
    assert numeric_path.assignments(features, DISPATCH, "DEFAULT") == {
        "MKL_CBWR": "COMPATIBLE",
        "PE_LAB_NUMERIC_PATH": "numpy:- aten:-",
    }
    assert numeric_path.aten_capability_below("ZVECTOR") is None  # not an x86 level: left alone


def host_path_and_fingerprint() -> tuple[dict[str, str], dict[str, str]]:
    """What tools/numeric_path.py prints for this host, and the host's own fingerprint (a child process with
    the overrides removed before numpy and torch load)."""
    code = (
        "import json, sys; sys.path.insert(0, 'tools'); import numeric_path; "
        "chosen = numeric_path.host_assignments(); "
        "from core.fingerprint import machine_fingerprint; "
        "print(json.dumps([chosen, machine_fingerprint()]))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    chosen, fingerprint = json.loads(out.stdout)
    return chosen, fingerprint


@pytest.mark.any_machine
def test_the_second_pass_runs_the_narrower_path_and_the_bit_for_bit_tests_skip_there(tmp_path, monkeypatch):
    if "PE_LAB_NUMERIC_PATH" not in os.environ:
        pytest.skip("not on the narrower numeric path (.ci/run's second pass sets it: tools/numeric_path.py)")
    chosen, host_fingerprint = host_path_and_fingerprint()
    for name in ("NPY_DISABLE_CPU_FEATURES", "ATEN_CPU_CAPABILITY", "MKL_CBWR", "PE_LAB_NUMERIC_PATH"):
        assert os.environ.get(name) == chosen.get(name), name
    if chosen["PE_LAB_NUMERIC_PATH"] == "numpy:- aten:-":
        pytest.skip("this host runs numpy's and torch's narrowest kernels already: only MKL's path changed")
    turned_off = chosen.get("NPY_DISABLE_CPU_FEATURES", "").split()
    assert set(turned_off) <= set(__cpu_dispatch__)
    assert not any(__cpu_features__[name] for name in turned_off), {n: __cpu_features__[n] for n in turned_off}
    assert torch.backends.cpu.get_cpu_capability().lower() == chosen.get("ATEN_CPU_CAPABILITY", "default")
    differences = fingerprint_differences(host_fingerprint, machine_fingerprint())
    assert ("numpy_disabled" in " ".join(differences)) == bool(turned_off), differences
    assert ("cpu_capability" in " ".join(differences)) == ("ATEN_CPU_CAPABILITY" in chosen), differences
    # a fixture stored on this very host skips its bit-for-bit test here, naming what differs
    name = next(iter(make_fixtures.PLANS))
    fixture = json.loads(make_fixtures.fixture_path(name).read_text(encoding="utf-8"))
    fixture["environment"] = host_fingerprint
    (tmp_path / "host.json").write_text(json.dumps(fixture), encoding="utf-8")
    monkeypatch.setattr(make_fixtures, "fixture_path", lambda _: tmp_path / "host.json")
    with pytest.raises(pytest.skip.Exception, match=f"its fingerprint differs in {differences[0][:14]}"):
        test_fixtures.test_a_fixed_plan_gives_the_stored_json_bit_for_bit(name)


def test_ci_runs_the_readme_command_then_the_any_machine_tests_on_the_narrower_path():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    readme = "python -m pip install -r requirements.txt -r requirements-dev.txt && python -m pytest"
    assert readme in (ROOT / "README.md").read_text() and lines.count(readme) == 1
    after = lines[lines.index(readme) + 1 :]
    assert after[0].startswith("status=$?") and after[1] == '[ "$status" -eq 0 ] || exit "$status"'
    path = next(i for i, line in enumerate(after) if "python tools/numeric_path.py" in line)
    assert after[path + 1] == 'eval "$assignments"' and "set -euo pipefail" in lines  # a failure stops the run
    assert "python -m pytest -m any_machine" in after[path + 2 :]
