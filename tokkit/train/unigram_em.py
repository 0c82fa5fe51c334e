"""Unigram pruning (Kudo 2018, as sentencepiece's trainer does it) over counted words: seed pieces,
EM passes and pruning rounds down to the target, then the final cut.

The lattice loops run in `tokkit._native.unigram_train` (or its readable twin
`tokkit.train.unigram_py`, with TOKKIT_PURE_PYTHON=1); tokkit.train.unigram reads the options and
writes the tokenizer.

>>> required_chars(*as_arrays(["\u2581ab", "\u2581a"]), np.array([1, 1]), 0.5)
{'a': 2, '▁': 2}
"""
from __future__ import annotations

import math
import unicodedata

import numpy as np

from tokkit._native import pure_python_requested
from tokkit._progress import Progress
from tokkit.errors import OutOfMemory
from tokkit.train import unigram_py

try:
    from tokkit._native import unigram_train as _compiled
except ImportError:  # a checkout that was never built: the twin does the same, slowly
    _compiled = None

SPACE = "\u2581"  # ▁, Metaspace's word-start marker
UNK_PENALTY = 10.0  # an unknown character scores this much below the lowest piece (as tokenizers' Unigram)
SHRINKING_FACTOR = 0.75
EM_STEPS = 2  # EM passes before each pruning round
MIN_EXPECTED = 0.5  # the M-step drops pieces expected less often than this
VOCAB_SLACK = 1.1  # pruning stops this far above the target; the final cut takes the best-scored
MAX_SEEDS = 1_000_000
SEEDS_PER_PIECE = 15  # seed substrings per target piece (sentencepiece seeds 1M; 15 x 16k keeps its quality)
SEED_MIN_COUNT = 8  # seeds are first looked for among the substrings seen this often (see top_substrings)
PENALTY_STEP = 1e-4


def lattice_engine(name: str | None = None):
    """The module with e_step, viterbi_counts and alternatives: compiled, or the Python twin.

    >>> lattice_engine("python").__name__
    'tokkit.train.unigram_py'
    """
    if name is None:
        name = "python" if (pure_python_requested() or _compiled is None) else "compiled"
    if name == "python":
        return unigram_py
    if name == "compiled":
        if _compiled is None:
            raise ImportError("tokkit's compiled unigram kernel is not built; reinstall with: pip install -e .")
        return _compiled
    raise ValueError(f"unknown engine {name!r}; expected 'compiled' or 'python'")


def digamma(x):
    """The digamma function for x > 0 (a float or an array): shift up with psi(x) = psi(x + 1) - 1/x, then
    the asymptotic series.

    >>> round(digamma(1.0), 10)  # minus the Euler-Mascheroni constant
    -0.5772156649
    """
    x = np.array(x, dtype=np.float64)
    shift = np.zeros_like(x)
    while (low := x < 10.0).any():
        shift[low] -= 1.0 / x[low]
        x[low] += 1.0
    inv2 = 1.0 / (x * x)
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
    out = shift + np.log(x) - 0.5 / x - series
    return float(out) if out.ndim == 0 else out


def script_of(ch: str) -> str | None:
    """A coarse script class: pieces never mix two (None, for marks, joins any).

    >>> script_of("a"), script_of("7"), script_of(","), script_of("\\u0301"), script_of("か")
    ('LATIN', 'NUMBER', 'COMMON', None, 'HAN')
    """
    cat = unicodedata.category(ch)
    if cat[0] == "M":
        return None
    if cat[0] == "N":
        return "NUMBER"
    if cat[0] != "L":
        return "COMMON"
    first = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]
    return "HAN" if first in ("CJK", "HIRAGANA", "KATAKANA") else first


def spelled(cps: np.ndarray, offsets: np.ndarray, which: np.ndarray) -> list[str]:
    """The strings cps[offsets[k]:offsets[k + 1]] for k in `which`, decoded all at once.

    >>> spelled(np.array([104, 105, 121, 111], dtype=np.int32), np.array([0, 2, 4]), np.array([1, 0]))
    ['yo', 'hi']
    """
    starts, lengths = offsets[which], offsets[which + 1] - offsets[which]
    ends = np.cumsum(lengths)
    gather = np.arange(int(ends[-1]) if len(ends) else 0) - np.repeat(ends - lengths - starts, lengths)
    joined = cps[gather].astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    return [joined[b - n:b] for b, n in zip(ends.tolist(), lengths.tolist())]


