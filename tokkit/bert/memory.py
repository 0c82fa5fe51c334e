"""glibc's malloc settings for a training process: resident memory kept under 1 GB without a page fault per tensor.

A training step allocates and frees the same large activations and gradients every time. At the
default 16 x 128 x 256 most are 2 MB ((B*T, C) float32), with a few of 6 MB (queries, keys and
values; GeGLU) and the 10-20 MB logits of the labelled rows. glibc's dynamic mmap threshold lets
the heap keep blocks of every size, and the holes that blocks of changing sizes leave make it grow
past 1 GB. A threshold fixed at 1 MB (`bounded`) maps and unmaps every one of those blocks: RSS
stays flat, but the kernel faults in and zeroes each one on first touch, about 140,000 minor faults
and 0.3 s of system CPU time a step, a third of the step's wall time.

DEFAULT fixes the threshold at 4 MB: the 2 MB blocks are reused from the heap without faults, the
few larger ones are still handed back at once. Measured on the default run (bench_bert_malloc.py,
docs/bert-modernbert.md): 15,000 faults and 0.33 s a step against 143,000 and 0.48 s for
`bounded`, and a peak RSS of 919-963 MB in four 600 s runs.

TOKKIT_MALLOC in the environment picks another setting: `default` leaves glibc alone,
`mmap=SIZE,trim=SIZE,arenas=N` (sizes like 1M or 32M; any part may be left out) sets those, and
the names in PRESETS stand for the settings compared there.

>>> parse_setting("mmap=1M,trim=8M")
{'mmap': 1048576, 'trim': 8388608}
>>> parse_setting("heap")
{'mmap': 33554432, 'trim': 1073741824}
>>> return_freed_memory()   # doctest: +SKIP
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import Dict, Optional

from tokkit.errors import TokkitError

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
_PARAMS = {"mmap": M_MMAP_THRESHOLD, "trim": M_TRIM_THRESHOLD, "arenas": M_ARENA_MAX}
DEFAULT = "mmap=4M,trim=64M"
# Named settings (benchmarks/bench_bert_malloc.py compares them): the default, every block of 1 MB
# or more mapped and unmapped (the flattest RSS, the most faults), blocks up to 32 MB served and
# kept by the heap, and a middle way.
PRESETS = {"mmap4m": DEFAULT, "bounded": "mmap=1M,trim=8M", "heap": "mmap=32M,trim=1G", "mmap8m": "mmap=8M,trim=512M"}
_APPLIED: Optional[str] = None


def parse_setting(text: str) -> Dict[str, int]:
    """`mmap=32M,trim=512M,arenas=2` (or a name in PRESETS) as {"mmap": bytes, "trim": bytes, "arenas": count}."""
    text = PRESETS.get(text.strip(), text)
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name not in _PARAMS or not value:
            raise TokkitError(f"TOKKIT_MALLOC: {part!r} is not one of mmap=SIZE, trim=SIZE, arenas=N "
                              f"(or 'default', {', '.join(PRESETS)})")
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(value[-1].upper(), 1)
        digits = value[:-1] if scale > 1 else value
        if not digits.isdigit():
            raise TokkitError(f"TOKKIT_MALLOC: {part!r} needs a whole number (sizes may end in K, M or G)")
        out[name] = int(digits) * scale
    return out


def return_freed_memory(setting: Optional[str] = None) -> bool:
    """Apply `setting` (default: TOKKIT_MALLOC, else DEFAULT) to glibc's malloc once; True when applied.

    A no-op (False) off Linux, under another C library, or with TOKKIT_MALLOC=default. Safe to call
    more than once.
    """
    global _APPLIED
    text = setting or os.environ.get("TOKKIT_MALLOC") or DEFAULT
    if _APPLIED is not None:
        return True
    if text.strip() == "default" or not sys.platform.startswith("linux"):
        return False
    values = parse_setting(text)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = all([mallopt(_PARAMS[name], int(value)) == 1 for name, value in values.items()])
    if ok:
        _APPLIED = text
    return ok
