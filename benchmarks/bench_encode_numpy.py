"""Numpy-first encoding on 10 MB of ../shared/corpus/en/wiki: flat outputs vs lists, gigatoken, tokie.

A thin front end to tokkit.bench.encode_numpy (see its docstring for the method). Prints one
markdown table per measurement and writes the rows as JSON to --out.

    python benchmarks/bench_encode_numpy.py [--repeat 3] [--before /path/to/older/tokkit] [--only lines,pairs]
    tokkit bench --suite encode-numpy --corpus ../shared/corpus/en/wiki
        # the same suite through tokkit bench (a 10 MB slice unless --size)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "en" / "wiki"


def main(argv=None) -> None:
    from tokkit.bench.encode_numpy import markdown, run_suite

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mb", type=float, default=10.0, help="corpus slice in MB")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--workdir", default=os.path.expanduser("~/.cache/tokkit-bench/encode-numpy"),
                    help="vocabularies (trained once) and the --before slice")
    ap.add_argument("--before", default=None, help="a built tokkit tree to measure the list APIs of, as 'before'")
    ap.add_argument("--only", default=None, help="comma-separated words; groups whose title holds one run")
    ap.add_argument("--out", default=None, help="JSON rows (default: WORKDIR/results.json)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.corpus):
        sys.exit(f"corpus not found: {args.corpus}")
    os.makedirs(args.workdir, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    before = os.path.abspath(args.before) if args.before else None
    rows = run_suite(os.path.abspath(args.corpus), args.workdir, mb=args.mb, repeat=args.repeat, before=before,
                     only=only)
    out = args.out or os.path.join(args.workdir, "results.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1)
    print(markdown(rows))


if __name__ == "__main__":
    main()
