"""Training time and peak memory, tokkit vs tokenizers (and sentencepiece, bpeasy for byte-level).

    python benchmarks/bench_train.py                       # all of ../shared/corpus/en/wiki, vocab 32,000
    python benchmarks/bench_train.py --algos wordpiece --repeat 1 --corpus some/dir
    python benchmarks/bench_train.py --algos bytelevel-o200k     # the o200k pattern (gigatoken: its own)

Each contender runs in its own process, alternating, one warm-up round then --repeat rounds
(tokkit.bench.train_suite, the `tokkit bench --suite train` measurement, on the whole corpus);
the table shows min/median/max wall seconds, MB/s, peak RSS of the process tree, and
tokkit/contender.
"""
import argparse
import sys
from pathlib import Path

from tokkit.bench.corpus_slice import corpus_mb
from tokkit.bench.report import format_table, write_json
from tokkit.bench.train_suite import run_train_suite
from tokkit.errors import TokkitError

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=[str(DEFAULT)])
    parser.add_argument("--algos", nargs="+", default=["bytelevel", "bpe", "wordpiece"],
                        choices=["bytelevel", "bytelevel-o200k", "bpe", "wordpiece"])
    parser.add_argument("--vocab-size", type=int, default=32000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = parser.parse_args(argv)

    try:
        files, mb = corpus_mb(args.corpus)
    except TokkitError as exc:
        parser.error(str(exc))
    rows = run_train_suite(files, algos=args.algos, vocab_size=args.vocab_size, workers=args.workers,
                           repeat=args.repeat, mb=mb,
                           log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    print(format_table(rows))
    if args.json:
        write_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
