"""Train a tokenizer: `tokkit.train(files, algo=..., vocab_size=...)` or `tokkit.train(texts=...)`.

>>> import tokkit
>>> tok = tokkit.train(texts=["the quick brown fox"] * 20, algo="wordpiece", vocab_size=50)
>>> tok.id_to_token(0)
'[PAD]'
"""
from __future__ import annotations

import operator
from typing import Iterable

from tokkit._native import MAX_VOCAB_SIZE
from tokkit.errors import TokkitError
from tokkit.text.corpus import resolve
from tokkit.train.bpe import CharBPE
from tokkit.train.bytelevel import ByteLevel
from tokkit.train.flow import DEFAULT_SPECIALS, Summary, check_special_tokens, resolve_specials, run_training
from tokkit.train.unigram import Unigram
from tokkit.train.wordpiece import WordPiece

ALGORITHMS = {"wordpiece": WordPiece, "bpe": CharBPE, "bytelevel": ByteLevel, "unigram": Unigram}

__all__ = ["ALGORITHMS", "DEFAULT_SPECIALS", "MAX_COUNT", "MAX_VOCAB_SIZE", "Summary", "train", "whole_number"]


# Word and pair counts are int64: a min_frequency or min_word_count above this could not be compared.
MAX_COUNT = 2**63 - 1


def whole_number(name: str, value, *, minimum: int, maximum: int | None = None) -> int:
    """`value` as an int in [minimum, maximum]; floats, bools and strings are a TokkitError.

    >>> whole_number("vocab_size", 300.5, minimum=1)
    Traceback (most recent call last):
    tokkit.errors.TokkitError: vocab_size must be a whole number, got 300.5
    """
    if isinstance(value, bool):
        raise TokkitError(f"{name} must be a whole number, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TokkitError(f"{name} must be a whole number, got {value!r}") from None
    if value < minimum:
        raise TokkitError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise TokkitError(f"{name} must be at most {maximum:,}, got {value}")
    return value


def train(files=None, *, texts: Iterable[str] | None = None, algo: str = "wordpiece", vocab_size: int = 30000,
          min_frequency: int = 2, special_tokens: list[str] | None = None, default_specials: bool = True,
          limit_alphabet: int | None = None, workers: int | None = None, errors: str = "strict",
          glob: str | None = None, progress: bool = False, engine: str | None = None, client=None,
          min_word_count: int = 0, return_summary: bool = False, **algo_options):
    """Train a tokenizer on files (a path or a list of paths) or on `texts`, and return it.

    client: a `distributed.Client`; counting then runs on its Dask cluster (files only), and
    min_word_count > 1 prunes rarer words during the reduction (the summary says how many).

    algo_options: wordpiece `cased=False`, `scoring="frequency"|"likelihood"|"pmi"`; bpe `lowercase=False`;
    bytelevel `pattern=None` (the GPT-2 pattern; any regex, or the text of a named one in
    tokkit._native.patterns); unigram `character_coverage=0.9995`, `max_piece_length=16`,
    `byte_fallback=False`, `split_digits=False`, `normalization="nfkc"`, `sentencepiece_model=False`
    (True: `save` also writes tokenizer.model) (special tokens default to <pad> </s> <unk>;
    min_frequency is the fewest occurrences of a seed substring).

    return_summary=True returns (Tokenizer, Summary): what was counted, merged and how long it took
    (the CLI prints its `line()`).
    """
    if algo not in ALGORITHMS:
        raise TokkitError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGORITHMS)}")
    if (files is None) == (texts is None):
        raise TokkitError("give exactly one of files or texts")
    # Every option is checked before the corpus is looked at, so a typo never costs a counting pass.
    vocab_size = whole_number("vocab_size", vocab_size, minimum=1, maximum=MAX_VOCAB_SIZE)
    min_frequency = whole_number("min_frequency", min_frequency, minimum=0, maximum=MAX_COUNT)
    min_word_count = whole_number("min_word_count", min_word_count, minimum=0, maximum=MAX_COUNT)
    if limit_alphabet is not None:
        limit_alphabet = whole_number("limit_alphabet", limit_alphabet, minimum=1)
    if workers is not None:
        workers = whole_number("workers", workers, minimum=1)
    if errors not in ("strict", "replace"):
        raise TokkitError(f"errors must be 'strict' or 'replace', got {errors!r}")
    special_tokens = check_special_tokens(special_tokens)
    try:
        algorithm = ALGORITHMS[algo](**algo_options)
    except TypeError as exc:
        raise TokkitError(f"{algo}: unsupported option ({exc})") from None
    if getattr(algorithm, "trains_pieces", False) and limit_alphabet is not None:
        raise TokkitError(f"limit_alphabet (--limit-alphabet) does not apply to {algo}; "
                          "use character_coverage (--character-coverage)")
    if isinstance(files, (str, bytes)) or hasattr(files, "__fspath__"):
        files = [files]
    sources = resolve([str(f) for f in files], pattern=glob) if files is not None else None
    if texts is not None and isinstance(texts, str):
        raise TokkitError("texts must be an iterable of str, not a single str")
    specials = resolve_specials(special_tokens, default_specials=default_specials, algo=algorithm)
    tokenizer, summary = run_training(
        algorithm, sources=sources, texts=texts, vocab_size=vocab_size, min_frequency=min_frequency,
        special_tokens=specials, limit_alphabet=limit_alphabet, workers=workers, errors=errors, progress=progress,
        engine=engine, client=client, min_word_count=min_word_count)
    return (tokenizer, summary) if return_summary else tokenizer
