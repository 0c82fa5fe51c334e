"""The merge engine, both builds: textbook answers, brute-force references, tokenizers parity."""
import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokkit.errors import TokkitError
from tokkit.train.merge_py import likelihood_score, pmi_score, xlogx

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def pack(words, counts=None):
    """Words as id lists (+ counts) -> the engine's (symbols, offsets, counts) arrays."""
    counts = [1] * len(words) if counts is None else counts
    offsets = np.zeros(len(words) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(w) for w in words])
    symbols = np.array([s for w in words for s in w], dtype=np.int32)
    return symbols, offsets, np.array(counts, dtype=np.int64)


def merge_everywhere(word, a, b, new):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and (word[i], word[i + 1]) == (a, b):
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def recount_merges(words, counts, vocab_len, vocab_size, min_frequency, best):
    """Recount symbols and pairs at every step and merge the pair `best` picks among the candidates:
    best(candidates, syms, pairs, words, total) with total = all symbols counted."""
    words, merges = [list(w) for w in words], []
    while vocab_len < vocab_size:
        syms, pairs = Counter(), Counter()
        for w, c in zip(words, counts):
            for s in w:
                syms[s] += c
            for p in zip(w, w[1:]):
                pairs[p] += c
        cands = [p for p, n in pairs.items() if n >= max(min_frequency, 1)]
        if not cands:
            break
        a, b = best(cands, syms, pairs, words, sum(syms.values()))
        merges.append((a, b, vocab_len))
        words = [merge_everywhere(w, a, b, vocab_len) for w in words]
        vocab_len += 1
    return merges


def textbook_bpe(words, counts, vocab_len, vocab_size, min_frequency):
    """Most frequent pair wins, ties to the smaller pair."""
    return recount_merges(words, counts, vocab_len, vocab_size, min_frequency,
                          lambda cands, syms, pairs, words, total: min(cands, key=lambda p: (-pairs[p], p)))


def brute_pmi(words, counts, vocab_len, vocab_size, min_frequency):
    """Score with the engine's float expression."""
    return recount_merges(words, counts, vocab_len, vocab_size, min_frequency, lambda cands, syms, pairs, words, total:
                          max(cands, key=lambda p: (pmi_score(pairs[p], syms[p[0]], syms[p[1]]), pairs[p],
                                                    -p[0], -p[1])))


def passes(word, a, b):
    """How many merges the left-to-right pass over word makes for (a, b)."""
    return (len(word) - len(merge_everywhere(word, a, b, -1)))


def brute_likelihood(words, counts, vocab_len, vocab_size, min_frequency):
    """n is what the left-to-right pass would merge, found by merging."""
    def best(cands, syms, pairs, words, total):
        def key(p):
            n = sum(passes(w, *p) * c for w, c in zip(words, counts))
            assert p[0] == p[1] or n == pairs[p]  # a != b: occurrences never overlap
            return likelihood_score(n, syms[p[0]], syms[p[1]], total, p[0] == p[1]), pairs[p], -p[0], -p[1]
        return max(cands, key=key)

    return recount_merges(words, counts, vocab_len, vocab_size, min_frequency, best)


BRUTE = {"frequency": textbook_bpe, "pmi": brute_pmi, "likelihood": brute_likelihood}


# words over a tiny alphabet so that repeats, overlaps ("aaaa") and ties are common
corpora = st.lists(
    st.tuples(st.lists(st.integers(0, 3), min_size=1, max_size=8), st.integers(0, 5)),  # 0: an unseen word
    min_size=1, max_size=12,
)
big_counts = st.lists(
    st.tuples(st.lists(st.integers(0, 2), min_size=1, max_size=6), st.integers(1, 2**40)),
    min_size=1, max_size=8,
)


def test_textbook_example(engine):
    """Wikipedia's BPE example: aaabdaaabac -> Z=aa, Y=ab, X=ZY (ZYdZYac -> XdXac)."""
    a, b, c, d = 0, 1, 2, 3
    word = [a, a, a, b, d, a, a, a, b, a, c]
    merges = engine.train_merges(*pack([word]), vocab_len=4, vocab_size=100, min_frequency=2)
    assert merges == [(a, a, 4), (a, b, 5), (4, 5, 6)]  # then every pair occurs once: stop


