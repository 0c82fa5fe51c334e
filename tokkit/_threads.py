"""Run a compiled kernel over slices of a batch on worker threads, in order.

The kernels release the GIL while they encode, so threads give real parallelism; what stays
serial is the Python-object work each slice ends with (lists, arrays). Slices are cut to hold
about the same number of characters, not the same number of texts: by count, one slice of long
paragraphs would leave the other thread idle at the end.

>>> run_sliced(lambda a, b: (a, b), [2, 1, 0, 4], num_threads=2)  # sizes of 4 texts
[(0, 1), (1, 3), (3, 4)]
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import numpy as np

from tokkit.errors import TokkitError

T = TypeVar("T")

# Slices per thread. More than one lets a thread build the Python objects of a finished slice
# (GIL held) while the other is still encoding (GIL released).
SLICES_PER_THREAD = 4


def resolve_threads(num_threads: int | None, n_items: int) -> int:
    """Threads to use: `num_threads` (default: all cores), never more than there are items."""
    if num_threads is None:
        num_threads = os.cpu_count() or 1
    elif isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TokkitError(f"num_threads must be a whole number or None, got {num_threads!r}")
    if num_threads < 1:
        raise TokkitError(f"num_threads must be at least 1, got {num_threads}")
    return max(1, min(num_threads, n_items))


def split_by_size(sizes: Sequence[int] | np.ndarray, parts: int) -> list[tuple[int, int]]:
    """At most `parts` contiguous non-empty (start, stop) ranges over the items, of about equal total size.

    Each item weighs its size plus one, so a run of empty texts still gets shared out.

    >>> split_by_size([5, 1, 1, 1, 5, 1], 2)
    [(0, 3), (3, 6)]
    """
    n = len(sizes)
    if n == 0:
        return []
    parts = max(1, min(parts, n))
    ends = np.cumsum(np.asarray(sizes, dtype=np.int64) + 1)
    targets = ends[-1] * np.arange(1, parts, dtype=np.float64) / parts
    # The item whose running total first reaches a target is cut before or after, whichever
    # total lies nearer: one huge text then gets a slice of its own instead of swallowing the rest.
    at = np.searchsorted(ends, targets, side="left")
    before = np.where(at > 0, ends[np.maximum(at - 1, 0)], 0)
    cuts = np.where(targets - before < ends[at] - targets, at, at + 1)
    bounds = [0, *sorted(set(int(c) for c in cuts if 0 < c < n)), n]
    return list(zip(bounds[:-1], bounds[1:]))


def run_sliced(work: Callable[[int, int], T], sizes: Sequence[int] | np.ndarray,
               num_threads: int | None = None) -> list[T]:
    """`work(a, b)` for consecutive slices of a batch whose items have `sizes`, in slice order.

    Runs on `num_threads` threads (default: all cores; see resolve_threads), with slices balanced
    on `sizes`. An exception in any slice is raised here.
    """
    threads = resolve_threads(num_threads, len(sizes))
    if threads == 1 or len(sizes) <= 1:
        return [work(0, len(sizes))]
    slices = split_by_size(sizes, threads * SLICES_PER_THREAD)
    results: list = [None] * len(slices)
    taken = itertools.count()  # next() on it is atomic under the GIL: each slice goes to one taker

    def take_slices() -> None:
        for i in iter(lambda: next(taken), None):
            if i >= len(slices):
                return
            results[i] = work(*slices[i])

    # The calling thread takes slices too, beside threads - 1 pool threads: one thread fewer to
    # wake, and the caller does not sit idle waiting for the others. A helper that has not started
    # by the time the caller runs out of slices is cancelled, not awaited: so a call made from
    # inside a pool thread (the pool busy with its caller) cannot wait on itself.
    helpers = [_pool(threads - 1).submit(take_slices) for _ in range(threads - 1)]
    try:
        take_slices()
    finally:
        for h in helpers:
            if not h.cancel():
                h.result()
    return results


_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0


_POOL_LOCK = threading.Lock()


def _pool(size: int) -> ThreadPoolExecutor:
    """A process-wide pool of at least `size` worker threads, kept between calls: starting threads
    anew for every batch cost more than a small batch's encoding."""
    global _POOL, _POOL_SIZE
    with _POOL_LOCK:
        if _POOL is None or _POOL_SIZE < size:
            old = _POOL
            _POOL, _POOL_SIZE = ThreadPoolExecutor(size, thread_name_prefix="tokkit"), size
            if old is not None:
                old.shutdown(wait=False)  # its queued work still runs; new work goes to the new pool
        return _POOL


def _forget_pool() -> None:
    """After fork the child has none of the parent's threads: it starts its own pool when needed."""
    global _POOL, _POOL_SIZE, _POOL_LOCK
    _POOL, _POOL_SIZE, _POOL_LOCK = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
