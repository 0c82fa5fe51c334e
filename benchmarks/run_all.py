"""Regenerate benchmarks/RESULTS.md: `tokkit bench --suite all`, `--suite scaling` and `tokkit compare --train all`.

    python benchmarks/run_all.py                  # the documented command (needs ../shared/corpus)
    python benchmarks/run_all.py --size 1MB --scaling-size 20MB --repeat 1    # a quick look

Outputs (results.json, results.md, PNG charts) go to benchmarks/results/{all,scaling,compare}/;
RESULTS.md is composed from those JSON files only (tokkit.bench.results_doc).
"""
import argparse
import sys
from pathlib import Path

from tokkit.bench.results_doc import PARTS, regenerate, run_commands

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # commands run from the repository root, so paths in RESULTS.md read as typed
CORPUS = "../shared/corpus/en"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=f"{CORPUS}/wiki", help="corpus of the 'all' run (relative to the repo root)")
    ap.add_argument("--size", default="10MB")
    ap.add_argument("--scaling-corpus", nargs="+", default=[f"{CORPUS}/wiki", f"{CORPUS}/pg"])
    ap.add_argument("--scaling-size", default="200MB")
    ap.add_argument("--repeat", default=None, help="override every suite's repeat count")
    ap.add_argument("--only", choices=PARTS, help="rerun one part; the others' results are reused")
    args = ap.parse_args(argv)

    runs = run_commands(corpus=args.corpus, size=args.size, scaling_corpus=args.scaling_corpus,
                        scaling_size=args.scaling_size, repeat=args.repeat)
    path = regenerate(str(ROOT), runs, only=args.only, results_md=str(HERE / "RESULTS.md"),
                      results_dir=str(HERE / "results"), regenerate_command="python benchmarks/run_all.py",
                      log=lambda m: print(m, file=sys.stderr, flush=True))
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
