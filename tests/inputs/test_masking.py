"""tokkit.mask_tokens: 80/10/10 statistics over a million tokens, whole words, determinism, bad input."""
import numpy as np
import pytest

import tokkit
from tokkit.errors import TokkitError
from tokkit.inputs import masking

VOCAB = 1000
PAD, UNK, CLS, SEP, MASK = 0, 1, 2, 3, 4
SPECIALS = [PAD, UNK, CLS, SEP, MASK]


def make_batch(rows=12288, cols=128, seed=0, vocab=VOCAB):
    """Rows of [CLS] ids [SEP] [PAD]...; a few [UNK]s inside the text, not flagged in the mask."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(len(SPECIALS), vocab, size=(rows, cols), dtype=np.int64)
    special = np.zeros((rows, cols), dtype=bool)
    lengths = np.where(rng.random(rows) < 0.3, rng.integers(3, cols, size=rows), cols)
    for r, n in enumerate(lengths):
        ids[r, 0], ids[r, n - 1], ids[r, n:] = CLS, SEP, PAD
        special[r, 0] = special[r, n - 1:] = True
    ids[(rng.random((rows, cols)) < 0.01) & ~special] = UNK
    return ids, special


def run(ids, special, seed=0, **kw):
    kw.setdefault("vocab_size", VOCAB)
    return tokkit.mask_tokens(ids, special, mask_token_id=MASK, special_ids=SPECIALS,
                              rng=np.random.default_rng(seed), **kw)


@pytest.fixture(params=["compiled", "numpy"])
def engine(request, monkeypatch):
    if request.param == "compiled" and masking._compiled is None:
        pytest.skip("tokkit._native.mask is not built")
    if request.param == "numpy":
        monkeypatch.setenv("TOKKIT_PURE_PYTHON", "1")
    return request.param


def test_million_token_statistics(engine):
    ids, special = make_batch()
    eligible = ~special & ~np.isin(ids, SPECIALS)
    assert eligible.sum() > 1_000_000
    before = ids.copy()
    masked, labels = run(ids, special)
    assert np.array_equal(ids, before), "the caller's array changed"
    chosen = labels != -100
    assert not (chosen & ~eligible).any(), "a special, padding or special-id position was chosen"
    assert abs(chosen.sum() / eligible.sum() - 0.15) < 0.005
    assert np.array_equal(labels[chosen], ids[chosen])
    assert np.array_equal(masked[~chosen], ids[~chosen])
    became_mask = chosen & (masked == MASK)
    kept = chosen & (masked == ids)
    randomised = chosen & ~became_mask & ~kept
    n = chosen.sum()
    assert abs(became_mask.sum() / n - 0.8) < 0.01
    assert abs(randomised.sum() / n - 0.1) < 0.01
    assert abs(kept.sum() / n - 0.1) < 0.01
    assert not np.isin(masked[randomised], SPECIALS).any()
    assert masked.dtype == ids.dtype and labels.dtype == np.int64


def test_random_replacements_are_uniform_over_non_special_ids(engine):
    ids, special = make_batch(rows=4096, vocab=20)
    masked, labels = run(ids, special, vocab_size=20, mlm_probability=0.5,
                         mask_replace_prob=0.0, random_replace_prob=1.0)
    chosen = labels != -100
    counts = np.bincount(masked[chosen], minlength=20)
    assert counts[:5].sum() == 0
    expected = chosen.sum() / 15
    assert np.all(np.abs(counts[5:] - expected) < 0.05 * expected), counts


def test_other_probabilities_are_honoured(engine):
    ids, special = make_batch(rows=8192)
    eligible = ~special & ~np.isin(ids, SPECIALS)
    masked, labels = run(ids, special, mlm_probability=0.3, mask_replace_prob=1.0, random_replace_prob=0.0)
    chosen = labels != -100
    assert abs(chosen.sum() / eligible.sum() - 0.3) < 0.005
    assert (masked[chosen] == MASK).all()
    none_masked, none_labels = run(ids, special, mlm_probability=0.0)
    assert (none_labels == -100).all() and np.array_equal(none_masked, ids)
    all_masked, all_labels = run(ids, special, mlm_probability=1.0, mask_replace_prob=0.0, random_replace_prob=0.0)
    assert np.array_equal(all_labels != -100, eligible) and np.array_equal(all_masked, ids)


def test_same_seed_same_mask_and_fresh_mask_per_call(engine):
    ids, special = make_batch(rows=64)
    a = run(ids, special, seed=7)
    b = run(ids, special, seed=7)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    rng = np.random.default_rng(7)
    kw = dict(vocab_size=VOCAB, mask_token_id=MASK, special_ids=SPECIALS, rng=rng)
    first = tokkit.mask_tokens(ids, special, **kw)
    second = tokkit.mask_tokens(ids, special, **kw)
    assert not np.array_equal(first[1], second[1])
    assert np.array_equal(first[1], a[1])


def test_compiled_kernel_matches_numpy_twin(monkeypatch):
    if masking._compiled is None:
        pytest.skip("tokkit._native.mask is not built")
    ids, special = make_batch(rows=512)
    words = np.cumsum(np.random.default_rng(3).random(ids.shape) < 0.6, axis=1)
    for dtype in (np.int64, np.int32):
        for w in (None, words):
            compiled = run(ids.astype(dtype), special, seed=5, word_ids=w)
            monkeypatch.setenv("TOKKIT_PURE_PYTHON", "1")
            twin = run(ids.astype(dtype), special, seed=5, word_ids=w)
            monkeypatch.delenv("TOKKIT_PURE_PYTHON")
            assert np.array_equal(compiled[0], twin[0]) and np.array_equal(compiled[1], twin[1])
    spec = masking.MaskSpec(vocab_size=VOCAB, mask_token_id=MASK, special_ids=SPECIALS)
    keys = masking.row_keys(np.random.default_rng(1), len(ids))
    one = masking.apply_mask(spec, ids, special, keys=keys, threads=1)
    two = masking.apply_mask(spec, ids, special, keys=keys, threads=2)
    assert np.array_equal(one[0], two[0]) and np.array_equal(one[1], two[1])
    # Keys derived inside the kernel from one batch seed are the ones seed_keys computes.
    from_seed = masking.apply_mask(spec, ids, special, rng=np.random.default_rng(9))
    seed = masking.batch_seed(np.random.default_rng(9))
    given = masking.apply_mask(spec, ids, special, keys=masking.seed_keys(seed, len(ids)))
    assert np.array_equal(from_seed[0], given[0]) and np.array_equal(from_seed[1], given[1])
    for rows in (1, 3, 9):  # the small-batch Python path and the numpy path agree
        head = masking.seed_keys(seed, 9)[:rows]
        assert np.array_equal(masking.seed_keys(seed, rows), head) and masking.seed_keys(seed, rows).dtype == np.uint64
    # The collator's per-example keys: row_keys(rng, 1) gives what masking that row alone with rng gives.
    alone = masking.apply_mask(spec, ids[3], special[3], rng=np.random.default_rng([1, 2, 3]))
    keyed = masking.apply_mask(spec, ids[3:4], special[3:4], keys=masking.row_keys(np.random.default_rng([1, 2, 3]), 1))
    assert np.array_equal(alone[0], keyed[0][0]) and np.array_equal(alone[1], keyed[1][0])


def test_gap_tables_follow_the_geometric_law():
    for p in (0.15, 0.5, 0.01):
        cdf, start = masking.gap_tables(p)
        g = np.arange(5)
        assert np.allclose(cdf[:5] / 2.0**32, 1 - (1 - p) ** (g + 1), rtol=0, atol=1e-9)
        assert np.all(np.diff(cdf.astype(np.float64)) >= 0) and cdf[-1] == 2**32
        # start[b] is the gap of the bucket's smallest draw: never past the true gap of any draw in it.
        u = np.random.default_rng(0).integers(0, 2**32, 100_000, dtype=np.uint64)
        true_gap = np.searchsorted(cdf[:-1], u, side="right")
        assert np.all(start[(u >> np.uint64(32 - 12)).astype(np.int64)] <= true_gap)
    cdf, _ = masking.gap_tables(1.0)
    assert (cdf == 2**32).all()  # every position chosen: gap 0 always


def make_words(rows=12288, cols=128, seed=1):
    """Word ids as tokkit.encode gives them: -1 on specials, words of 1-4 tokens."""
    rng = np.random.default_rng(seed)
    ids, special = make_batch(rows, cols, seed)
    ids[np.isin(ids, SPECIALS) & ~special] = 10  # keep every non-special position eligible
    new_word = rng.random((rows, cols)) < 0.45
    words = np.cumsum(new_word, axis=1)
    words[special] = -1
    return ids, special, words


def test_whole_word_masking_statistics_and_never_splits_a_word(engine):
    ids, special, words = make_words()
    assert (~special).sum() > 1_000_000
    masked, labels = run(ids, special, word_ids=words)
    chosen = labels != -100
    assert not (chosen & special).any()
    # Every word (a run of equal ids on eligible positions) is chosen entirely or not at all.
    key = (np.arange(len(ids))[:, None] * 1000 + words)[~special]
    _, word = np.unique(key, return_inverse=True)
    size = np.bincount(word)
    hits = np.bincount(word, weights=chosen[~special])
    assert np.all((hits == 0) | (hits == size)), "a word was split"
    assert abs((hits > 0).mean() - 0.15) < 0.005
    became_mask = chosen & (masked == MASK)
    kept = chosen & (masked == ids)
    n = chosen.sum()
    assert abs(became_mask.sum() / n - 0.8) < 0.01
    assert abs(kept.sum() / n - 0.1) < 0.01
    # The 80/10/10 choice is per token: long chosen words mix [MASK] with other outcomes.
    assert (chosen & ~became_mask).sum() > 0


def test_input_is_never_modified_even_read_only_and_1d(engine):
    ids, special = make_batch(rows=4)
    ids.setflags(write=False)
    masked, labels = run(ids, special, mlm_probability=0.5)
    assert masked is not ids and labels.shape == ids.shape
    row_masked, row_labels = run(ids[1], special[1], mlm_probability=0.5)
    assert row_masked.shape == ids[1].shape
    int32 = run(ids.astype(np.int32), special, mlm_probability=0.5)[0]
    assert int32.dtype == np.int32


@pytest.mark.parametrize("kw, message", [
    (dict(mlm_probability=1.5), "mlm_probability"),
    (dict(mlm_probability=-0.1), "mlm_probability"),
    (dict(mask_replace_prob=0.8, random_replace_prob=0.3), "must not exceed 1"),
    (dict(random_replace_prob=-0.2), "random_replace_prob"),
    (dict(vocab_size=3), "mask_token_id"),
])
def test_bad_probabilities_and_settings(kw, message):
    ids, special = make_batch(rows=2)
    with pytest.raises(ValueError, match=message):
        run(ids, special, **kw)


def test_bad_arrays(engine):
    ids, special = make_batch(rows=2)
    with pytest.raises(ValueError, match="special_tokens_mask has shape"):
        run(ids, special[:, :5])
    with pytest.raises(ValueError, match="word_ids has shape"):
        run(ids, special, word_ids=np.zeros((2, 5)))
    with pytest.raises(ValueError, match="outside the vocabulary"):
        run(np.where(special, ids, VOCAB + 5), special)
    with pytest.raises(ValueError, match="integers"):
        run(ids.astype(float), special)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK, special_ids=SPECIALS, rng=0)
    with pytest.raises(TokkitError, match="special_ids"):
        tokkit.mask_tokens(ids, special, vocab_size=VOCAB, mask_token_id=MASK, special_ids=[VOCAB],
                           rng=np.random.default_rng())


@pytest.mark.skipif(not hasattr(__import__("os"), "fork") or masking._compiled is None,
                    reason="needs os.fork and the compiled kernel")
def test_two_thread_kernel_survives_fork():
    import os
    import time

    ids, special = make_batch(rows=256)
    spec = masking.MaskSpec(vocab_size=VOCAB, mask_token_id=MASK, special_ids=SPECIALS)
    keys = masking.row_keys(np.random.default_rng(2), len(ids))
    expected = masking.apply_mask(spec, ids, special, keys=keys, threads=2)  # starts the helper thread
    pid = os.fork()
    if pid == 0:  # the child has no helper thread: the kernel must start its own, not wait forever
        got = masking.apply_mask(spec, ids, special, keys=keys, threads=2)
        os._exit(0 if np.array_equal(got[1], expected[1]) else 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the masking kernel hung in a forked child")


@pytest.mark.parametrize("algo", ["wordpiece", "bpe", "bytelevel"])
def test_whole_words_from_tokkit_encode_for_each_tokenizer_kind(algo):
    text = ("unbelievable transformations happened overnight in the internationalisation department; "
            "extraordinarily complicated words were tokenized into several pieces each time.")
    tok = tokkit.train(texts=[text] * 20, algo=algo, vocab_size=300)
    out = tokkit.encode(tok, [text, text[::-1]], max_length=64)
    words, ids = out["word_ids"], out["input_ids"]
    assert (np.diff(words, axis=1) == 0).any(), "expected words split into several tokens"
    special_ids = [tok.token_to_id(t) for t in tok.special_tokens]
    for seed in range(20):
        masked, labels = tokkit.mask_tokens(ids, out["special_tokens_mask"], vocab_size=tok.vocab_size,
                                            mask_token_id=tok.token_to_id("[MASK]"), special_ids=special_ids,
                                            rng=np.random.default_rng(seed), mlm_probability=0.5, word_ids=words)
        chosen = labels != -100
        for r in range(len(ids)):
            for w in np.unique(words[r][words[r] >= 0]):
                at = chosen[r][(words[r] == w) & ~np.isin(ids[r], special_ids)]  # an [UNK] is never chosen
                assert at.all() or not at.any(), f"{algo}: word {w} of row {r} was split"
        assert not chosen[out["special_tokens_mask"] == 1].any()


def test_a_special_id_inside_a_word_does_not_split_it(engine):
    rows = 2000
    ids = np.tile([CLS, 10, UNK, 11, 12, SEP], (rows, 1))
    special = np.zeros_like(ids, dtype=bool)
    special[:, [0, -1]] = True
    words = np.tile([-1, 0, 0, 0, 1, -1], (rows, 1))
    masked, labels = run(ids, special, word_ids=words, mlm_probability=0.5)
    chosen = labels != -100
    assert not chosen[:, 2].any()  # the [UNK] itself is never chosen
    assert np.array_equal(chosen[:, 1], chosen[:, 3])  # ... but both sides of it go together
    assert 0.45 < chosen[:, 1].mean() < 0.55 and 0.45 < chosen[:, 4].mean() < 0.55
    assert not np.array_equal(chosen[:, 1], chosen[:, 4])  # distinct words are drawn apart


def test_results_are_never_shared_between_live_calls(engine):
    ids, special = make_batch(rows=8)
    rng = np.random.default_rng(0)
    kept = [run(ids, special, seed=s) for s in range(6)]  # more live results than the pool keeps
    again = [run(ids, special, seed=s) for s in range(6)]
    for (m1, l1), (m2, l2) in zip(kept, again):
        assert np.array_equal(m1, m2) and np.array_equal(l1, l2)
    views = [run(ids, special, seed=s)[1].reshape(-1)[:10] for s in range(3)]  # only a view survives
    expected = [run(ids, special, seed=s)[1].reshape(-1)[:10].copy() for s in range(3)]
    assert all(np.array_equal(v, e) for v, e in zip(views, expected))
    del rng