@FAST
@pytest.mark.parametrize("scoring", sorted(BRUTE))
@given(corpora, st.integers(0, 3), st.integers(0, 40))
def test_scoring_matches_its_reference(engine, scoring, corpus, min_frequency, extra):
    words, counts = [w for w, _ in corpus], [c for _, c in corpus]
    expected = BRUTE[scoring](words, counts, 4, 4 + extra, min_frequency)
    got = engine.train_merges(*pack(words, counts), vocab_len=4, vocab_size=4 + extra,
                              min_frequency=min_frequency, scoring=scoring)
    assert got == expected


# longer words over more symbols: many merges, so N falls a long way while pairs wait in the heap
long_corpora = st.lists(
    st.tuples(st.lists(st.integers(0, 5), min_size=1, max_size=24), st.integers(1, 300)),
    min_size=1, max_size=30,
)


@FAST
@given(long_corpora, st.integers(1, 3))
def test_likelihood_matches_brute_force_long_runs(engine, corpus, min_frequency):
    words, counts = [w for w, _ in corpus], [c for _, c in corpus]
    expected = brute_likelihood(words, counts, 6, 80, min_frequency)
    got = engine.train_merges(*pack(words, counts), vocab_len=6, vocab_size=80,
                              min_frequency=min_frequency, scoring="likelihood")
    assert got == expected


@FAST
@given(big_counts, st.sampled_from(["frequency", "pmi", "likelihood"]))
def test_huge_counts(engine, corpus, scoring):
    words, counts = [w for w, _ in corpus], [c for _, c in corpus]
    expected = BRUTE[scoring](words, counts, 3, 30, 2)
    assert engine.train_merges(*pack(words, counts), vocab_len=3, vocab_size=30, scoring=scoring) == expected


def test_pmi_rescoring_trap(engine):
    """After merging (x, y) the pairs touching x score higher; a lazy heap misses that."""
    x, y, z, w = 0, 1, 2, 3
    words = [[x, y], [x, z], [w, w]]
    counts = [6, 4, 1]
    # start: (x,y)=6/(10*6)=0.1, (x,z)=4/(10*4)=0.1 (tie -> higher count: (x,y)), (w,w)=1/4
    # min_frequency=1: (w,w) first (0.25); then (x,y); after it count_x=4 so (x,z)=4/16=0.25
    got = engine.train_merges(*pack(words, counts), vocab_len=4, vocab_size=10, min_frequency=1, scoring="pmi")
    assert got == [(w, w, 4), (x, y, 5), (x, z, 6)]
    assert got == brute_pmi(words, counts, 4, 10, 1)


def test_likelihood_hand_checked():
    """The gain formula against the log-likelihood of the data before and after, by hand."""
    import math

    def loglik(counts):
        total = sum(counts)
        return sum(c * math.log(c / total) for c in counts if c)

    # "ab" x 3 and "ac" x 1: a=4 b=3 c=1, N=8; merging (a, b) leaves ab=3 a=1 c=1, N=5
    assert likelihood_score(3, 4, 3, 8) == pytest.approx(loglik([3, 1, 1]) - loglik([4, 3, 1]), abs=1e-12)
    # runs of a: "aaaaa" x 2 gives 2 merges each (aa aa a), so n=4: a=10 -> a=2, aa=4, N=10 -> 6
    assert likelihood_score(4, 10, 10, 10, same=True) == pytest.approx(loglik([2, 4]) - loglik([10]), abs=1e-12)
    assert xlogx(0) == 0.0 and xlogx(1) == 0.0


def test_likelihood_runs_and_rising_scores(engine):
    """(a, a) is scored by its non-overlapping merges; merges raise the gains of pairs sharing a symbol."""
    words, counts = [[0, 0, 0, 0, 0], [0, 1], [2, 3], [1, 2, 3, 1]], [7, 3, 5, 2]
    got = engine.train_merges(*pack(words, counts), vocab_len=4, vocab_size=20, min_frequency=1,
                              scoring="likelihood")
    assert got == brute_likelihood(words, counts, 4, 20, 1) and len(got) >= 5


