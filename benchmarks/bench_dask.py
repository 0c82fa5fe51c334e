"""Dask counting overhead and a scaling estimate for a 1 TB corpus.

    python benchmarks/bench_dask.py                 # ../shared/corpus/en/wiki, bytelevel (gpt2) counting
    tokkit bench --suite dask --corpus ../shared/corpus/en/wiki
        # the counting phase through tokkit bench (a 10 MB slice unless --size)

1. Counting phase, median of --repeat runs after a warm-up round, the two contenders alternating,
   each in its own worker process: tokkit's local threads (--workers 2) against a Dask
   LocalCluster of 2 single-threaded worker processes; cluster start-up timed separately; the two
   word tables must be identical.
2. Per-task throughput on the cluster (MB/s per worker), and from it the wall time for 1 TB on 10
   and 100 workers (counting is embarrassingly parallel; the tree reduction adds log2(tasks) levels).
3. The client-side merge loop on the largest word table we can build here (en/wiki + en/pg).

The measurement is tokkit.bench.dask_suite's.
"""
import argparse
import sys
from pathlib import Path

from tokkit.bench.dask_suite import DASK, LOCAL, run_dask_suite
from tokkit.errors import TokkitError

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=[str(SHARED / "en" / "wiki")])
    parser.add_argument("--mode", default="gpt2", choices=["gpt2", "bert"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--merge-corpus", nargs="+", default=[str(SHARED / "en" / "wiki"), str(SHARED / "en" / "pg")])
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")

    try:
        out = run_dask_suite(args.corpus, mode=args.mode, repeat=args.repeat, merge_paths=args.merge_corpus,
                             log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    except TokkitError as exc:
        parser.error(str(exc))
    rows = {r["name"]: r for r in out["rows"]}
    local, dask = rows[LOCAL], rows[DASK]
    distinct = f", {out['summary']['distinct']:,} distinct words" if out["summary"] else ""
    print(f"corpus: {out['mb']:.0f} MB in {out['tasks']} ranges, mode {args.mode}{distinct}")
    if out["startup_s"] is not None:
        print(f"cluster start-up (2 workers): {out['startup_s']:.2f} s (not counted below)")
    for label, r in (("counting, local --workers 2:", local), ("counting, dask 2 workers:   ", dask)):
        if r.get("times"):
            print(f"{label} median {r['median']:.2f} s (min {r['min']:.2f}, max {r['max']:.2f}), "
                  f"peak RSS {r['peak_rss_mb']:.0f} MB")
        else:
            print(f"{label} {r.get('note', 'no result')}")
    print(f"word tables identical (local, dask): {out['identical']}")
    if "speedup" in dask:
        print(f"dask / local: {dask['speedup']:.2f}x (target <= 1.20x)")
    if "per_worker_mb_s" in out:
        print(f"throughput per worker on the cluster: {out['per_worker_mb_s']:.1f} MB/s")
    merge = out.get("merge", {})
    if "merge_s" in merge:
        print(f"merge loop, wordpiece PMI, vocab {merge['vocab']:,}, on {merge['distinct']:,} distinct words "
              f"({merge['mb']:.0f} MB): {merge['merge_s']:.1f} s")
    elif merge:
        print(f"merge loop: {merge.get('note') or 'no result'}")
    for workers, hours in out.get("estimates", {}).items():
        merge_part = (f" ({merge['merge_s']:.1f} s above for {merge['distinct']:,} distinct words; it grows with "
                      "the table, which --min-word-count keeps bounded)" if "merge_s" in merge else "")
        print(f"estimate, 1 TB on {workers} workers: counting {hours:.2f} h at the measured rate per "
              f"worker; then the merge loop on the client{merge_part}")
    return 0 if out["identical"] and local.get("times") and dask.get("times") else 1


if __name__ == "__main__":  # the cluster's worker processes may re-import this file
    sys.exit(main())
