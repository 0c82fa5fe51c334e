"""Keep a training process's resident memory bounded under glibc's malloc.

With sparse MLM prediction the logits tensor is (labelled positions, vocab): its size changes with
every batch (about 300 x 8,000 floats, ~10 MB, at batch 16 x 128 and 15% masking), and so do the
softmax, gradient and bf16 copies made from it. glibc serves a large block with mmap and unmaps it
on free, but each such free raises its "mmap threshold" to the freed size (up to 32 MB), so from
then on these blocks come from the heap arenas instead. Freed there, blocks of ever-different sizes
leave holes that later requests do not fit and that malloc does not give back to the system, and
the process's RSS creeps up batch after batch (1.1 -> 1.8 GB over a 600 s run).

Fixing the threshold (mallopt M_MMAP_THRESHOLD) turns the dynamic adjustment off: blocks of 1 MB
and more are always mmapped and returned to the system when freed, and a lower trim threshold
lets the heap top shrink too. Allocations that size cost one mmap/munmap pair each, which is small
next to the matrix products that fill them.

>>> return_freed_memory()   # doctest: +SKIP
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
_DONE = False


def return_freed_memory(mmap_threshold: int = 1 << 20, trim_threshold: int = 8 << 20) -> bool:
    """Fix glibc's mmap and trim thresholds for this process; True when applied.

    A no-op (False) off Linux, under another C library, or with TOKKIT_MALLOC=default in the
    environment. Safe to call more than once.
    """
    global _DONE
    if _DONE:
        return True
    if not sys.platform.startswith("linux") or os.environ.get("TOKKIT_MALLOC") == "default":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = mallopt(M_MMAP_THRESHOLD, int(mmap_threshold)) == 1
    ok = mallopt(M_TRIM_THRESHOLD, int(trim_threshold)) == 1 and ok
    _DONE = ok
    return ok
