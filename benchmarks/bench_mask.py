"""Masking speed: tokkit.mask_tokens against transformers' DataCollatorForLanguageModeling.

Both mask the same 16,384 sequences (batches of 256 x 128 int64 with a special_tokens_mask:
[CLS] first, [SEP] last, a padded tail on a quarter of the rows), with 2 threads allowed each.
Input copies (torch_mask_tokens writes into its input) are made outside the timer. Each contender
runs in its own worker process (tokkit.bench.mask_suite, the `tokkit bench --suite mask`
measurement, without its plain-numpy row); a warm-up round, then repeats alternating between the
contenders; prints the median over repeats, sequences per second and the ratio.

    python benchmarks/bench_mask.py [--repeats 5] [--sequences 16384]
"""
import argparse
import sys

from tokkit.bench.mask_suite import HF, run_mask_suite


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sequences", type=int, default=16384)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-run progress lines on stderr")
    args = parser.parse_args(argv)
    if min(args.repeats, args.sequences, args.batch, args.length, args.threads) < 1:
        parser.error("--repeats, --sequences, --batch, --length and --threads must be at least 1")
    rows = run_mask_suite(sequences=args.sequences, batch=args.batch, length=args.length, threads=args.threads,
                          repeat=args.repeats, numpy=False,
                          log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    by_name = {r["name"]: r for r in rows}
    tk, hf = by_name["tokkit"], by_name[HF]
    print(f"{tk['group']}, median of {args.repeats}")
    for label, r in (("transformers torch_mask_tokens:", hf), ("tokkit.mask_tokens:", tk)):
        if r.get("times"):
            print(f"  {label:<32}{r['throughput']:>12,.0f} sequences/s  (peak RSS {r['peak_rss_mb']:.0f} MB)")
        else:
            print(f"  {label:<32}{r.get('note', 'no result')}")
    if "speedup" in hf:
        print(f"  {'ratio tokkit / transformers:':<32}{hf['speedup']:>12.1f}x")
    return 0 if tk.get("times") and hf.get("times") else 1


if __name__ == "__main__":
    sys.exit(main())