def test_likelihood_scores_bit_identical():
    """The compiled gain and the Python one are the same doubles, over a wide range of counts."""
    from tokkit.train.engine import COMPILED, get_engine

    if not COMPILED:
        pytest.skip("the compiled engine is not built")
    compiled = get_engine("compiled").likelihood_score
    rng = np.random.default_rng(12)
    checked = 0
    for scale in (10, 1000, 10**6, 10**9, 10**13, 2**55):
        for _ in range(2000):
            total = int(rng.integers(2, scale, endpoint=True))
            ca, cb = (int(x) for x in rng.integers(1, total, size=2, endpoint=True))
            same = bool(rng.integers(2))
            if same:
                n = int(rng.integers(1, max(ca // 2, 1), endpoint=True))
                cb = ca
            else:
                n = int(rng.integers(1, min(ca, cb, total - max(ca, cb) + min(ca, cb)), endpoint=True))
            want = likelihood_score(n, ca, cb, total, same)
            got = compiled(n, ca, cb, total, same)
            assert got == want or (math_isnan(got) and math_isnan(want)), (n, ca, cb, total, same)
            checked += 1
    assert checked == 12000


def math_isnan(x):
    return x != x


@pytest.mark.parametrize("scoring", ["frequency", "pmi", "likelihood"])
def test_inputs_untouched_and_any_buffer(engine, scoring):
    symbols, offsets, counts = pack([[0, 1, 0, 1], [1, 1, 1]], [3, 2])
    before = symbols.copy(), offsets.copy(), counts.copy()
    got = engine.train_merges(symbols, offsets, counts, vocab_len=2, vocab_size=6, scoring=scoring)
    assert all(np.array_equal(x, y) for x, y in zip(before, (symbols, offsets, counts)))
    as_lists = engine.train_merges(symbols.tolist(), offsets.tolist(), counts.tolist(), vocab_len=2,
                                   vocab_size=6, scoring=scoring)
    assert got == as_lists and got


def test_stops_at_vocab_size_and_min_frequency(engine):
    words, counts = [[0, 1, 2, 3]], [5]
    args = pack(words, counts)
    assert len(engine.train_merges(*args, vocab_len=4, vocab_size=6)) == 2
    assert engine.train_merges(*args, vocab_len=4, vocab_size=4) == []
    assert engine.train_merges(*args, vocab_len=4, vocab_size=99, min_frequency=6) == []
    assert len(engine.train_merges(*args, vocab_len=4, vocab_size=99, min_frequency=5)) == 3


def test_short_words_take_no_part(engine):
    got = engine.train_merges(*pack([[0], [1], [], [0, 1]], [9, 9, 9, 2]), vocab_len=2, vocab_size=9)
    assert got == [(0, 1, 2)]


def test_progress_called(engine):
    seen = []
    words = [[i % 7, (i * 3) % 7, (i * 5) % 7] for i in range(300)]
    merges = engine.train_merges(*pack(words), vocab_len=7, vocab_size=1000, min_frequency=1,
                                 progress=seen.append)
    assert seen and seen[-1] == len(merges)
    assert seen == sorted(seen)


@pytest.mark.parametrize("bad", [
    dict(scoring="bogus"),
    dict(vocab_len=1),                       # symbol 1 is not below vocab_len
    dict(counts=np.array([-1, 1])),
    dict(offsets=np.array([0, 3, 2])),
    dict(offsets=np.array([0, 2])),
    dict(symbols=np.array([0, 2**32 + 1, 1], dtype=np.int64)),  # would wrap to 1 as int32
    dict(symbols=np.array([0.0, 1.0, 1.0])),
    dict(counts=np.array([2**63, 1], dtype=np.uint64)),
])
def test_bad_input(engine, bad):
    symbols, offsets, counts = pack([[0, 1], [1]], [1, 1])
    kwargs = dict(symbols=symbols, offsets=offsets, counts=counts, vocab_len=2, vocab_size=5) | bad
    with pytest.raises(TokkitError):
        engine.train_merges(kwargs.pop("symbols"), kwargs.pop("offsets"), kwargs.pop("counts"), **kwargs)


def test_bad_merge_id(engine):
    with pytest.raises(TokkitError, match="merge_id"):
        engine.train_merges(*pack([[0, 1, 0, 1]]), vocab_len=2, vocab_size=5, merge_id=lambda a, b: 7)
    with pytest.raises(TokkitError, match="merge_id"):
        engine.train_merges(*pack([[0, 1, 0, 1]]), vocab_len=2, vocab_size=5, merge_id=lambda a, b: a)


# ---------------------------------------------------------------- merged strings that already exist

def train_strings(engine, word_counts, *, specials=("[UNK]",), vocab_size, min_frequency, scoring="frequency"):
    """Train on {word: count} the way tokenizers' BpeTrainer assigns ids; return (merges, vocab)."""
    vocab = list(specials) + sorted({ch for word in word_counts for ch in word} - set(specials))
    index = {tok: i for i, tok in enumerate(vocab)}

    def merge_id(a, b):
        tok = vocab[a] + vocab[b]
        if tok not in index:
            index[tok] = len(vocab)
            vocab.append(tok)
        return index[tok]

    words = list(word_counts)
    args = pack([[index[ch] for ch in w] for w in words], [word_counts[w] for w in words])
    triples = engine.train_merges(*args, vocab_len=len(vocab), vocab_size=vocab_size,
                                  min_frequency=min_frequency, scoring=scoring, merge_id=merge_id)
    for a, b, new in triples:
        assert vocab[new] == vocab[a] + vocab[b]
    return triples, vocab


def test_reused_id_hand_checked(engine):
    """A merged string that is already a token (here a special token) keeps that token's id."""
    # ids: [UNK]=0 ab=1 a=2 b=3; pairs: (a,b) = 2*3 + 2 = 8, (b,a) = 3.
    # 1. (a,b) -> "ab" exists: id 1, vocab stays at 4. abab -> [1, 1], ab -> [1]; (1,1) = 3, (b,a) -> 0.
    # 2. (1,1) -> "abab", new id 4. Nothing is left; vocab_size 10 is never reached.
    triples, vocab = train_strings(engine, {"abab": 3, "ab": 2}, specials=("[UNK]", "ab"), vocab_size=10,
                                   min_frequency=1)
    assert triples == [(2, 3, 1), (1, 1, 4)]
    assert vocab == ["[UNK]", "ab", "a", "b", "abab"]
    # the reused id joins its counts: "ab" + "ab" across a reused token and a word-initial "ab"
    triples, _ = train_strings(engine, {"abab": 3, "ab": 2}, specials=("[UNK]", "ab"), vocab_size=5,
                               min_frequency=1)
    assert triples == [(2, 3, 1), (1, 1, 4)]  # the reuse did not use up vocab room


def tokenizers_merges(word_counts, *, specials, vocab_size, min_frequency):
    """Merges and vocab from tokenizers' BpeTrainer on the same words (test-only oracle)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False,
                                  special_tokens=list(specials))
    lines = [" ".join([w] * n) for w, n in word_counts.items()]
    tok.train_from_iterator(lines, trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return merges, model["vocab"]


def last_occurrences(pairs):
    """tokenizers keeps one rank per pair (the last time it was merged): drop earlier repeats."""
    last = {p: i for i, p in enumerate(pairs)}
    return [p for i, p in enumerate(pairs) if last[p] == i]


def assert_same_as_tokenizers(engine, word_counts, specials, vocab_size, min_frequency):
    expected, expected_vocab = tokenizers_merges(word_counts, specials=specials, vocab_size=vocab_size,
                                                 min_frequency=min_frequency)
    triples, vocab = train_strings(engine, word_counts, specials=specials, vocab_size=vocab_size,
                                   min_frequency=min_frequency)
    assert last_occurrences([(vocab[a], vocab[b]) for a, b, _ in triples]) == expected
    assert {tok: i for i, tok in enumerate(vocab)} == expected_vocab


@pytest.mark.parametrize("word_counts", [
    {"aaaa": 5, "ba": 3, "baaa": 1},
    {"abc": 5, "ab": 4, "bcd": 3, "abcd": 2, "cabcab": 2},
    {"aaaaaaa": 3, "aaab": 2, "baaab": 2, "abababa": 2},
])
@pytest.mark.parametrize("specials", [("[UNK]",), ("ab", "abc", "aa"), ("b", "aaa", "bc", "ca")])
def test_reuse_matches_tokenizers(engine, word_counts, specials):
    """Special tokens spelled like merged strings force id reuse (plain concatenation never collides)."""
    assert_same_as_tokenizers(engine, word_counts, specials, 40, 1)


words_text = st.dictionaries(st.text("abc", min_size=1, max_size=7), st.integers(1, 6), min_size=1, max_size=10)


specials_text = st.lists(st.text("abc", min_size=1, max_size=4), max_size=4, unique=True)


@FAST
@given(words_text, st.integers(0, 3), st.integers(0, 30), specials_text)
def test_random_corpora_match_tokenizers(engine, word_counts, min_frequency, extra, specials):
    vocab_size = len(set(specials) | {c for w in word_counts for c in w}) + extra
    assert_same_as_tokenizers(engine, word_counts, specials, vocab_size, min_frequency)


@FAST
@given(words_text, st.integers(0, 3), st.sampled_from(["frequency", "pmi", "likelihood"]), specials_text)
def test_engines_agree_with_reuse(word_counts, min_frequency, scoring, specials):
    from tokkit.train.engine import get_engine

    runs = [train_strings(get_engine(name), word_counts, specials=specials, vocab_size=60,
                          min_frequency=min_frequency, scoring=scoring) for name in ("compiled", "python")]
    assert runs[0] == runs[1]


# ---------------------------------------------------------------- larger inputs

def test_engines_agree_on_a_larger_corpus():
    """Thousands of words: enough stale heap entries to exercise the compiled engine's compaction."""
    from tokkit.train.engine import COMPILED, get_engine

    if not COMPILED:
        pytest.skip("the compiled engine is not built")
    rng = np.random.default_rng(5)
    lengths = rng.integers(1, 12, size=4000)
    words = [list(rng.zipf(1.3, size=n) % 40) for n in lengths]
    counts = rng.zipf(1.5, size=len(words)) % 1000 + 1
    args = pack(words, counts)
    for scoring in ("frequency", "pmi", "likelihood"):
        runs = [get_engine(name).train_merges(*args, vocab_len=40, vocab_size=700, scoring=scoring)
                for name in ("compiled", "python")]
        assert runs[0] == runs[1] and len(runs[0]) > 300


def test_wiki_slice_matches_tokenizers(engine, corpus_dir):
    """One real file, whitespace words, characters as symbols: merge for merge as tokenizers."""
    path = corpus_dir / "en" / "wiki" / "000.txt"
    text = path.read_text(encoding="utf-8")
    word_counts = Counter(text.split())
    assert_same_as_tokenizers(engine, word_counts, ("[PAD]", "[UNK]"), 1500, 2)


def scrambled_ids(vocab_len, salt):
    """A merge_id that often answers with an existing id: forces the reuse paths (pairs merged twice...)."""
    size = [vocab_len]

    def merge_id(a, b):
        n = size[0]
        guess = (a * 7 + b * 3 + salt) % (n + 1)
        new = n if guess in (a, b) else guess
        size[0] += new == n
        return new

    return merge_id


@FAST
@given(corpora, st.integers(0, 3), st.integers(0, 50), st.sampled_from(["frequency", "pmi", "likelihood"]))
def test_engines_agree_with_arbitrary_reuse(corpus, min_frequency, salt, scoring):
    from tokkit.train.engine import get_engine

    words, counts = [w for w, _ in corpus], [c for _, c in corpus]
    runs = [get_engine(name).train_merges(*pack(words, counts), vocab_len=4, vocab_size=30, min_frequency=min_frequency,
                                          scoring=scoring, merge_id=scrambled_ids(4, salt))
            for name in ("compiled", "python")]
    assert runs[0] == runs[1]


@pytest.mark.corpus
def test_likelihood_engines_agree_on_wiki_text(corpus_dir):
    """Real word counts (large symbol counts, long waits in the heap): the compiled engine's bounds
    pick exactly the pairs the Python twin's full scan picks."""
    from tokkit.train.engine import COMPILED, get_engine

    if not COMPILED:
        pytest.skip("the compiled engine is not built")
    text = (corpus_dir / "en" / "wiki" / "000.txt").read_text(encoding="utf-8")[:150_000].lower()
    word_counts = Counter(text.split())
    chars = sorted({ch for w in word_counts for ch in w})
    index = {ch: i for i, ch in enumerate(chars)}
    words = list(word_counts)
    args = pack([[index[ch] for ch in w] for w in words], [word_counts[w] for w in words])
    runs = [get_engine(name).train_merges(*args, vocab_len=len(chars), vocab_size=len(chars) + 300,
                                          scoring="likelihood") for name in ("compiled", "python")]
    assert runs[0] == runs[1] and len(runs[0]) == 300
