"""Encoding Hub-style SentencePiece files on 1 thread: tokkit vs tokenizers, sentencepiece and tokie.

A thin front end to tokkit.bench.hub_suite (see its docstring for the method). The files (16k
XLM-R-style Unigram, 16k Llama-2-style BPE) are built once into --workdir from the training
slice. Prints one markdown table per file with its targets and writes the rows as JSON to --out.

    python benchmarks/bench_hub.py [--repeat 5] [--mb 2.6] [--train-mb 4 | --train-full] [--only xlmr]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def main(argv=None) -> None:
    from tokkit.bench.hub_files import KINDS, TRAIN_MB, VOCAB_SIZE
    from tokkit.bench.report import write_json
    from tokkit.errors import TokkitError
    from tokkit.bench.hub_suite import DEFAULT_MB, DEFAULT_WORKDIR, input_note, markdown, run_suite

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--mb", type=float, default=DEFAULT_MB, help="text to encode, in MB of lines")
    ap.add_argument("--train-mb", type=float, default=TRAIN_MB,
                    help="training slice for the files, in MB (the same fraction of every training file)")
    ap.add_argument("--train-full", action="store_true",
                    help="train on the whole training text (~30 MB, about 45 s a model)")
    ap.add_argument("--vocab-size", type=int, default=VOCAB_SIZE, help="pieces of each SentencePiece model")
    ap.add_argument("--corpus", default=str(CORPUS), help="the shared corpus folder (en/wiki, multilingual)")
    ap.add_argument("--workdir", default=os.path.expanduser(DEFAULT_WORKDIR), help="the built files (kept)")
    ap.add_argument("--only", default=None, help="comma-separated kinds to measure: xlmr, llama")
    ap.add_argument("--out", default=None, help="JSON rows (default: WORKDIR/results.json)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.corpus):
        sys.exit(f"corpus not found: {args.corpus}")
    os.makedirs(args.workdir, exist_ok=True)
    train_mb = None if args.train_full else args.train_mb
    only = set(args.only.split(",")) if args.only else None
    if only and not only <= set(KINDS):
        sys.exit(f"--only: unknown kind {', '.join(sorted(only - set(KINDS)))} ({', '.join(KINDS)})")
    corpus = os.path.abspath(args.corpus)
    try:
        rows = run_suite(corpus, args.workdir, mb=args.mb, repeat=args.repeat, train_mb=train_mb,
                         vocab_size=args.vocab_size, only=only)
    except TokkitError as exc:
        sys.exit(f"bench_hub: error: {exc}")
    out = args.out or os.path.join(args.workdir, "results.json")
    write_json(out, rows)
    print(input_note(corpus, args.mb, train_mb))
    print(markdown(rows))


if __name__ == "__main__":
    main()
