"""Run a compiled kernel over slices of a batch on worker threads, in order.

The kernels release the GIL while they encode, so threads give real parallelism; what stays
serial is the Python-object work each slice ends with (lists, arrays). Slices are cut to hold
about the same number of characters, not the same number of texts: by count, one slice of long
paragraphs would leave the other thread idle at the end.

Any number of threads may call `run_sliced` at once, each with its own `num_threads`: they share
one pool, made once and never replaced, with a thread fewer than the cores. A request for more
threads than cores is capped at the cores, since more cannot run at once.

>>> run_sliced(lambda a, b: (a, b), [2, 1, 0, 4], num_threads=2)  # sizes of 4 texts
[(0, 1), (1, 3), (3, 4)]
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

import numpy as np

from tokkit.errors import TokkitError

T = TypeVar("T")

# Slices per thread. More than one lets a thread build the Python objects of a finished slice
# (GIL held) while the other is still encoding (GIL released).
SLICES_PER_THREAD = 4
# The most threads a batch is cut for, whatever num_threads asks: a huge request would otherwise
# cut a batch into a slice per text, each with its own Python objects to build and join.
MAX_THREADS = 256


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity where the OS reports one.

    >>> available_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def resolve_threads(num_threads: int | None, n_items: int) -> int:
    """Threads asked for: `num_threads` (default: all cores), at most MAX_THREADS and the items.

    The batch is sliced for this many threads; run_sliced runs at most `available_cores()` of them.

    >>> resolve_threads(10**9, 3), resolve_threads(10**9, 10**6)
    (3, 256)
    """
    if num_threads is None:
        num_threads = available_cores()
    elif isinstance(num_threads, bool) or not isinstance(num_threads, (int, np.integer)):
        raise TokkitError(f"num_threads must be a whole number or None, got {num_threads!r}")
    if num_threads < 1:
        raise TokkitError(f"num_threads must be at least 1, got {num_threads}")
    return max(1, min(num_threads, MAX_THREADS, n_items))


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

    Slices are cut for `num_threads` threads (default: all cores; see resolve_threads), balanced
    on `sizes`, and run on at most as many threads as there are cores: the cut does not depend on
    the machine, the number of threads started does. An exception in any slice is raised here.
    """
    threads = resolve_threads(num_threads, len(sizes))
    if threads == 1 or len(sizes) <= 1:
        return [work(0, len(sizes))]
    slices = split_by_size(sizes, threads * SLICES_PER_THREAD)
    running = min(threads, available_cores())
    results: list = [None] * len(slices)
    taken = itertools.count()  # next() on it is atomic under the GIL: each slice goes to one taker

    def take_slices() -> None:
        for i in iter(lambda: next(taken), None):
            if i >= len(slices):
                return
            results[i] = work(*slices[i])

    # The calling thread takes slices too, beside running - 1 pool threads: one thread fewer to
    # wake, and the caller does not sit idle waiting for the others. A helper that has not started
    # by the time the caller runs out of slices is cancelled, not awaited: so a call made from
    # inside a pool thread (the pool busy with its caller), or while other callers keep the pool
    # busy, never waits on work that cannot start.
    helpers = _submit(take_slices, running - 1)
    try:
        take_slices()
    finally:
        for h in helpers:
            if not h.cancel():
                h.result()
    return results


def run_shared(work: Callable[[], None], sizes: Sequence[int] | np.ndarray, num_threads: int | None = None) -> None:
    """`work()` on as many threads as run_sliced would use for `sizes`, the caller one of them; returns
    when every started call has returned. `work` takes its share of the batch itself (a compiled job
    hands out slices through an atomic counter), so each thread enters it once per batch.

    >>> done = []
    >>> run_shared(lambda: done.append(1), [3, 4], num_threads=2); len(done) >= 1
    True
    """
    threads = min(resolve_threads(num_threads, len(sizes)), available_cores())
    helpers = _submit(work, threads - 1)
    try:
        work()
    finally:
        for h in helpers:
            if not h.cancel():  # not started by now: the caller has taken every slice already
                h.result()


def _submit(fn: Callable[[], None], copies: int) -> list[Future]:
    """`copies` runs of `fn` queued on the shared pool; none once the interpreter is shutting down
    (the caller then takes every slice itself)."""
    helpers: list[Future] = []
    pool = _pool() if copies > 0 else None
    for _ in range(copies):
        try:
            helpers.append(pool.submit(fn))
        except RuntimeError:  # "cannot schedule new futures after interpreter shutdown"
            break
    return helpers


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The process-wide pool, kept between calls: starting threads anew for every batch cost more
    than a small batch's encoding. It is made once with a thread fewer than the cores (a call uses
    at most that many helpers) and never shut down or replaced, so concurrent callers with any
    `num_threads` can always submit to it. Its threads start on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, available_cores() - 1), thread_name_prefix="tokkit")
        return _POOL


def _forget_pool() -> None:
    """After fork the child has none of the parent's threads: it starts its own pool when needed."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)
