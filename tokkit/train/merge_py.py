"""The merge engine in plain Python: count pairs, pick the best, merge, repeat.

This is the readable twin of the compiled `tokkit._native.merge`: the fallback when the
extension is missing, and the oracle the tests hold the compiled engine to. Both
expose `train_merges` with the same signature and give identical output.

Three scorings:

* ``"frequency"`` (BPE): the most frequent pair wins, ties to the smaller
  (left, right). The bookkeeping mirrors `tokenizers`' BpeTrainer step for step
  (heap entries that carry the words they came from, pair counts adjusted only
  around merged occurrences) so that merge lists agree with it even when a merged
  string already exists in the vocabulary.
* ``"pmi"`` (WordPiece): the pair with the largest
  ``count_ab / (float(count_a) * float(count_b))`` wins, ties to the higher
  ``count_ab``, then the smaller (left, right). Merges apply to every word.
* ``"likelihood"`` (WordPiece): the pair whose merge most raises the log-likelihood
  of the training data under a unigram model of the current segmentation (see
  `likelihood_score`); ties and ``min_frequency`` as for ``"pmi"``.

>>> import numpy as np
>>> word = np.array([0, 0, 0, 1, 3, 0, 0, 0, 1, 0, 2], dtype=np.int32)   # "aaabdaaabac"
>>> train_merges(word, np.array([0, 11]), np.array([1]), vocab_len=4, vocab_size=7, min_frequency=1)
[(0, 0, 4), (0, 1, 5), (4, 5, 6)]
"""
from __future__ import annotations

import heapq
import math
from collections import defaultdict
from typing import Callable, Optional

from tokkit._native.merge_inputs import PROGRESS_EVERY, check_inputs, check_new_id


def train_merges(symbols, offsets, counts, *, vocab_len: int, vocab_size: int, min_frequency: int = 2,
                 scoring: str = "frequency", merge_id: Optional[Callable[[int, int], int]] = None,
                 progress: Optional[Callable[[int], object]] = None) -> list[tuple[int, int, int]]:
    """Learn merges until the vocab holds `vocab_size` ids or no pair reaches `min_frequency`.

    Returns [(left id, right id, new id), ...] in merge order (see the module docstring).
    """
    symbols, offsets, counts = check_inputs(symbols, offsets, counts, vocab_len, vocab_size, scoring)
    # a word seen 0 times takes no part (tokenizers never sees one): it must not even carry a pair
    words = [symbols[offsets[i]:offsets[i + 1]].tolist() if counts[i] else [] for i in range(len(counts))]
    vocab = _Vocab(vocab_len, vocab_size, merge_id, progress)
    train = {"frequency": _train_frequency, "pmi": _train_pmi, "likelihood": _train_likelihood}[scoring]
    train(words, counts.tolist(), min_frequency, vocab)
    if progress is not None:
        progress(len(vocab.merges))
    return vocab.merges


class _Vocab:
    """Hands out ids for merged tokens and records the merges."""

    def __init__(self, size, limit, merge_id, progress):
        self.size, self.limit, self.merge_id, self.progress = size, limit, merge_id, progress
        self.merges: list[tuple[int, int, int]] = []

    def full(self) -> bool:
        return self.size >= self.limit

    def add(self, a: int, b: int) -> int:
        """Record the merge of (a, b); return the id of the merged token."""
        new = self.size if self.merge_id is None else check_new_id(self.merge_id(a, b), a, b, self.size)
        if new == self.size:
            self.size += 1
        self.merges.append((a, b, new))
        if self.progress is not None and len(self.merges) % PROGRESS_EVERY == 0:
            self.progress(len(self.merges))
        return new


def _pairs(word):
    return zip(word, word[1:])


# ---------------------------------------------------------------- frequency (tokenizers' BpeTrainer)

