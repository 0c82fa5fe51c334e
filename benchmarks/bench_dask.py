"""Dask counting overhead and a scaling estimate for a 1 TB corpus.

    python benchmarks/bench_dask.py                 # ../shared/corpus/en/wiki, bytelevel (gpt2) counting

1. Counting phase, median of --repeat runs: tokkit's local threads (--workers 2) against a Dask
   LocalCluster of 2 single-threaded worker processes; cluster start-up timed separately.
2. Per-task throughput on the cluster (MB/s per worker), and from it the wall time for 1 TB on 10
   and 100 workers (counting is embarrassingly parallel; the tree reduction adds log2(tasks) levels).
3. The client-side merge loop on the largest word table we can build here (en/wiki + en/pg).
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

from distributed import Client, LocalCluster

from tokkit.text.corpus import resolve
from tokkit.text.count import count_words
from tokkit.train import train
from tokkit.train.dask_count import count_words_dask, plan

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", nargs="+", default=[str(SHARED / "en" / "wiki")])
    parser.add_argument("--mode", default="gpt2", choices=["gpt2", "bert"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--merge-corpus", nargs="+", default=[str(SHARED / "en" / "wiki"), str(SHARED / "en" / "pg")])
    args = parser.parse_args()


    sources = resolve(args.corpus)
    size_mb = sum(s.size() for s in sources) / 1e6
    options = {} if args.mode == "gpt2" else {"lowercase": True}

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    startup = time.perf_counter() - t0

    local, remote = [], []
    for r in range(args.repeat + 1):  # round 0 warms both up
        t = time.perf_counter()
        a = count_words(sources, mode=args.mode, options=options, workers=2)
        t1 = time.perf_counter()
        b, _ = count_words_dask(client, sources, mode=args.mode, options=options)
        t2 = time.perf_counter()
        assert len(a) == len(b) and a.total == b.total and (a.counts == b.counts).all()
        if r:
            local.append(t1 - t)
            remote.append(t2 - t1)
        print(f"round {r}: local {t1 - t:.2f} s, dask {t2 - t1:.2f} s", file=sys.stderr)

    tasks = len(plan(sources))
    lm, dm = statistics.median(local), statistics.median(remote)
    print(f"corpus: {size_mb:.0f} MB in {tasks} ranges, mode {args.mode}, {len(a):,} distinct words")
    print(f"cluster start-up (2 workers): {startup:.2f} s (not counted below)")
    print(f"counting, local --workers 2: median {lm:.2f} s (min {min(local):.2f}, max {max(local):.2f})")
    print(f"counting, dask 2 workers:    median {dm:.2f} s (min {min(remote):.2f}, max {max(remote):.2f})")
    print(f"dask / local: {dm / lm:.2f}x (target <= 1.20x)")
    per_worker = size_mb / dm / 2
    print(f"throughput per worker on the cluster: {per_worker:.1f} MB/s")
    client.close()
    cluster.close()

    # The client-side merge on the largest table we can build here.
    merge_sources = [s.path for s in resolve(args.merge_corpus)]
    tok, summary = train(merge_sources, algo="wordpiece", vocab_size=64000, workers=2, return_summary=True)
    merge_s = summary.seconds["merge"]
    print(f"merge loop, wordpiece PMI, vocab 64,000, on {summary.distinct_words:,} distinct words "
          f"({sum(s.size() for s in resolve(args.merge_corpus)) / 1e6:.0f} MB): {merge_s:.1f} s")
    for workers in (10, 100):
        count_s = 1e6 / (per_worker * workers)
        print(f"estimate, 1 TB on {workers} workers: counting {count_s / 3600:.2f} h at the measured rate per "
              f"worker; then the merge loop on the client ({merge_s:.1f} s above for {summary.distinct_words:,} "
              "distinct words; it grows with the table, which --min-word-count keeps bounded)")


if __name__ == "__main__":  # the cluster's worker processes re-import this file
    main()
