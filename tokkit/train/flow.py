"""The training flow shared by the algorithms: count, build the alphabet, merge, wrap.

An algorithm (bytelevel.py, bpe.py, wordpiece.py) says how to count words, which symbols a word
is made of, and how two token strings join; everything else happens here once. unigram.py
shares the counting and then trains pieces from the counted words itself (`train_words`).

>>> from tokkit.train import train
>>> tok = train(texts=["hug pug pun bun hugs"] * 5, algo="bpe", vocab_size=40)
>>> tok.vocab_size <= 40
True
"""
from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterable

import numpy as np

from tokkit._native.symbols import symbolize
from tokkit._progress import Progress
from tokkit.errors import TokkitError
from tokkit.text.corpus import Source
from tokkit.text.count import WordTable, count_words
from tokkit.tokenizer.files import MAX_TOKEN_CHARS
from tokkit.tokenizer.vocab import BERT_SPECIALS
from tokkit.train.dask_count import count_words_dask
from tokkit.train.engine import get_engine

DEFAULT_SPECIALS = BERT_SPECIALS  # one list: what a trained vocabulary starts with is what loading looks for
UNK = "[UNK]"


@dataclass
class Alphabet:
    """The initial symbols of an algorithm and the words rewritten as their ids."""

    tokens: list[str]  # alphabet token strings, in id order (after the specials)
    symbols: np.ndarray  # int32, flat symbol ids of the kept words
    offsets: np.ndarray  # int64, n_kept + 1
    counts: np.ndarray  # int64, counts of the kept words
    skipped_words: int = 0  # distinct words left out for holding a character outside the alphabet
    skipped_occurrences: int = 0


@dataclass
class Algorithm:
    """What differs between trainers. Subclasses live in bytelevel.py, bpe.py and wordpiece.py."""

    name: str = ""
    needs_unk: bool = True
    scoring: str = "frequency"
    default_limit_alphabet: int | None = 1000

    def count_mode(self) -> tuple[str, dict]:
        raise NotImplementedError

    def alphabet(self, table: WordTable, base: int, limit: int | None) -> Alphabet:
        """The alphabet tokens (ids base, base+1, ...) and the kept words as symbol ids."""
        raise NotImplementedError

    def join(self, left: str, right: str) -> str:
        return left + right

    def build(self, vocab: list[str], merges: list[tuple[str, str]], specials: list[str]):
        raise NotImplementedError


@dataclass
class Summary:
    """What a training run did, for the one-line report."""

    algo: str
    vocab_size: int = 0
    specials: int = 0
    alphabet: int = 0
    merges: int = 0
    pieces: int = 0  # unigram: the pieces trained (it has no merges)
    words: int = 0
    distinct_words: int = 0
    skipped_words: int = 0
    skipped_occurrences: int = 0
    pruned_words: int = 0
    pruned_occurrences: int = 0
    seconds: dict = field(default_factory=dict)

    def line(self) -> str:
        skipped = ""
        if self.skipped_words:
            skipped = (f"; {self.skipped_words:,} distinct words ({self.skipped_occurrences:,} occurrences) "
                       "skipped for characters outside the alphabet")
        if self.pruned_words:
            skipped += (f"; {self.pruned_words:,} distinct words ({self.pruned_occurrences:,} occurrences) "
                        "pruned below --min-word-count")
        secs = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        learned = f"{self.pieces:,} pieces" if self.algo == "unigram" else f"{self.merges:,} merges"
        return (f"trained {self.algo}: {self.vocab_size:,} tokens ({self.specials} specials, "
                f"{self.alphabet:,} alphabet, {learned}) from {self.words:,} words "
                f"({self.distinct_words:,} distinct){skipped} [{secs}]")


