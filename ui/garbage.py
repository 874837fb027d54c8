"""The server's garbage collection at the start of every full run, kept cheap.

Streamlit's own collection after every run is off (.streamlit/config.toml, runner.postScriptGC): it also ran
after each progress-fragment rerun while the Fault lab trains. app.py collects here instead, once per full run
(a click, a page), so the cycles a page leaves behind go before the next one allocates.

A full collection walks every object the process tracks. Once a page has imported torch, plotly, pandas and
scipy that is several hundred thousand objects, nearly all modules, classes and functions that live as long as
the server, and the walk alone costs every click on every page a visible delay (bench/collect.py measures it).
So when a run finds modules imported since the last time (a page visited for the first time), the survivors
of its collection are frozen (gc.freeze): later collections skip them and walk only what runs made since.

Frozen objects still die when their last reference goes; only a reference cycle among objects frozen while in
use can outlive it. Freezes happen only when new modules arrive, a handful of times per server, so what can
stay is bounded by the sessions alive at those moments and does not grow with visitors.

Freed memory is then handed back to the system (glibc's malloc_trim, where the C library is glibc). Python and
numpy free into the C allocator, which keeps the pages: after one page's large transient arrays (the Softmax
page's timing at its largest size, a study's folds) the server's resident memory stayed that high for every
later visitor, and a hosted app is judged by its resident memory.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading

NEW_MODULES_TO_FREEZE = 20  # a page's first visit imports hundreds; a handful can come from a lazy import
_lock = threading.Lock()
_modules_at_last_freeze = 0


def _find_malloc_trim():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS, Windows): nothing to trim with
        return None


_malloc_trim = _find_malloc_trim()


def release_free_memory() -> bool:
    """Hand the C allocator's free pages back to the system; False where there is no malloc_trim."""
    if _malloc_trim is None:
        return False
    _malloc_trim(0)
    return True


def collect_garbage() -> bool:
    """Collect every generation, hand the freed memory back to the system, and freeze the survivors when modules
    arrived since the last freeze. True when it froze."""
    global _modules_at_last_freeze
    gc.collect()
    release_free_memory()
    with _lock:
        if len(sys.modules) < _modules_at_last_freeze + NEW_MODULES_TO_FREEZE:
            return False
        gc.freeze()
        _modules_at_last_freeze = len(sys.modules)
        return True
