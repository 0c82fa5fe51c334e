"""Fine-tuning step: tokkit's TaskModel against transformers' Auto classes with a plain AdamW loop.

Same model and weights (tokkit initialises and saves it, transformers loads the folder), same
batches of the labelled file (32 rows, each batch cut to its longest), 2 torch threads; blocks of
steps alternate between the two (tokkit.bench.finetune_suite). Prints ms per step, the ratio, and
with --parity-steps both models' dev scores after that many steps from the same start.

    python benchmarks/bench_finetune.py -t TOK [--task classify|tag] [--arch modernbert|bert] [--bf16]
        [--steps 60] [--rounds 4] [--parity-steps 300]

Defaults read ../shared/tasks/rt-polarity (classify) or ../shared/tasks/brown-pos (tag).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from tokkit.bench.finetune_suite import run_finetune_steps

TASKS = Path(__file__).resolve().parents[1].parent / "shared" / "tasks"
FILES = {"classify": "rt-polarity", "tag": "brown-pos"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-t", "--tokenizer", required=True)
    ap.add_argument("--task", choices=sorted(FILES), default="classify")
    ap.add_argument("--arch", choices=["modernbert", "bert"], default="modernbert")
    ap.add_argument("--bf16", action="store_true", help="both models under bfloat16 autocast")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--parity-steps", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--max-length", type=int, default=128)
    ap.add_argument("--json", default=None, help="also write the figures here")
    args = ap.parse_args(argv)
    folder = TASKS / FILES[args.task]
    with tempfile.TemporaryDirectory() as tmp:
        res = run_finetune_steps(tokenizer=args.tokenizer, train_file=str(folder / "train.jsonl"),
                                 dev_file=str(folder / "dev.jsonl"), task=args.task, arch=args.arch, bf16=args.bf16,
                                 steps=args.steps, rounds=args.rounds, parity_steps=args.parity_steps,
                                 threads=args.threads, max_length=args.max_length, folder=tmp,
                                 log=lambda m: print(m, file=sys.stderr, flush=True))
    precision = "bfloat16" if args.bf16 else "float32"
    print(f"{args.task} {args.arch} {precision}: tokkit {res['tokkit_s_per_step'] * 1000:.1f} ms/step, "
          f"transformers {res['transformers_s_per_step'] * 1000:.1f} ms/step, ratio {res['ratio']:.2f}x "
          f"(target >= 2x; {res['real_tokens_per_row']:.1f} real tokens per row)")
    if args.parity_steps:
        print(f"after {args.parity_steps} steps from one start: dev score tokkit {res['tokkit_metric']:.4f}, "
              f"transformers {res['transformers_metric']:.4f}")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, sort_keys=True), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