def check_special_tokens(special_tokens) -> list[str]:
    """The user's special tokens as a list, or a TokkitError naming the first one no vocabulary file can hold.

    A special token must be a non-empty str of valid text (no lone surrogate, which is what an
    undecodable byte on the command line becomes), without control characters or line breaks,
    and without whitespace at either end: vocab.txt holds one token a line and its readers strip
    the line ends. A token may not be given twice. Training checks this before any work starts.

    >>> check_special_tokens(["[X]", "<|end of text|>"])
    ['[X]', '<|end of text|>']
    >>> check_special_tokens(["[X]\\n"])
    Traceback (most recent call last):
    tokkit.errors.TokkitError: special token '[X]\\n' holds a line break (U+000A): vocab.txt holds one token a line
    """
    if special_tokens is None:
        return []
    if isinstance(special_tokens, (str, bytes)):
        raise TokkitError(f"special_tokens must be a list of str, not a single {type(special_tokens).__name__}")
    out: list[str] = []
    given: set[str] = set()
    for tok in special_tokens:
        if not isinstance(tok, str):
            raise TokkitError(f"special token {tok!r} is {type(tok).__name__}, not str")
        tok = str(tok)
        if not tok or tok.isspace():
            raise TokkitError(f"special token {tok!r} is empty")
        problem = special_token_problem(tok)
        if problem:
            raise TokkitError(f"special token {tok!r} {problem}")
        if tok in given:
            raise TokkitError(f"special token {tok!r} is given twice")
        given.add(tok)
        out.append(tok)
    return out


def special_token_problem(tok: str) -> str | None:
    """Why `tok` cannot be a special token (see check_special_tokens), or None when it can."""
    for ch in tok:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            hint = f", from the undecodable byte 0x{ord(ch) - 0xDC00:02X}" if 0xDC80 <= ord(ch) <= 0xDCFF else ""
            return f"is not valid text: it holds the lone surrogate U+{ord(ch):04X}{hint}"
        if ch in _LINE_BREAKS or cat in ("Zl", "Zp"):
            return f"holds a line break (U+{ord(ch):04X}): vocab.txt holds one token a line"
    if tok != tok.strip():
        return "starts or ends with whitespace, which a vocab.txt line cannot keep"
    if len(tok) > MAX_TOKEN_CHARS:
        return f"has {len(tok):,} characters; a vocab.txt token has at most {MAX_TOKEN_CHARS:,}"
    for ch in tok:
        if unicodedata.category(ch) == "Cc":
            return f"holds the control character U+{ord(ch):04X}"
    return None


# Every character str.splitlines() breaks a line at (readers of vocab.txt differ in which they use).
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def resolve_specials(special_tokens, *, default_specials: bool, algo: Algorithm) -> list[str]:
    """Defaults first (bytelevel has no [UNK]; unigram's are <pad> </s> <unk>), then the user's; the unknown
    token is kept where the model needs it."""
    defaults, unk = getattr(algo, "default_specials", DEFAULT_SPECIALS), getattr(algo, "unk_token", UNK)
    base = [t for t in defaults if algo.needs_unk or t != unk] if default_specials else []
    if algo.needs_unk and unk not in base:
        base.insert(0, unk)
    out = list(base)
    for tok in check_special_tokens(special_tokens):
        if tok not in out:  # re-stating a default is harmless
            out.append(tok)
    return out