def _train_frequency(words, weights, min_frequency, vocab):
    """Most frequent pair first, with tokenizers' heap of (count, pair, words) entries."""
    pair_count = defaultdict(int)
    where = defaultdict(set)  # pair -> words where it was (re)created
    for i, word in enumerate(words):
        for pair in _pairs(word):
            pair_count[pair] += weights[i]
            where[pair].add(i)
    heap = []  # entries (-count, pair, seq, words); seq breaks exact ties first-in first-out
    seq = 0

    def push(count, pair, positions):
        nonlocal seq
        heapq.heappush(heap, (-count, pair, seq, positions))
        seq += 1

    def push_fresh(where):
        for pair in sorted(where):
            if pair_count[pair] > 0:
                push(pair_count[pair], pair, where[pair])

    push_fresh(where)
    while not vocab.full() and heap:
        neg, pair, _, positions = heapq.heappop(heap)
        if -neg != pair_count[pair]:  # stale: re-queue with today's count, same words
            push(pair_count[pair], pair, positions)
            continue
        if -neg < 1 or -neg < min_frequency:
            break
        a, b = pair
        new = vocab.add(a, b)
        where = defaultdict(set)
        for i in sorted(positions):  # only the words this entry carries (tokenizers does the same)
            for changed, delta in _merge_word_tokenizers(words[i], a, b, new):
                pair_count[changed] += delta * weights[i]
                if delta > 0:
                    where[changed].add(i)
        push_fresh(where)


def _merge_word_tokenizers(word, a, b, new):
    """Merge (a, b) left to right in place; return tokenizers' list of (pair, +1/-1) changes.

    The merged pair itself is never decremented (except through overlaps): that is how
    tokenizers keeps its books, and parity needs the same books.
    """
    changes = []
    i = 0
    while i < len(word) - 1:
        if word[i] == a and word[i + 1] == b:
            if i > 0:
                changes += [((word[i - 1], a), -1), ((word[i - 1], new), 1)]
            word[i:i + 2] = [new]
            if i + 1 < len(word):
                changes += [((b, word[i + 1]), -1), ((new, word[i + 1]), 1)]
        i += 1
    return changes


# ---------------------------------------------------------------- pmi (WordPiece)

def pmi_score(count_ab: int, count_a: int, count_b: int) -> float:
    """The float64 score both engines compare: count_ab / (count_a * count_b)."""
    return count_ab / (float(count_a) * float(count_b))


def _best_pair(pair_count, threshold, score):
    """The pair with the highest score(a, b, count) among those seen `threshold` times; ties go to
    the higher count, then the smaller (left, right). None when no pair qualifies."""
    best, best_key = None, None
    for (a, b), n in pair_count.items():
        if n >= threshold:
            key = (score(a, b, n), n, -a, -b)
            if best_key is None or key > best_key:
                best, best_key = (a, b), key
    return best


def _count_symbols_and_pairs(words, weights):
    """Weighted symbol counts, pair counts, and pair -> the words that may hold it (a superset)."""
    symbol_count = defaultdict(int)
    pair_count = defaultdict(int)
    where = defaultdict(set)
    for i, word in enumerate(words):
        for s in word:
            symbol_count[s] += weights[i]
        for pair in _pairs(word):
            pair_count[pair] += weights[i]
            where[pair].add(i)
    return symbol_count, pair_count, where


def _train_pmi(words, weights, min_frequency, vocab):
    """Best score first, looking at every candidate pair at every step (no stale scores possible)."""
    symbol_count, pair_count, where = _count_symbols_and_pairs(words, weights)
    threshold = max(min_frequency, 1)
    while not vocab.full():
        best = _best_pair(pair_count, threshold, lambda a, b, n: pmi_score(n, symbol_count[a], symbol_count[b]))
        if best is None:
            break
        a, b = best
        new = vocab.add(a, b)
        for i in sorted(where.pop(best)):
            word, weight = words[i], weights[i]
            for pair in _pairs(word):  # take the word's pairs out, merge, put them back
                pair_count[pair] -= weight
            merged = _merge_word(word, a, b, new)
            for pair in _pairs(word):
                pair_count[pair] += weight
                where[pair].add(i)
            symbol_count[a] -= merged * weight
            symbol_count[b] -= merged * weight
            symbol_count[new] += merged * weight
        for pair in [p for p, n in pair_count.items() if n == 0]:
            del pair_count[pair]


def _merge_word(word, a, b, new) -> int:
    """Merge (a, b) left to right, without overlap, in place; return how many were merged."""
    out, i, merged = [], 0, 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
            merged += 1
        else:
            out.append(word[i])
            i += 1
    word[:] = out
    return merged


# ---------------------------------------------------------------- likelihood (WordPiece)

