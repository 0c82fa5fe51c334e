"""Training time and peak memory, tokkit vs tokenizers (and sentencepiece, bpeasy for byte-level).

    python benchmarks/bench_train.py                       # all of ../shared/corpus/en/wiki, vocab 32,000
    python benchmarks/bench_train.py --algos wordpiece --repeat 1 --corpus some/dir

Each contender runs in its own process, alternating, one warm-up round then --repeat rounds;
the table shows min/median/max wall seconds, peak RSS of the process tree, and tokkit/contender.
"""
import argparse
import json
import sys
from pathlib import Path

from tokkit.bench.train_suite import format_rows, run_train_suite
from tokkit.text.corpus import resolve

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--corpus", nargs="+", default=[str(DEFAULT)])
parser.add_argument("--algos", nargs="+", default=["bytelevel", "bpe", "wordpiece"])
parser.add_argument("--vocab-size", type=int, default=32000)
parser.add_argument("--workers", type=int, default=2)
parser.add_argument("--repeat", type=int, default=3)
parser.add_argument("--json", help="also write the rows to this file")
args = parser.parse_args()

files = [s.path for s in resolve(args.corpus)]
rows = run_train_suite(files, algos=args.algos, vocab_size=args.vocab_size, workers=args.workers,
                       repeat=args.repeat, log=lambda m: print(m, file=sys.stderr))
print(format_rows(rows))
if args.json:
    Path(args.json).write_text(json.dumps(rows, indent=1))
