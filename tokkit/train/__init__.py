"""Train a tokenizer: `tokkit.train(files, algo=..., vocab_size=...)` or `tokkit.train(texts=...)`.

>>> import tokkit
>>> tok = tokkit.train(texts=["the quick brown fox"] * 20, algo="wordpiece", vocab_size=50)
>>> tok.id_to_token(0)
'[PAD]'
"""
from __future__ import annotations

from typing import Iterable

from tokkit.errors import TokkitError
from tokkit.text.corpus import resolve
from tokkit.train.bpe import CharBPE
from tokkit.train.bytelevel import ByteLevel
from tokkit.train.flow import DEFAULT_SPECIALS, Summary, resolve_specials, run_training
from tokkit.train.wordpiece import WordPiece

ALGORITHMS = {"wordpiece": WordPiece, "bpe": CharBPE, "bytelevel": ByteLevel}

__all__ = ["ALGORITHMS", "DEFAULT_SPECIALS", "Summary", "train"]


def train(files=None, *, texts: Iterable[str] | None = None, algo: str = "wordpiece", vocab_size: int = 30000,
          min_frequency: int = 2, special_tokens: list[str] | None = None, default_specials: bool = True,
          limit_alphabet: int | None = None, workers: int | None = None, errors: str = "strict",
          glob: str | None = None, progress: bool = False, engine: str | None = None, client=None,
          min_word_count: int = 0, return_summary: bool = False, **algo_options):
    """Train a tokenizer on files (a path or a list of paths) or on `texts`, and return it.

    client: a `distributed.Client`; counting then runs on its Dask cluster (files only), and
    min_word_count > 1 prunes rarer words during the reduction (the summary says how many).

    algo_options: wordpiece `cased=False`, `scoring="likelihood"|"pmi"|"frequency"`; bpe `lowercase=False`;
    bytelevel `pattern=None` (the GPT-2 pattern).

    return_summary=True returns (Tokenizer, Summary): what was counted, merged and how long it took
    (the CLI prints its `line()`).
    """
    if algo not in ALGORITHMS:
        raise TokkitError(f"unknown algorithm {algo!r}; choose one of {', '.join(ALGORITHMS)}")
    if (files is None) == (texts is None):
        raise TokkitError("give exactly one of files or texts")
    try:
        algorithm = ALGORITHMS[algo](**algo_options)
    except TypeError as exc:
        raise TokkitError(f"{algo}: unsupported option ({exc})") from None
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
