"""Micro benchmark of the merge engine alone, on GPT-2-pretokenized words of the shared wiki corpus.

Words come from `regex.findall` of the GPT-2 pattern line by line over
../shared/corpus/en/wiki/*.txt (all ~95 MB by default, `--files N` for the first N); each word's UTF-8 bytes are its symbols
(ids 0..255). The word table is cached in a temporary .npz so repeated runs time
the engine only. Example:

    python benchmarks/bench_engine.py --vocab-size 32000 --scoring frequency
    /usr/bin/time -v python benchmarks/bench_engine.py   # peak RSS (run once first to cache the words)
"""
import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WIKI = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"
CACHE = str(Path(tempfile.gettempdir()) / "tokkit_bench_engine_words_{}.npz")


def build_words(files):
    """Count GPT-2 words over the files; return (symbols, offsets, counts) of the distinct words."""
    import regex

    pattern = regex.compile(GPT2)
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


def load_words(n_files, use_cache=True):
    files = sorted(WIKI.glob("*.txt"))[:n_files]
    if not files:
        raise SystemExit(f"no corpus files under {WIKI}")
    cache = Path(CACHE.format(len(files)))
    if use_cache and cache.exists():
        with np.load(cache) as z:
            return z["symbols"], z["offsets"], z["counts"]
    arrays = build_words(files)
    if use_cache:
        tmp = cache.with_suffix(f".{os.getpid()}.npz")
        np.savez(tmp, symbols=arrays[0], offsets=arrays[1], counts=arrays[2])
        os.replace(tmp, cache)
    return arrays


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--scoring", choices=["frequency", "pmi"], default="frequency")
    ap.add_argument("--engine", choices=["compiled", "python"], default="compiled")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--files", type=int, default=1000, help="use the first N wiki files (default: all)")
    ap.add_argument("--no-cache", action="store_true", help="rebuild the word table, do not read/write the cache")
    args = ap.parse_args()

    from tokkit.train.engine import get_engine

    t0 = time.perf_counter()
    symbols, offsets, counts = load_words(args.files, not args.no_cache)
    print(f"words: {len(counts):,} distinct, {len(symbols):,} symbols, {int(counts.sum()):,} occurrences "
          f"({time.perf_counter() - t0:.1f} s to load)")
    engine = get_engine(args.engine)
    times, cpu = [], []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        merges = engine.train_merges(symbols, offsets, counts, vocab_len=256, vocab_size=args.vocab_size,
                                     min_frequency=2, scoring=args.scoring)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)  # the machine is shared: CPU time is the steadier figure
    print(f"{args.engine} {args.scoring}: {len(merges):,} merges, median {median(times):.2f} s wall, "
          f"{median(cpu):.2f} s CPU (runs: {', '.join(f'{t:.2f}' for t in times)})")


def median(xs):
    return sorted(xs)[len(xs) // 2]


if __name__ == "__main__":
    main()
