"""Slicing a batch for the worker threads: balanced by size, contiguous, complete, in order."""
import gc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokkit
from tokkit._threads import resolve_threads, run_sliced, split_by_size


@given(st.lists(st.integers(0, 1000), max_size=200), st.integers(1, 40))
def test_slices_cover_the_items_in_order(sizes, parts):
    slices = split_by_size(sizes, parts)
    assert len(slices) <= parts
    if not sizes:
        assert slices == []
        return
    assert slices[0][0] == 0 and slices[-1][1] == len(sizes)
    assert all(a < b for a, b in slices)
    assert all(prev[1] == nxt[0] for prev, nxt in zip(slices, slices[1:]))


def test_slices_balance_characters_not_texts():
    # one long paragraph followed by many short lines: cut by count, the first slice would hold
    # almost all the work
    sizes = [10_000] + [10] * 999
    (a0, b0), (a1, b1) = split_by_size(sizes, 2)
    weight = np.asarray(sizes) + 1
    assert abs(weight[a0:b0].sum() - weight[a1:b1].sum()) <= 2 * 11
    assert b0 == 46
    for parts in (3, 4, 8):
        slices = split_by_size([100] * 1000, parts)
        assert len(slices) == parts
        assert max(b - a for a, b in slices) - min(b - a for a, b in slices) <= 1


def test_one_huge_text_gets_a_slice_of_its_own():
    assert split_by_size([10] * 1000 + [10**6], 2) == [(0, 1000), (1000, 1001)]
    assert split_by_size([10**6] + [10] * 1000, 2) == [(0, 1), (1, 1001)]


def test_run_sliced_keeps_order_and_raises_worker_errors():
    texts = [str(i) * (i % 7) for i in range(1000)]
    sizes = [len(t) for t in texts]
    parts = run_sliced(lambda a, b: list(range(a, b)), sizes, 2)
    assert len(parts) > 2  # several slices per thread
    assert [i for p in parts for i in p] == list(range(1000))
    assert run_sliced(lambda a, b: (a, b), sizes, 1) == [(0, 1000)]
    assert resolve_threads(None, 1) == 1
    assert resolve_threads(8, 3) == 3

    def fail_late(a, b):
        if b == len(texts):
            raise RuntimeError("last slice")
        return a
    with pytest.raises(RuntimeError, match="last slice"):
        run_sliced(fail_late, sizes, 2)


def test_batch_rows_are_plain_int_lists_outside_the_cycle_collector():
    # rows hold only ints, so they cannot be part of a cycle; keeping them out of the collector
    # spares it from walking millions of ids (the batch result list itself stays tracked)
    tok = tokkit.Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b"], merges=None,
                                        special_tokens=["[UNK]"])
    rows = tok.encode_batch(["a ab", "ab", ""] * 50, num_threads=2)
    assert rows[:3] == [[1, 1, 2], [1, 2], []]
    assert all(type(r) is list and not gc.is_tracked(r) for r in rows)
    assert gc.is_tracked(rows)
    rows[0].append(rows[0])  # still a normal list to its user
    assert rows[0][-1] is rows[0]
    rows[0].pop()
    assert tok.encode("ab") == [1, 2]


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_equals_one_by_one_with_uneven_texts(threads):
    tok = tokkit.Tokenizer.from_trained(kind="wordpiece", vocab=["[UNK]", "a", "##b", "b"], merges=None,
                                        special_tokens=["[UNK]"])
    texts = ["ab " * 3000] + ["a", "", "b ab"] * 400
    assert tok.encode_batch(texts, num_threads=threads) == [tok.encode(t) for t in texts]


def test_run_sliced_inside_a_pool_thread_does_not_wait_on_itself():
    """A batch encoded from inside a slice (the shared pool busy with that slice) still finishes."""
    import threading

    from tokkit._threads import run_sliced

    def outer(a, b):
        return a, sum(run_sliced(lambda c, d: list(range(100 * a + c, 100 * a + d)), [1] * 20, num_threads=2), [])

    done = []
    worker = threading.Thread(target=lambda: done.append(run_sliced(outer, [1] * 40, num_threads=2)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert done, "run_sliced waited on itself"
    parts = done[0]
    assert len(parts) > 1 and all(flat == list(range(100 * a, 100 * a + 20)) for a, flat in parts)


def test_run_sliced_in_a_forked_child(tmp_path):
    """The pool kept between calls is the parent's; a forked child starts its own."""
    import multiprocessing as mp

    from tokkit._threads import run_sliced

    assert run_sliced(lambda a, b: (a, b), [1] * 8, num_threads=2)[0] == (0, 1)
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        assert pool.apply(run_sliced, (_slice_pair, [1] * 8, 2)) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6),
                                                                      (6, 7), (7, 8)]


def _slice_pair(a, b):
    return (a, b)