def run_training(
    algo: Algorithm,
    *,
    sources: list[Source] | None,
    texts: Iterable[str] | None,
    vocab_size: int,
    min_frequency: int,
    special_tokens: list[str],
    limit_alphabet: int | None,
    workers: int | None,
    errors: str,
    progress: bool,
    engine: str | None = None,
    client=None,
    min_word_count: int = 0,
):
    """Train and return (Tokenizer, Summary). With a dask `client`, counting runs on its cluster."""
    if vocab_size < 1:
        raise TokkitError(f"--vocab-size must be positive, got {vocab_size}")
    if min_frequency < 0:
        raise TokkitError(f"--min-frequency must be >= 0, got {min_frequency}")
    summary = Summary(algo=algo.name, specials=len(special_tokens))
    t0 = time.perf_counter()
    mode, options = algo.count_mode()
    if client is not None:
        if sources is None:
            raise TokkitError("training on a cluster reads files; texts are counted locally")
        table, dstats = count_words_dask(client, sources, mode=mode, options=options, errors=errors,
                                         min_word_count=min_word_count, progress=progress)
        summary.pruned_words, summary.pruned_occurrences = dstats.pruned_words, dstats.pruned_occurrences
    else:
        if min_word_count > 1:
            raise TokkitError("--min-word-count applies to cluster training (--scheduler) only")
        table = count_words(sources, texts=texts, mode=mode, options=options, workers=workers,
                            errors=errors, progress=progress)
    summary.words, summary.distinct_words = table.total, len(table)
    t1 = time.perf_counter()
    summary.seconds["count"] = t1 - t0
    if getattr(algo, "trains_pieces", False):  # unigram: pieces from the words, no alphabet or merges
        tokenizer = algo.train_words(table, vocab_size=vocab_size, min_frequency=min_frequency,
                                     special_tokens=special_tokens, progress=progress, engine=engine, summary=summary,
                                     workers=workers)
        summary.vocab_size = tokenizer.vocab_size
        summary.seconds["train"] = time.perf_counter() - t1
        return tokenizer, summary

    index = {tok: i for i, tok in enumerate(special_tokens)}
    if limit_alphabet is None:
        limit_alphabet = algo.default_limit_alphabet
    elif limit_alphabet < 1:
        raise TokkitError(f"--limit-alphabet must be positive, got {limit_alphabet}")
    base = len(special_tokens)
    alpha = algo.alphabet(table, base, limit_alphabet)
    del table
    vocab = list(special_tokens)
    final_ids = np.empty(base + len(alpha.tokens), dtype=np.int32)
    final_ids[:base] = np.arange(base)
    for k, tok in enumerate(alpha.tokens):
        if tok not in index:  # an alphabet symbol spelled like a special token reuses its id
            index[tok] = len(vocab)
            vocab.append(tok)
        final_ids[base + k] = index[tok]
    if len(vocab) != len(final_ids):
        alpha.symbols = final_ids[alpha.symbols]
    summary.alphabet = len(vocab) - len(special_tokens)
    summary.skipped_words, summary.skipped_occurrences = alpha.skipped_words, alpha.skipped_occurrences
    if vocab_size < len(vocab):
        raise TokkitError(
            f"--vocab-size {vocab_size} is below the {len(special_tokens)} special tokens + "
            f"{len(vocab) - len(special_tokens)} alphabet symbols ({len(vocab)}); raise it or lower --limit-alphabet"
        )

    merge_id = _merge_namer(algo.join, vocab, index)
    with Progress(vocab_size - len(vocab), desc="merging", unit="", enabled=progress) as bar:
        triples = get_engine(engine).train_merges(
            alpha.symbols, alpha.offsets, alpha.counts, vocab_len=len(vocab), vocab_size=vocab_size,
            min_frequency=min_frequency, scoring=algo.scoring, merge_id=merge_id,
            progress=bar.set if progress else None,
        )
    merges = [(vocab[a], vocab[b]) for a, b, _ in triples]
    summary.merges = len(merges)
    summary.vocab_size = len(vocab)
    summary.seconds["merge"] = time.perf_counter() - t1
    return algo.build(vocab, merges, special_tokens), summary


def _merge_namer(join: Callable[[str, str], str], vocab: list[str], index: dict[str, int]):
    """The engine's merge_id callback: the id of join(a, b), added to the vocab when new."""

    def merge_id(a: int, b: int) -> int:
        tok = join(vocab[a], vocab[b])
        i = index.get(tok)
        if i is None:
            i = index[tok] = len(vocab)
            vocab.append(tok)
        return i

    return merge_id


def top_characters(char_counts: dict[int, int], limit: int | None) -> list[int]:
    """The `limit` most frequent code points (ties by code point), sorted by code point."""
    items = sorted(char_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if limit is not None:
        items = items[:limit]
    return sorted(cp for cp, _ in items)


def symbols_from_tables(table: WordTable, *, first, middle, last, single) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rewrite every word as symbol ids via per-position code point tables (see tokkit._native.text.symbolize)."""

    symbols, offsets, kept = symbolize(table.blob, table.offsets, first=first, middle=middle, last=last, single=single)
    return symbols, offsets, kept, table.counts[kept]


def compact_ids(symbols: np.ndarray, n_fixed: int, candidates: list[str], base: int) -> tuple[np.ndarray, list[str]]:
    """Keep only the candidate tokens (ids base + n_fixed + k) that occur in `symbols`, renumbered densely.

    Ids below base + n_fixed are left alone; candidate k keeps its relative order.
    """
    start = base + n_fixed
    used = np.zeros(len(candidates), dtype=bool)
    tail = symbols[symbols >= start] - start
    used[np.unique(tail)] = True
    remap = np.full(len(candidates), -1, dtype=np.int64)
    remap[used] = start + np.arange(int(used.sum()))
    if len(tail):
        mask = symbols >= start
        symbols = symbols.copy()
        symbols[mask] = remap[symbols[mask] - start].astype(np.int32)
    return symbols, [c for c, u in zip(candidates, used) if u]
