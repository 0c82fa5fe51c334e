"""Count pre-tokenized words in parallel: the streaming front half of every trainer.

Chunks are counted by worker threads, each holding its own compiled `WordCounter`; the scan
releases the GIL, so N threads use N cores without copying tables between processes. The tables
are added up at the end, so memory grows with the number of distinct words, not the corpus size.

>>> table = count_words(texts=["the cat", "the dog"], mode="bert", workers=1)
>>> table.total, len(table)
(4, 3)
"""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import regex

from tokkit._native import regex_limit
from tokkit._progress import Progress
from tokkit._threads import available_cores
from tokkit.errors import TokkitError
from tokkit.text.corpus import CHUNK_SIZE, Source, iter_source_chunks, texts_as_chunks
from tokkit.text.pretokenize import compiled

try:
    from tokkit._native.counting import WordCounter
except ImportError as _exc:  # a checkout that was never built: only the regex path can count
    WordCounter = None
    _MISSING = str(_exc)


@dataclass
class WordTable:
    """Distinct words as UTF-8 in one blob, with int64 offsets and counts."""

    blob: bytes
    offsets: np.ndarray
    counts: np.ndarray
    total: int

    def __len__(self) -> int:
        return len(self.counts)

    def words(self) -> list[bytes]:
        """The words as bytes (for tests and small tables)."""
        o = self.offsets
        return [self.blob[o[i] : o[i + 1]] for i in range(len(self.counts))]


def new_counter(mode: str, options: dict):
    """A compiled WordCounter (its modes: "gpt2", "o200k", "bert", ...), or the regex path for any other
    pattern ("regex")."""
    if mode == "regex":
        return RegexCounter(**options)
    if WordCounter is None:
        raise ImportError(f"tokkit's compiled text kernels are not built ({_MISSING}); reinstall with: pip install -e .")
    return WordCounter(mode, **options)


def count_words(
    sources: list[Source] | None = None,
    *,
    texts: Iterable[str] | None = None,
    mode: str,
    options: dict | None = None,
    workers: int | None = None,
    errors: str = "strict",
    progress: bool = False,
    chunk_size: int = CHUNK_SIZE,
) -> WordTable:
    """Count the words of `sources` (files) or `texts` (strings) with `workers` threads.

    `workers` defaults to all cores and is capped at them: more threads could not run at once,
    and each holds two chunks of the corpus in memory.
    """
    options = options or {}
    workers = min(workers or available_cores(), available_cores())
    if errors not in ("strict", "replace"):
        raise TokkitError(f"--errors must be 'strict' or 'replace', not {errors!r}")
    local = threading.local()
    counters = []
    lock = threading.Lock()

    def counter():
        c = getattr(local, "counter", None)
        if c is None:
            c = local.counter = new_counter(mode, options)
            with lock:
                counters.append(c)
        return c

    def count_chunk(source, offset, chunk):
        try:
            counter().count(chunk, errors=errors)
        except ValueError as exc:
            raise TokkitError(_decode_error(source, offset, exc)) from None
        return len(chunk)

    def count_texts(batch):
        c = counter()
        for data in batch:
            c.count(data, errors="replace")  # a str was valid text already; lone surrogates become U+FFFD
        return sum(map(len, batch))

    if texts is not None:
        jobs = ((count_texts, (batch,)) for batch in texts_as_chunks(texts, chunk_size=chunk_size))
        total_bytes = None
    else:
        jobs = ((count_chunk, item) for item in iter_source_chunks(sources, chunk_size=chunk_size))
        sizes = [s.size() for s in sources]
        total_bytes = None if None in sizes or any(s.compressed for s in sources) else sum(sizes)

    with Progress(total_bytes, desc="counting", unit=" MB", scale=1e-6, enabled=progress or False) as bar:
        _run_bounded(jobs, workers, bar)

    if not counters:
        raise TokkitError("the corpus is empty")
    first = counters[0]
    for other in counters[1:]:
        first.update(other)
    total = first.total
    blob, offsets, counts = first.to_arrays()
    if total == 0:
        raise TokkitError("the corpus is empty (no words in it)")
    return WordTable(blob, offsets, counts, total)


def _run_bounded(jobs, workers: int, bar: Progress) -> None:
    """Run (fn, args) jobs on `workers` threads with at most 2 * workers chunks in memory."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending = set()
        try:
            for fn, args in jobs:
                pending.add(pool.submit(fn, *args))
                if len(pending) >= 2 * workers:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in done:
                        bar.update(fut.result())
            for fut in pending:
                bar.update(fut.result())
        except BaseException:
            for fut in pending:
                fut.cancel()
            raise


def _decode_error(source: Source, offset: int, exc: ValueError) -> str:
    msg = str(exc)
    name = "<stdin>" if source.path == "-" else source.path
    marker = "at byte "
    if marker in msg:
        try:
            local = int(msg.split(marker, 1)[1].split()[0].rstrip(".,:"))
            return f"{name}: invalid UTF-8 at byte {offset + local} (use --errors replace to substitute U+FFFD)"
        except ValueError:
            pass
    return f"{name}: {msg}"


class RegexCounter:
    """The general (slow, pure-Python) path for a custom byte-level pattern, line by line like "gpt2".

    >>> c = RegexCounter(pattern=r"\\w+|\\s+"); c.count(b"a b\\na\\n"); sorted(c.words.items())
    [(b'\\n', 2), (b' ', 1), (b'a', 2), (b'b', 1)]
    """

    def __init__(self, *, pattern: str):
        try:
            self.regex = compiled(pattern)
        except regex.error as exc:
            raise TokkitError(f"invalid --pattern {pattern!r}: {exc}") from None
        self.words: dict[bytes, int] = {}
        self.total = 0

    def count(self, data: bytes, *, errors: str = "strict") -> None:
        try:
            text = data.decode("utf-8", errors)
        except UnicodeDecodeError as exc:
            raise ValueError(f"invalid UTF-8 at byte {exc.start}") from None
        words = self.words
        for line in _split_lf(text):
            for piece in regex_limit.findall(self.regex, line):
                key = piece.encode("utf-8", "surrogatepass")
                words[key] = words.get(key, 0) + 1
                self.total += 1

    def update(self, other: "RegexCounter") -> None:
        for k, v in other.words.items():
            self.words[k] = self.words.get(k, 0) + v
        self.total += other.total

    def __len__(self) -> int:
        return len(self.words)

    def to_arrays(self):
        keys = sorted(self.words)
        lengths = np.fromiter((len(k) for k in keys), dtype=np.int64, count=len(keys))
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        counts = np.fromiter((self.words[k] for k in keys), dtype=np.int64, count=len(keys))
        return b"".join(keys), offsets, counts


def _split_lf(text: str) -> list[str]:
    """Split after each \\n only (str.splitlines would also split at \\r, \\x0b, ...)."""
    parts = text.split("\n")
    out = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out
