"""ui.garbage: a full collection at the start of every full run, whose long-lived survivors are frozen once new
modules arrive, so later collections skip them; garbage made after a freeze is still collected."""

from __future__ import annotations

import gc
import sys
import types
import weakref

import pytest

from ui import garbage


class _Node:
    pass


@pytest.fixture
def fresh_gc(monkeypatch):
    """Each test starts unfrozen with no freeze recorded, and leaves the process as it found it."""
    gc.unfreeze()
    monkeypatch.setattr(garbage, "_modules_at_last_freeze", 0)
    yield
    gc.unfreeze()


def _import_fake_modules(monkeypatch, count: int) -> None:
    for index in range(count):
        monkeypatch.setitem(sys.modules, f"_pe_lab_fake_module_{index}_{id(monkeypatch)}", types.ModuleType("fake"))


def test_the_first_run_freezes_what_survives_and_a_run_without_new_modules_does_not(fresh_gc):
    assert gc.get_freeze_count() == 0
    assert garbage.collect_garbage() is True
    frozen = gc.get_freeze_count()
    assert frozen > 1000  # the modules, classes and functions of this process
    assert garbage.collect_garbage() is False
    assert gc.get_freeze_count() == frozen


def test_new_modules_past_the_threshold_freeze_again_and_fewer_do_not(fresh_gc, monkeypatch):
    garbage.collect_garbage()
    _import_fake_modules(monkeypatch, garbage.NEW_MODULES_TO_FREEZE - 1)
    assert garbage.collect_garbage() is False
    _import_fake_modules(monkeypatch, garbage.NEW_MODULES_TO_FREEZE)  # the first batch again, plus one new name
    assert garbage.collect_garbage() is True


def test_a_cycle_made_after_the_freeze_is_still_collected(fresh_gc):
    garbage.collect_garbage()
    node = _Node()
    node.me = node  # a reference cycle: reference counting alone never frees it
    gone = weakref.ref(node)
    del node
    assert gone() is not None
    garbage.collect_garbage()
    assert gone() is None


def test_a_frozen_collection_walks_far_fewer_objects(fresh_gc):
    before = len(gc.get_objects())
    garbage.collect_garbage()
    assert len(gc.get_objects()) < before / 10  # get_objects lists only what collections still walk


def _resident_mb() -> float:
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) / 1024


@pytest.mark.skipif(garbage._malloc_trim is None or not sys.platform.startswith("linux"), reason="needs glibc")
def test_memory_freed_inside_the_heap_goes_back_to_the_system():
    chunks = [bytearray(60_000) for _ in range(2_000)]  # 120 MB below the mmap threshold: from the heap
    pin = bytearray(60_000)  # a live block after them, so the heap's top cannot simply shrink
    before = _resident_mb()
    del chunks
    assert _resident_mb() > before - 20  # freed, yet still resident: the allocator keeps the pages
    assert garbage.release_free_memory() is True
    assert _resident_mb() < before - 80
    del pin
