"""Word counting speed: tokkit's WordCounter on N threads vs regex.findall + Counter (and tokenizers' BERT).

    python benchmarks/bench_count.py                 # 100 MB of ../shared/corpus/en/wiki, 2 threads
    python benchmarks/bench_count.py --mb 10 --repeat 3
    tokkit bench --suite count --corpus ../shared/corpus/en/wiki --size 10MB
        # the same suite through tokkit bench (a 10 MB slice unless --size)

tokkit: one WordCounter per thread, each counting alternate ~4 MB chunks that end at a line end,
then `update` and `to_arrays`. Reference (one thread, same bytes): gpt2 = regex.findall per line +
collections.Counter; bert = tokenizers' BertNormalizer + BertPreTokenizer per line + Counter
(on --check-mb only: it is slow; its time for the whole input is extrapolated). The counts are
checked for equality on the first --check-mb MB. Each contender runs in its own worker process
(tokkit.bench.count_suite), a warm-up round first, then --repeat rounds alternating between them.
Prints wall and CPU times (medians; CPU time summed over threads, a load-independent figure on a
shared machine), MB/s, the ratio reference / tokkit and each contender's peak RSS.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tokkit.bench.corpus_slice import make_slice
from tokkit.bench.count_suite import REFERENCES, run_count_suite
from tokkit.errors import TokkitError

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "en" / "wiki"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--check-mb", type=float, default=4)
    ap.add_argument("--modes", default="gpt2,bert")
    ap.add_argument("--no-reference", action="store_true", help="skip the slow full-size gpt2 reference timing")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in REFERENCES for m in modes):
        ap.error(f"--modes: choose from {', '.join(REFERENCES)}")
    if args.repeat < 1 or args.threads < 1:
        ap.error("--repeat and --threads must be at least 1")

    with tempfile.TemporaryDirectory(prefix="tokkit-bench-count-") as work:
        try:
            data = make_slice([str(args.corpus)], size=int(args.mb * 1e6), workdir=work, name="corpus")
            check = make_slice([str(args.corpus)], size=int(args.check_mb * 1e6), workdir=work, name="check")
        except TokkitError as exc:
            ap.error(str(exc))
        print(f"corpus: {args.corpus} {data.mb:.1f} MB, {args.threads} threads", flush=True)
        rows, checks = run_count_suite(
            data.path, data.mb, check_path=check.path, check_mb=check.mb, modes=modes, threads=args.threads,
            repeat=args.repeat, reference=not args.no_reference,
            log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    for mode in modes:
        mode_rows = [r for r in rows if r["mode"] == mode]
        tk = next(r for r in mode_rows if r["baseline"])
        if checks[mode] is not None:
            print(f"[{mode}] counts identical to the reference on {check.mb:.1f} MB: {checks[mode]}")
        if not tk.get("times"):
            print(f"[{mode}] tokkit WordCounter: {tk.get('note', 'no result')}")
            continue
        s = tk["summary"]
        print(f"[{mode}] tokkit WordCounter ({s['chunks']} chunks): {tk['median']:.2f} s wall "
              f"({tk['throughput']:.1f} MB/s), {tk['cpu_median']:.2f} s CPU ({tk['cpu_throughput']:.1f} MB/s per "
              f"core), {s['distinct']:,} distinct, {s['words']:,} words, table {s['table_mb']:.0f} MB; "
              f"peak RSS {tk['peak_rss_mb']:.0f} MB")
        for r in mode_rows:
            if r["baseline"]:
                continue
            if not r.get("times"):
                print(f"[{mode}] {r['name']}: {r.get('note', 'no result')}")
            elif "extrapolated_s" in r:
                print(f"[{mode}] {r['name']} (1 thread), extrapolated from {r['work']:.1f} MB: "
                      f"{r['extrapolated_s']:.1f} s; ratio {r['speedup']:.1f}x; peak RSS {r['peak_rss_mb']:.0f} MB")
            else:
                print(f"[{mode}] {r['name']} (1 thread, same bytes): {r['median']:.2f} s; ratio {r['speedup']:.1f}x; "
                      f"peak RSS {r['peak_rss_mb']:.0f} MB")
    return 0 if all(r.get("times") for r in rows if r["baseline"]) and all(v is not False for v in checks.values()) \
        else 1


if __name__ == "__main__":
    sys.exit(main())
