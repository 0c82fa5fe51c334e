"""Training-step speed: tokkit.bert against transformers' BertForPreTraining, side by side.

One forward + backward + AdamW step at 4 layers x 256 hidden, batch 32 x 128 without padding,
vocab 30,522, 15% of positions labelled, 2 torch threads. tokens/s = 4,096 / median step time.
Each model runs in its own worker process (tokkit.bench.bert_suite, the `tokkit bench --suite bert`
measurement); the models take turns in blocks (--rounds of them, each a warm-up step and then
timed steps, a different model leading each round), so a change in the machine's load touches both
alike. Blocks rather than single alternating steps because a step runs slower right after the
other model's (the CPU caches hold the other model's weights); the warm-up step of each block
absorbs that.

    python benchmarks/bench_bert.py [--steps 8] [--rounds 2] [--warmup 1] [--threads 2] [--compile] [--bf16]
"""
from __future__ import annotations

import argparse
import sys

from tokkit.bench.bert_suite import BF16, TRANSFORMERS, run_bert_suite


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed steps at the start of every block (default 1, 2 with --compile)")
    ap.add_argument("--rounds", type=int, default=2, help="blocks per model; --steps are shared out")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--compile", action="store_true", help="torch.compile the tokkit model")
    ap.add_argument("--bf16", action="store_true", help="also time tokkit under bfloat16 autocast")
    ap.add_argument("-q", "--quiet", action="store_true", help="no per-step progress lines on stderr")
    args = ap.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        ap.error("--steps and --rounds must be at least 1")
    warmup = args.warmup if args.warmup is not None else (2 if args.compile else 1)
    rows = run_bert_suite(threads=args.threads, vocab=args.vocab, batch=args.batch, seq=args.seq,
                          repeat=args.rounds, warmup=0, block=-(-args.steps // args.rounds), block_warmup=warmup,
                          rotate=True, compile_=args.compile, bf16=args.bf16,
                          log=(lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True)))
    by_name = {(r["group"], r["name"]): r for r in rows}
    main_group = rows[0]["group"]
    for r in rows:
        if r["group"] != main_group:
            continue
        if r.get("times"):
            print(f"{r['name']:>34}: {r['median'] * 1000:8.1f} ms/step  {r['throughput']:8.0f} tokens/s "
                  f"(median of {len(r['times'])}; peak RSS {r['peak_rss_mb']:.0f} MB)", flush=True)
        else:
            print(f"{r['name']:>34}: {r.get('note', 'no result')}")
    hf = by_name.get((main_group, TRANSFORMERS), {})
    if "speedup" in hf:
        print(f"speed ratio tokkit / transformers: {hf['speedup']:.2f}x (target >= 2x)")
    if args.bf16:
        bf = next((r for r in rows if r["group"] != main_group and r["name"] == BF16), {})
        hf_bf = next((r for r in rows if r["group"] != main_group and r["name"] == TRANSFORMERS), {})
        if bf.get("times"):
            print(f"{BF16:>34}: {bf['median'] * 1000:8.1f} ms/step  {bf['throughput']:8.0f} tokens/s")
        if "speedup" in hf_bf:
            print(f"tokkit bf16 / transformers fp32: {hf_bf['speedup']:.2f}x")
    return 0 if all(r.get("times") for r in rows if r["group"] == main_group) else 1


if __name__ == "__main__":
    sys.exit(main())
