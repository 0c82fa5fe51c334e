"""What both merge engines check and share: the inputs' shapes and types, and each new id.

The compiled kernel (merge.pyx) and its plain-Python twin (tokkit.train.merge_py) take the same
inputs and must refuse the same things with the same messages, so the checks live once, here.

>>> check_new_id(5, 0, 1, vocab_len=5)
5
"""
from __future__ import annotations

import numpy as np

from tokkit._native import MAX_VOCAB_SIZE
from tokkit.errors import TokkitError

PROGRESS_EVERY = 256
SCORINGS = ("frequency", "pmi", "likelihood")


def check_inputs(symbols, offsets, counts, vocab_len: int, vocab_size: int, scoring: str):
    """Validate the engine's inputs; return (symbols, offsets, counts) as contiguous numpy arrays.

    >>> s, o, c = check_inputs([1, 2], [0, 2], [3], 3, 10, "pmi")
    >>> s.dtype, o.dtype, c.dtype
    (dtype('int32'), dtype('int64'), dtype('int64'))
    """
    if scoring not in SCORINGS:
        raise TokkitError(f"unknown scoring {scoring!r}; expected one of {', '.join(map(repr, SCORINGS))}")
    symbols, offsets, counts = (np.asarray(x).reshape(-1) for x in (symbols, offsets, counts))
    for name, x in (("symbols", symbols), ("offsets", offsets), ("counts", counts)):
        if x.size and x.dtype.kind not in "iu":
            raise TokkitError(f"{name} must be integers, got {x.dtype}")
    if not 0 <= vocab_len <= MAX_VOCAB_SIZE or vocab_size > MAX_VOCAB_SIZE:
        raise TokkitError(f"vocab_len {vocab_len} / vocab_size {vocab_size} out of range")
    if symbols.size and (symbols.min() < 0 or symbols.max() >= vocab_len):  # before narrowing to int32
        raise TokkitError(f"symbol ids must lie in [0, vocab_len={vocab_len})")
    if counts.size and (counts.dtype == np.uint64 and counts.max() >= 2**63 or counts.min() < 0):
        raise TokkitError("word counts must lie in [0, 2**63)")
    symbols = np.ascontiguousarray(symbols, dtype=np.int32)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if len(offsets) != len(counts) + 1:
        raise TokkitError(f"offsets must have one more entry than counts ({len(offsets)} vs {len(counts)})")
    if len(offsets) and (offsets[0] < 0 or offsets[-1] > len(symbols) or np.any(np.diff(offsets) < 0)):
        raise TokkitError("offsets must be non-decreasing and within the symbols array")
    return symbols, offsets, counts


def check_new_id(new: int, a: int, b: int, vocab_len: int) -> int:
    """Check merge_id's answer: the next id, or an existing id other than a and b."""
    new = int(new)
    if not 0 <= new <= vocab_len or new in (a, b):
        raise TokkitError(f"merge_id({a}, {b}) returned {new}; expected {vocab_len} or another existing id")
    return new
