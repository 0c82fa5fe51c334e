"""Training-step speed: tokkit.bert against transformers' BertForPreTraining, side by side.

One forward + backward + AdamW step at 4 layers x 256 hidden, batch 32 x 128 without padding,
vocab 30,522, 15% of positions labelled, 2 torch threads. tokens/s = 4,096 / median step time.
Both models live in this process and take turns in blocks (--rounds of them, each a warm-up step
and then timed steps), so a change in the machine's load touches both alike. Blocks rather than
single alternating steps because transformers' step runs 15-20% slower right after a tokkit step
(caches and allocator state), which would be unfair to it. The models and the step are
tokkit.bench.bert_suite's (the `tokkit bench --suite bert` measurement, which runs each model in
its own process instead).

    python benchmarks/bench_bert.py [--steps 8] [--rounds 2] [--warmup 1] [--threads 2] [--compile] [--bf16]
"""
from __future__ import annotations

import argparse
import statistics
import time

from tokkit.bench.bert_suite import step_task


def main():
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
    args = ap.parse_args()
    shape = dict(vocab=args.vocab, batch=args.batch, seq=args.seq, threads=args.threads)
    steps = {"transformers": step_task("transformers", **shape),
             "tokkit": step_task("tokkit", compile_=args.compile, **shape)}
    if args.bf16:
        steps["tokkit bf16"] = step_task("tokkit", bf16=True, compile_=args.compile, **shape)
    warmup = args.warmup if args.warmup is not None else (2 if args.compile else 1)
    times = {name: [] for name in steps}
    per_block = max(1, -(-args.steps // args.rounds))
    names = list(steps)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:  # a different model leads each round
            step = steps[name]
            for i in range(warmup + per_block):
                t0 = time.perf_counter()
                step()
                if i >= warmup:
                    times[name].append(time.perf_counter() - t0)
    ntok = args.batch * args.seq
    median = {name: statistics.median(t) for name, t in times.items()}
    for name, t in median.items():
        print(f"{name:>13}: {t * 1000:8.1f} ms/step  {ntok / t:8.0f} tokens/s", flush=True)
    ratio = median["transformers"] / median["tokkit"]
    print(f"speed ratio tokkit / transformers: {ratio:.2f}x (target >= 2x)")
    if args.bf16:
        print(f"tokkit bf16 / transformers fp32: {median['transformers'] / median['tokkit bf16']:.2f}x")


if __name__ == "__main__":
    main()
