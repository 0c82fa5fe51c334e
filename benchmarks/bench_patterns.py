"""Today's byte-level files (GPT-2, ModernBERT, Llama 3, Qwen2, o200k) on 10 MB, 1 thread: tokkit vs
gigatoken, tokenizers and tiktoken.

A thin front end to tokkit.bench.pattern_suite (see its docstring for the method): trains the five
32k files once into --workdir (about a minute each), prints a line per file saying whether each
contender's ids equal tokkit's, then one markdown table (MB/s and tokkit's speed-up over each
contender against its target) and writes the rows as JSON to --out.

    python benchmarks/bench_patterns.py [--repeat 3] [--mb 10] [--only llama3,o200k] [--out rows.json]

A quick check that it works (seconds, numbers meaningless):

    python benchmarks/bench_patterns.py --mb 0.3 --repeat 1 --vocab-size 2000 --train-mb 1
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def main(argv=None) -> None:
    from tokkit.bench.pattern_files import KINDS, VOCAB_SIZE
    from tokkit.bench.pattern_suite import DEFAULT_MB, run_suite, table

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mb", type=float, default=DEFAULT_MB, help="text size in MB (80%% wiki, 20%% multilingual)")
    ap.add_argument("--corpus", default=str(CORPUS), help="the shared corpus folder (en/wiki, multilingual)")
    ap.add_argument("--vocab-size", type=int, default=VOCAB_SIZE)
    ap.add_argument("--train-mb", type=float, default=None,
                    help="train on this many MB of en/wiki 000-019 (default: all ~20 MB)")
    ap.add_argument("--workdir", default=os.path.expanduser("~/.cache/tokkit-bench/patterns"),
                    help="the trained files, kept by kind and vocab size")
    ap.add_argument("--only", default=None, help=f"comma-separated kinds among {','.join(KINDS)}")
    ap.add_argument("--out", default=None, help="JSON rows (default: WORKDIR/results.json)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.corpus):
        sys.exit(f"corpus not found: {args.corpus}")
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(KINDS):
        sys.exit(f"--only: unknown kind {', '.join(sorted(only - set(KINDS)))} (kinds: {', '.join(KINDS)})")
    os.makedirs(args.workdir, exist_ok=True)
    rows, checks = run_suite(os.path.abspath(args.corpus), args.workdir, mb=args.mb, repeat=args.repeat,
                             vocab_size=args.vocab_size, train_mb=args.train_mb, only=only)
    out = args.out or os.path.join(args.workdir, "results.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    print(table(rows))
    if any(c["identical"] is False for kind in checks.values() for c in kind.values()):
        print("\nWARNING: some contender's ids differ from tokkit's (see the 'ids identical' lines above)")


if __name__ == "__main__":
    main()