def xlogx(x: int) -> float:
    """f(x) = x ln x on a count, with f(0) = 0: float(x) * math.log(float(x)).

    >>> xlogx(0), xlogx(1), round(xlogx(10), 6)
    (0.0, 0.0, 23.025851)
    """
    if x <= 0:
        return 0.0
    y = float(x)
    return y * math.log(y)


def likelihood_score(n: int, count_a: int, count_b: int, total: int, same: bool = False) -> float:
    """The float64 gain both engines compare: the change in log-likelihood when a and b merge.

    The data's log-likelihood under a unigram model of its current segmentation is
    ``sum_x f(c_x) - f(N)`` with f(x) = x ln x, c_x the symbol counts and N their sum.
    Merging a and b n times turns n a's and n b's into n new symbols, so
    ``gain = f(n) + f(c_a - n) + f(c_b - n) - f(c_a) - f(c_b) + f(N) - f(N - n)``,
    with n = count_ab (occurrences of ab cannot overlap when a != b).

    For a == b (``same=True``) the left-to-right pass merges floor(k / 2) pairs in each
    run of k a's, so n is the sum of those (not count_aa, which counts k - 1 per run);
    c_a loses 2n, the new symbol gets n and N falls by n:
    ``gain = f(n) + f(c_a - 2n) - f(c_a) + f(N) - f(N - n)``.

    The merged symbol is scored as new (count 0 before the merge). Both engines sum
    the terms in this order, so the doubles agree bit for bit:
    ``(f(N) - f(N - n)) + (f(n) + ((f(c_a - n) - f(c_a)) + (f(c_b - n) - f(c_b))))``,
    and ``(f(N) - f(N - n)) + (f(n) + (f(c_a - 2n) - f(c_a)))`` for a == b.

    >>> round(likelihood_score(4, 4, 4, 8), 3)   # "abababab": 8 ln 2, from p = 1/2 each to p = 1
    5.545
    >>> likelihood_score(1, 5, 5, 100) < likelihood_score(5, 5, 5, 100)
    True
    """
    big = xlogx(total) - xlogx(total - n)
    if same:
        return big + (xlogx(n) + (xlogx(count_a - 2 * n) - xlogx(count_a)))
    return big + (xlogx(n) + ((xlogx(count_a - n) - xlogx(count_a)) + (xlogx(count_b - n) - xlogx(count_b))))


def half_runs(word, x) -> int:
    """How many (x, x) merges a left-to-right pass makes in word: floor(k / 2) per run of k x's.

    >>> half_runs([0, 0, 0, 1, 0, 0, 0, 0], 0)
    3
    """
    total = run = 0
    for s in word:
        if s == x:
            run += 1
        else:
            total += run // 2
            run = 0
    return total + run // 2


def _train_likelihood(words, weights, min_frequency, vocab):
    """Best gain first, looking at every candidate pair at every step (no stale scores possible)."""
    symbol_count, pair_count, where = _count_symbols_and_pairs(words, weights)
    runs = defaultdict(int)  # x -> (x, x) merges a left-to-right pass would make, weighted
    for i, word in enumerate(words):
        for x in set(word):
            runs[x] += half_runs(word, x) * weights[i]
    total = sum(symbol_count.values())
    threshold = max(min_frequency, 1)
    while not vocab.full():
        best = _best_pair(pair_count, threshold, lambda a, b, n: likelihood_score(
            runs[a] if a == b else n, symbol_count[a], symbol_count[b], total, a == b))
        if best is None:
            break
        a, b = best
        new = vocab.add(a, b)
        touched = {a, b, new}
        for i in sorted(where.pop(best)):
            word, weight = words[i], weights[i]
            for pair in _pairs(word):
                pair_count[pair] -= weight
            for x in touched:
                runs[x] -= half_runs(word, x) * weight
            merged = _merge_word(word, a, b, new)
            for pair in _pairs(word):
                pair_count[pair] += weight
                where[pair].add(i)
            for x in touched:
                runs[x] += half_runs(word, x) * weight
            symbol_count[a] -= merged * weight
            symbol_count[b] -= merged * weight
            symbol_count[new] += merged * weight
            total -= merged * weight
        for pair in [p for p, n in pair_count.items() if n == 0]:
            del pair_count[pair]