def as_arrays(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as flat int32 code points and int64 offsets (the kernels' input)."""
    lengths = np.array(list(map(len, strings)), dtype=np.int64).reshape(-1)
    offsets = np.zeros(len(strings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cps = np.frombuffer("".join(strings).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    return cps, offsets


class PieceTrainer:
    """One training run: the words, the required characters, the current pieces and scores (`algo`: the
    Unigram options, tokkit.train.unigram.Unigram)."""

    def __init__(self, algo, words: dict[str, int], target: int, engine, threads: int = 1):
        self.algo, self.target, self.engine, self.threads = algo, target, engine, threads
        self.words = words
        self.word_cps, self.word_offsets = as_arrays(list(words))
        self.counts = np.array(list(words.values()), dtype=np.int64)
        self.required = required_chars(self.word_cps, self.word_offsets, self.counts, algo.character_coverage)

    def run(self, min_frequency: int, progress: bool) -> list[tuple[str, float]]:
        """Seed, then EM and prune until near the target, then the final cut: [(piece, score)] best first.

        Memory that runs out in a lattice loop is one OutOfMemory: no pass goes on with a lattice it
        could not build."""
        try:
            return self._run(min_frequency, progress)
        except MemoryError:
            raise OutOfMemory(f"out of memory while training Unigram pieces over {len(self.counts):,} distinct "
                              "words; nothing was written") from None

    def _run(self, min_frequency: int, progress: bool) -> list[tuple[str, float]]:
        pieces, scores = self.seeds(min_frequency)
        desired = int(self.target * VOCAB_SLACK)
        with Progress(max(len(pieces) - desired, 0), desc="pruning", unit=" pieces", enabled=progress) as bar:
            start = len(pieces)
            while True:
                for _ in range(EM_STEPS):
                    pieces, scores = self.em_step(pieces, scores)
                bar.set(min(start - len(pieces), bar.total or 0))
                if len(pieces) <= desired:
                    break
                kept = self.prune(pieces, scores, desired)
                if len(kept) == len(pieces):
                    break
                pieces, scores = [pieces[i] for i in kept], scores[kept]
        return self.finalize(pieces, scores)

    def seeds(self, min_frequency: int) -> tuple[list[str], np.ndarray]:
        """The required characters and the top substrings by count x length, scored as log frequencies."""
        limit = self.algo.seed_size or min(MAX_SEEDS, max(SEEDS_PER_PIECE * self.target, 1000))
        values, spelled = self.top_substrings(max(min_frequency, 1), limit)
        ranked = sorted(zip(values, spelled), key=lambda x: (-x[0], x[1]))[:limit]
        seeds = sorted([(float(c), ch) for ch, c in self.required.items()] + [(float(v), s) for v, s in ranked],
                       key=lambda x: (-x[0], x[1]))
        freqs = np.array([f for f, _ in seeds], dtype=np.float64)
        return [s for _, s in seeds], np.log(freqs) - math.log(freqs.sum())

    def top_substrings(self, min_count: int, limit: int) -> tuple[list[int], list[str]]:
        """(count x length, substring) of every substring tied with the limit-th best or better.

        Counting only the substrings seen SEED_MIN_COUNT times or more is much cheaper, and exact
        whenever `limit` of them are worth at least SEED_MIN_COUNT x max_piece_length: a substring
        seen fewer times is worth less than that, so it could not be among the best.
        """
        longest = self.algo.max_piece_length
        classes = self.char_classes()
        for floor in sorted({max(SEED_MIN_COUNT, min_count), min_count}, reverse=True):
            cps, offsets, counts = self.engine.count_substrings(self.word_cps, self.word_offsets, self.counts,
                                                                classes, max_length=longest, min_count=floor)
            value = counts * np.diff(offsets)
            if floor == min_count or np.count_nonzero(value >= floor * longest) >= limit:
                break
        if len(value) > limit:  # only those tied with the limit-th best or better need spelling out
            cut = np.partition(value, len(value) - limit)[len(value) - limit]
            chosen = np.flatnonzero(value >= cut)
        else:
            chosen = np.arange(len(value))
        return value[chosen].tolist(), spelled(cps, offsets, chosen)

    def char_classes(self) -> np.ndarray:
        """Each word code point's class for count_substrings: not kept, ▁, alone (split digits), or its script."""
        unique, inverse = np.unique(self.word_cps, return_inverse=True)
        scripts: dict[str, int] = {}
        table = np.empty(len(unique), dtype=np.int32)
        for k, cp in enumerate(unique.tolist()):
            ch = chr(cp)
            if ch not in self.required:
                table[k] = unigram_py.BAD
            elif ch == SPACE:
                table[k] = unigram_py.MARKER
            elif self.algo.split_digits and ch.isdigit():
                table[k] = unigram_py.ALONE
            else:
                script = script_of(ch)
                table[k] = 0 if script is None else scripts.setdefault(script, len(scripts) + 1)
        return table[inverse.reshape(-1)]

    def em_step(self, pieces: list[str], scores: np.ndarray) -> tuple[list[str], np.ndarray]:
        """E: expected counts by forward-backward; M: drop the rare, score digamma(count) - digamma(total)."""
        p_cps, p_off = as_arrays(pieces)
        expected, _ = self.engine.e_step(p_cps, p_off, scores, self.word_cps, self.word_offsets, self.counts,
                                         unk_score=float(scores.min()) - UNK_PENALTY, threads=self.threads)
        keep = np.flatnonzero(expected >= MIN_EXPECTED)
        kept = expected[keep]
        return [pieces[i] for i in keep.tolist()], digamma(kept) - digamma(float(kept.sum()))

    def prune(self, pieces: list[str], scores: np.ndarray, desired: int) -> list[int]:
        """Indices of the pieces kept: those without alternative, then the costliest to remove."""
        p_cps, p_off = as_arrays(pieces)
        unk = float(scores.min()) - UNK_PENALTY
        kind, alt, alt_off = self.engine.alternatives(p_cps, p_off, scores, unk_score=unk)
        freq = self.engine.viterbi_counts(p_cps, p_off, scores, self.word_cps, self.word_offsets, self.counts,
                                          unk_score=unk, threads=self.threads)
        on_path = freq > 0  # a piece never on a best path, or split anyway (kind 0), is free to go
        kept = np.flatnonzero(on_path & (kind == 1))
        candidates = np.flatnonzero(on_path & (kind == 2))
        loss = removal_loss(freq, alt, alt_off, float(self.counts.sum()))[candidates]
        size = max(desired, int(SHRINKING_FACTOR * len(pieces)))
        best = candidates[np.lexsort((candidates, -loss))][:max(size - len(kept), 0)]
        return sorted(kept.tolist() + best.tolist())

    def finalize(self, pieces: list[str], scores: np.ndarray) -> list[tuple[str, float]]:
        """Every required character (lost ones just below the lowest score), then the best pieces to the target."""
        score = dict(zip(pieces, scores.tolist()))
        low = min(score.values()) if score else 0.0
        final: dict[str, float] = {}
        penalty = 0.0
        for ch, _ in sorted(self.required.items(), key=lambda kv: (-kv[1], kv[0])):
            if ch in score:
                final[ch] = score[ch]
            else:
                final[ch] = low + penalty
                penalty += PENALTY_STEP
        for piece, s in sorted(score.items(), key=lambda kv: (-kv[1], kv[0])):
            if len(final) >= self.target:
                break
            final.setdefault(piece, s)
        return sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))


def removal_loss(freq: np.ndarray, alt: np.ndarray, alt_offsets: np.ndarray, total_words: float) -> np.ndarray:
    """For each piece, the log-likelihood lost when its Viterbi count moves to its alternative's pieces.

    A piece with count f among all pieces' total T scores log(f / T); removed, each alternative
    piece n gets f more, out of T + f (len(alt) - 1). The loss is weighted by the piece's share of
    the words, f / total_words (meaningless for pieces without an alternative; the caller skips them).

    >>> removal_loss(np.array([6.0, 2.0, 2.0]), np.array([1, 2], dtype=np.int32), np.array([0, 2, 2, 2]), 10.0)
    array([0.52528124, 0.        , 0.        ])
    """
    n = len(freq)
    lengths = np.diff(alt_offsets)
    owner = np.repeat(np.arange(n), lengths)
    with np.errstate(divide="ignore", invalid="ignore"):  # pieces off every path (f = 0) are skipped
        alt_logs = np.bincount(owner, weights=np.log(freq[alt] + freq[owner]), minlength=n)
        total = float(freq.sum())
        logprob_alt = alt_logs - lengths * np.log(total + freq * (lengths - 1))
        loss = freq / total_words * (np.log(freq) - math.log(total) - logprob_alt)
    return np.where(lengths > 0, loss, 0.0)


def required_chars(word_cps: np.ndarray, word_offsets: np.ndarray, counts: np.ndarray,
                   coverage: float) -> dict[str, int]:
    """The most frequent characters (with ▁) until `coverage` of all character occurrences: {char: count}.

    >>> cps, offsets = as_arrays(["▁aab", "▁b"])
    >>> required_chars(cps, offsets, np.array([3, 1]), 0.7)
    {'a': 6, 'b': 4}
    """
    unique, inverse = np.unique(word_cps, return_inverse=True)
    weights = np.repeat(counts, np.diff(word_offsets)).astype(np.float64)  # exact below 2**53 occurrences
    totals = np.bincount(inverse.reshape(-1), weights=weights, minlength=len(unique)).astype(np.int64)
    threshold = int(totals.sum()) * coverage
    out, seen = {}, 0
    for ch, c in sorted(zip(map(chr, unique.tolist()), totals.tolist()), key=lambda kv: (-kv[1], kv[0])):
        if seen >= threshold:
            break
        seen += c
        out[ch] = c
    return out
