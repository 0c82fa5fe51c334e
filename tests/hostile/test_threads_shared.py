"""One Tokenizer shared by many Python threads, each asking for its own number of threads."""
import random
import threading
import time

import numpy as np

import tokkit
from tokkit import _threads
from tokkit._threads import available_cores, run_sliced

TEXTS = ["the cat sat on the mat", "", "a quick brown fox jumps", "the lazy dog " * 30] * 60


def _stress(tok, *, callers: int, seconds: float, max_threads: int):
    """Callers in threads encode the same batch with random num_threads until time runs out;
    returns (errors, wrong results, calls made)."""
    expected_rows = [tok.encode(t) for t in TEXTS]
    expected_flat = np.concatenate([np.asarray(r, dtype=np.uint32) for r in expected_rows])
    errors, wrong, calls = [], [], [0]
    stop = time.monotonic() + seconds
    start = threading.Barrier(callers)

    def caller(seed):
        pick = random.Random(seed)
        start.wait()
        try:
            while time.monotonic() < stop:
                n = pick.choice([1, 2, 3, 7, 64, max_threads])
                kind = pick.randrange(3)
                if kind == 0:
                    ok = tok.encode_batch(TEXTS, num_threads=n) == expected_rows
                elif kind == 1:
                    ids, _ = tok.encode_batch_flat(TEXTS, num_threads=n)
                    ok = np.array_equal(ids, expected_flat)
                else:
                    out = tokkit.encode(tok, TEXTS, max_length=64, padding="max_length", num_threads=n)
                    ok = out["input_ids"].shape == (len(TEXTS), 64)
                if not ok:
                    wrong.append(n)
                calls[0] += 1
        except Exception as exc:  # any exception is a failure of the promise
            errors.append(repr(exc))

    workers = [threading.Thread(target=caller, args=(i,), daemon=True) for i in range(callers)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=seconds + 60)
    assert not any(w.is_alive() for w in workers), "a caller hung"
    return errors, wrong, calls[0]


def test_concurrent_calls_with_different_num_threads_never_fail(wp):
    errors, wrong, calls = _stress(wp, callers=8, seconds=3.0, max_threads=10**6)
    assert errors == [] and wrong == []
    assert calls > 8


def test_threads_are_capped_at_the_cores(wp):
    """A huge num_threads runs on at most the cores, and the kept pool never grows past them."""
    before = {t.ident for t in threading.enumerate()}
    rows = wp.encode_batch(TEXTS, num_threads=10**9)
    assert rows == [wp.encode(t) for t in TEXTS]
    wp.encode_batch_flat(TEXTS * 10, num_threads=500)
    started = [t for t in threading.enumerate() if t.ident not in before and t.name.startswith("tokkit")]
    assert len(started) <= max(1, available_cores() - 1)
    assert _threads._pool()._max_workers == max(1, available_cores() - 1)


def test_slices_do_not_depend_on_the_cores(monkeypatch):
    """The cut of a batch follows num_threads, whatever the machine; only the threads run vary."""
    sizes = [3, 1, 4, 1, 5, 9, 2, 6] * 4
    cut = run_sliced(lambda a, b: (a, b), sizes, num_threads=4)
    monkeypatch.setattr(_threads, "available_cores", lambda: 1)
    assert run_sliced(lambda a, b: (a, b), sizes, num_threads=4) == cut
    monkeypatch.setattr(_threads, "available_cores", lambda: 64)
    assert run_sliced(lambda a, b: (a, b), sizes, num_threads=4) == cut


def test_a_pool_that_refuses_work_leaves_the_caller_to_do_it(monkeypatch):
    """At interpreter shutdown the pool refuses new work: the calling thread takes every slice."""

    class Refusing:
        def submit(self, fn):
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    monkeypatch.setattr(_threads, "_pool", lambda: Refusing())
    monkeypatch.setattr(_threads, "available_cores", lambda: 4)
    assert run_sliced(lambda a, b: list(range(a, b)), [1] * 20, num_threads=4) != []
    assert sum(run_sliced(lambda a, b: list(range(a, b)), [1] * 20, num_threads=4), []) == list(range(20))


def test_training_workers_are_capped_at_the_cores(monkeypatch):
    """`train(workers=huge)` counts on at most the cores, holding at most two chunks each."""
    from concurrent.futures import ThreadPoolExecutor

    from tokkit.text import count

    seen = []

    class Recording(ThreadPoolExecutor):
        def __init__(self, max_workers=None, **kw):
            seen.append(max_workers)
            super().__init__(max_workers=max_workers, **kw)

    monkeypatch.setattr(count, "ThreadPoolExecutor", Recording)
    a = tokkit.train(texts=TEXTS * 5, algo="wordpiece", vocab_size=80, workers=10**6)
    b = tokkit.train(texts=TEXTS * 5, algo="wordpiece", vocab_size=80, workers=1)
    assert seen and max(seen) <= available_cores()
    assert [a.id_to_token(i) for i in range(a.vocab_size)] == [b.id_to_token(i) for i in range(b.vocab_size)]


def test_concurrent_masking_of_large_batches_gives_the_single_thread_masks():
    """Batches of 2**19 positions use the masking kernel's helper thread; callers that find it busy
    run alone, and every caller gets exactly the masks of a one-thread run."""
    from tokkit.inputs.masking import MaskSpec, apply_mask, row_keys

    spec = MaskSpec(vocab_size=30000, mask_token_id=4, special_ids=[0, 1, 2, 3, 4])
    ids = np.random.default_rng(0).integers(5, 30000, (2048, 256)).astype(np.int32)
    special = np.zeros_like(ids, dtype=np.uint8)
    keys = row_keys(np.random.default_rng(1), ids.shape[0])
    want = [a.copy() for a in apply_mask(spec, ids, special, keys=keys, threads=1)]
    wrong = []

    def caller():
        for _ in range(8):
            masked, labels = apply_mask(spec, ids, special, keys=keys)
            if not (np.array_equal(masked, want[0]) and np.array_equal(labels, want[1])):
                wrong.append(1)

    workers = [threading.Thread(target=caller, daemon=True) for _ in range(6)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=120)
    assert not any(w.is_alive() for w in workers) and wrong == []


def test_a_fork_while_other_threads_encode_leaves_the_child_a_working_pool(wp):
    """A child forked while threads are encoding has none of their pool threads; it starts its own."""
    import multiprocessing as mp

    stop = threading.Event()

    def busy():
        while not stop.is_set():
            wp.encode_batch(TEXTS, num_threads=4)

    _CHILD_TOKENIZER[:] = [wp]  # the forked child inherits it
    workers = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    for w in workers:
        w.start()
    try:
        with mp.get_context("fork").Pool(1) as pool:
            rows = pool.apply(_encode_in_child, (TEXTS,))
    finally:
        stop.set()
        for w in workers:
            w.join(timeout=60)
    assert rows == [wp.encode(t) for t in TEXTS]


_CHILD_TOKENIZER = []


def _encode_in_child(texts):
    return _CHILD_TOKENIZER[0].encode_batch(texts, num_threads=4)


def test_a_huge_num_threads_does_not_cut_a_slice_per_text():
    sizes = [5] * 100_000
    assert len(run_sliced(lambda a, b: (a, b), sizes, num_threads=10**9)) <= _threads.MAX_THREADS * 4
