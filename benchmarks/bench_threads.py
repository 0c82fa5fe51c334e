"""encode_batch_flat on 2 threads against 1, for a tokenizer folder or file and a file of lines.

    python benchmarks/bench_threads.py TOKENIZER LINES [--rounds 7]

Prints the median time of each (after a warm-up call) and the speed-up of 2 threads over 1; the two
alternate round by round, so the machine's load touches both alike.
"""
from __future__ import annotations

import argparse

import tokkit
from tokkit.bench.timing import medians, time_calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tokenizer")
    ap.add_argument("lines", help="a UTF-8 text file, one text per line")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    tok = tokkit.load(args.tokenizer)
    with open(args.lines, encoding="utf-8") as f:
        lines = f.read().splitlines()
    one, two = medians(time_calls({t: lambda t=t: tok.encode_batch_flat(lines, num_threads=t) for t in (1, 2)},
                                  rounds=args.rounds)).values()
    print(f"{len(lines):,} lines: 1 thread {one * 1e3:.1f} ms, 2 threads {two * 1e3:.1f} ms, speed-up {one / two:.2f}x")


if __name__ == "__main__":
    main()
