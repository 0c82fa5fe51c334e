"""Micro benchmark of the merge engine alone, on GPT-2-pretokenized words of the shared wiki corpus.

Words come from `regex.findall` of the GPT-2 pattern line by line over
../shared/corpus/en/wiki/*.txt (all ~95 MB by default, `--files N` for the first N); each word's UTF-8 bytes are its symbols
(ids 0..255). The word table is cached in a temporary .npz so repeated runs time
the engine only. The engine runs in a worker process (tokkit.bench.engine_suite): loading the
words is its setup, then --repeat timed runs; prints the median wall and CPU time and the peak RSS
of the process. Example:

    python benchmarks/bench_engine.py --vocab-size 32000 --scoring frequency
    tokkit bench --suite engine --corpus ../shared/corpus/en/wiki
        # the same suite through tokkit bench (a 10 MB slice unless --size)
"""
import argparse
import sys
import tempfile
from pathlib import Path

from tokkit.bench.engine_suite import run_engine_suite

WIKI = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"
CACHE = str(Path(tempfile.gettempdir()) / "tokkit_bench_engine_words_{}.npz")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--scoring", choices=["frequency", "pmi"], default="frequency")
    ap.add_argument("--engine", choices=["compiled", "python"], default="compiled")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--files", type=int, default=1000, help="use the first N wiki files (default: all)")
    ap.add_argument("--no-cache", action="store_true", help="rebuild the word table, do not read/write the cache")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")

    files = sorted(str(p) for p in WIKI.glob("*.txt"))[:args.files]
    if not files:
        ap.error(f"no corpus files under {WIKI}")
    rows = run_engine_suite(files, vocab_size=args.vocab_size, scoring=args.scoring, engine=args.engine,
                            repeat=args.repeat, cache=None if args.no_cache else CACHE.format(len(files)),
                            log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    r = rows[0]
    if not r.get("times"):
        print(f"{args.engine} {args.scoring}: {r.get('note', 'no result')}")
        return 1
    s = r["summary"]
    print(f"words: {s['distinct']:,} distinct, {s['symbols']:,} symbols, {s['occurrences']:,} occurrences "
          f"({r['setup_s']:.1f} s to load)")
    print(f"{args.engine} {args.scoring}: {s['merges']:,} merges, median {r['median']:.2f} s wall, "
          f"{r['cpu_median']:.2f} s CPU (runs: {', '.join(f'{t:.2f}' for t in r['times'])}), "
          f"peak RSS {r['peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
