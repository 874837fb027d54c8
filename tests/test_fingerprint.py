"""The machine fingerprint separates machines that round differently, and a foreign one makes the bit-for-bit
tests skip with the reason instead of failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

from core.fingerprint import (
    FINGERPRINT_KEYS,
    cpu_flags,
    fingerprint_differences,
    machine_fingerprint,
    probe_digest,
)
from tests import test_fixtures
from tests.apptest_utils import ROOT
from tests.data import make_fixtures
from tests.reproducibility import skip_unless_same_machine

sys.path.insert(0, str(ROOT / "tools"))
import numeric_path  # noqa: E402


def test_the_fingerprint_names_torch_the_cpu_and_a_repeatable_probe():
    here = machine_fingerprint()
    assert tuple(here) == FINGERPRINT_KEYS
    assert here["torch"] == torch.__version__
    assert here["probe"] == f"v1:{probe_digest()}" and len(here["probe"]) == 3 + 64
    assert fingerprint_differences(here, here) == []


def test_cpu_flags_are_read_sorted_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: sse2 avx512f avx2 fpu\n\nprocessor\t: 1\nflags\t\t: other\n")
    assert cpu_flags(cpuinfo) == "avx2 avx512f fpu sse2"
    assert cpu_flags(tmp_path / "missing") == ""


def test_a_foreign_probe_or_flag_set_is_named_even_when_torch_and_the_capability_agree():
    here = machine_fingerprint()
    foreign = {**here, "probe": "v1:" + "0" * 64, "cpu_flags": here["cpu_flags"] + " made_up_flag"}
    differences = fingerprint_differences(foreign, here)
    assert differences[0] == "cpu_flags (1 only there, 0 only here)"
    assert differences[1].startswith("probe ('v1:000")
    legacy = {key: here[key] for key in ("torch", "machine", "cpu_capability", "cpu_flags")}
    assert fingerprint_differences(legacy, here) == ["probe (not stored)"]


@pytest.mark.skipif(not torch.backends.mkl.is_available(), reason="torch here is built without MKL")
@pytest.mark.slow
def test_the_probe_tells_apart_two_kernel_paths_that_report_the_same_capability():
    # MKL's conditional-reproducibility switch picks other product kernels while torch still reports the same
    # capability: what separates an Intel from an AMD machine, which the capability alone did not.
    code = "import json; from core.fingerprint import machine_fingerprint as f; print(json.dumps(f()))"
    env = {key: value for key, value in os.environ.items() if key != "MKL_CBWR"}
    if "MKL_CBWR" not in os.environ:  # the child takes the other path from this process's
        env["MKL_CBWR"] = "COMPATIBLE"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    other, here = json.loads(out.stdout), machine_fingerprint()
    assert other["cpu_capability"] == here["cpu_capability"]
    if other["probe"] == here["probe"]:  # MKL already runs its compatible kernels here: nothing to tell apart
        pytest.skip("MKL's default and compatible kernels give the same bits on this machine")
    assert other["probe"] != here["probe"]


def test_a_stored_foreign_fingerprint_makes_the_bit_for_bit_fixture_test_skip_with_the_reason(tmp_path, monkeypatch):
    name = next(iter(make_fixtures.PLANS))
    fixture = json.loads(make_fixtures.fixture_path(name).read_text(encoding="utf-8"))
    fixture["environment"] = {**machine_fingerprint(), "probe": "v1:" + "f" * 64}
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(fixture), encoding="utf-8")
    monkeypatch.setattr(make_fixtures, "fixture_path", lambda _: foreign)
    with pytest.raises(pytest.skip.Exception, match=r"another machine: its fingerprint differs in probe \('v1:fff"):
        test_fixtures.test_a_fixed_plan_gives_the_stored_json_bit_for_bit(name)


def test_a_study_without_a_fingerprint_is_never_compared_bit_for_bit():
    with pytest.raises(pytest.skip.Exception, match="differs in torch \\(not stored\\)"):
        skip_unless_same_machine(None, "an old study")
    skip_unless_same_machine(machine_fingerprint(), "this machine's file")  # no skip: returns


def child_fingerprint(env: dict[str, str]) -> dict[str, str]:
    code = "import json; from core.fingerprint import machine_fingerprint as f; print(json.dumps(f()))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif("NPY_DISABLE_CPU_FEATURES" in os.environ, reason="numpy runs a narrower path here already")
def test_numpy_with_its_widest_level_turned_off_is_another_machine_to_the_fingerprint():
    # numpy's sums run other kernels without the host's widest level (what rounded a fixture's normalisation
    # mean differently on an AVX2 machine), while torch's capability and probe stay the same
    turned_off = numeric_path.numpy_features_to_disable(__cpu_features__, __cpu_dispatch__)  # in dispatch order
    if not turned_off:
        pytest.skip("numpy runs no dispatched level on this host: none to turn off")
    widest = " ".join(sorted(turned_off))  # as the fingerprint records them (AVX-512 hosts turn off several)
    here = machine_fingerprint()
    other = child_fingerprint({**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(turned_off)})
    assert other["numpy_disabled"] == widest and here["numpy_disabled"] == ""
    assert fingerprint_differences(here, other) == [f"numpy_disabled ('none' there, {widest!r} here)"]
    older = {key: value for key, value in here.items() if key != "numpy_disabled"}  # stored before the key
    assert fingerprint_differences(older, here) == [] and fingerprint_differences(older, other) != []
    # a name numpy does not dispatch changes nothing and is left out
    assert child_fingerprint({**os.environ, "NPY_DISABLE_CPU_FEATURES": "AVX2"})["numpy_disabled"] == ""
