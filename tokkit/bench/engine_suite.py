"""The merge engine alone: `train_merges` on a fixed table of GPT-2-pretokenized words.

The measurement of benchmarks/bench_engine.py. Words come from `regex.findall` of the GPT-2
pattern line by line over the corpus files; each word's UTF-8 bytes are its symbols (ids 0..255).
The word table can be cached in a .npz file, so repeated runs time the engine only. The engine
runs in a worker process (loading the table is its setup, outside the timer); wall and CPU time
of each run, peak RSS of the process.

>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> _ = open(os.path.join(d, "a.txt"), "w").write("ab ab\\n")
>>> symbols, offsets, counts = build_words([os.path.join(d, "a.txt")])
>>> symbols.tolist(), offsets.tolist(), counts.tolist()  # "\\n", " ab", "ab" in sorted order
([10, 32, 97, 98, 97, 98], [0, 1, 4, 6], [1, 1, 1])
"""
from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import numpy as np
import regex

from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows
from tokkit.text.pretokenize import GPT2_PATTERN
from tokkit.train.engine import get_engine


def build_words(files: list[str]):
    """Count GPT-2 words over the files; return (symbols, offsets, counts) of the distinct words."""
    pattern = regex.compile(GPT2_PATTERN)
    table = Counter()
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                table.update(pattern.findall(line))
    words = sorted(table)  # a fixed order: the engine's output must not depend on it anyway
    raw = [w.encode("utf-8") for w in words]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in raw])
    symbols = np.frombuffer(b"".join(raw), dtype=np.uint8).astype(np.int32)
    counts = np.array([table[w] for w in words], dtype=np.int64)
    return symbols, offsets, counts


def load_words(files: list[str], cache: str | None = None):
    """`build_words`, read from / written to the .npz file `cache` when one is given."""
    if cache and os.path.exists(cache):
        with np.load(cache) as z:
            return z["symbols"], z["offsets"], z["counts"]
    arrays = build_words(files)
    if cache:
        tmp = str(Path(cache).with_suffix(f".{os.getpid()}.npz"))
        np.savez(tmp, symbols=arrays[0], offsets=arrays[1], counts=arrays[2])
        os.replace(tmp, cache)
    return arrays


def engine_task(files: list[str], vocab_size: int = 32000, scoring: str = "frequency", engine: str = "compiled",
                cache: str | None = None):
    """One `train_merges` call on the files' word table; the summary gives the table's size and the merges."""

    symbols, offsets, counts = load_words(files, cache)
    eng = get_engine(engine)
    last = {}

    def run():
        last["merges"] = eng.train_merges(symbols, offsets, counts, vocab_len=256, vocab_size=vocab_size,
                                          min_frequency=2, scoring=scoring)

    run.summary = lambda: {"distinct": len(counts), "symbols": len(symbols), "occurrences": int(counts.sum()),
                           "merges": len(last["merges"])}
    return run


def run_engine_suite(files: list[str], *, vocab_size: int = 32000, scoring: str = "frequency",
                     engine: str = "compiled", repeat: int = 1, warmup: int = 0, cache: str | None = None,
                     log=print) -> list[dict]:
    """One row: the engine's wall and CPU time per `train_merges` (and its setup: loading the words)."""
    kwargs = {"files": list(files), "vocab_size": vocab_size, "scoring": scoring, "engine": engine, "cache": cache}
    results = measure_tasks({engine: ("tokkit.bench.engine_suite:engine_task", kwargs)}, repeat=repeat,
                            warmup=warmup, log=log)
    group = f"merge engine, {scoring} scoring, vocab {vocab_size:,}, {len(files)} files"
    return group_rows("engine", group, results, baseline=engine, extra={"scoring": scoring})
