"""RSS of ModernBERT training steps when the number of labelled positions changes every batch.

Trains the 4 x 256 ModernBERT (vocab 8,000) on synthetic 16 x 128 batches and prints the
process's RSS every 10 steps. `--counts fixed` labels exactly 300 positions per batch,
`--counts varying` 250-349 (a new count nearly every batch, as real masking gives).
`--no-bucket` turns off the padding of labelled rows to a multiple of 64 (tokkit.bert.sparse);
TOKKIT_MALLOC=default in the environment leaves glibc's thresholds alone (tokkit.bert.memory).

    python benchmarks/bench_bert_memory.py --counts varying [--no-bucket] [--steps 41] [--fp32]
"""
from __future__ import annotations

import argparse

import torch

import tokkit.bert.modernbert as modernbert
from tokkit.bert import sparse
from tokkit.bert.ddp import make_optimizer, train_step
from tokkit.bert.memory import return_freed_memory
from tokkit.bert.train import rss_mb


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", choices=["fixed", "varying"], default="varying")
    ap.add_argument("--steps", type=int, default=41)
    ap.add_argument("--no-bucket", action="store_true")
    ap.add_argument("--fp32", action="store_true", help="no bf16 autocast")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    applied = return_freed_memory()
    if args.no_bucket:
        modernbert.labelled_rows = lambda labels: sparse.labelled_rows(labels, bucket=1)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = modernbert.ModernBertForMaskedLM(modernbert.ModernBertConfig(vocab_size=8000))
    opt = make_optimizer(model, 1e-3)
    g = torch.Generator().manual_seed(1)
    B, T = 16, 128
    trace = []
    for step in range(args.steps):
        ids = torch.randint(5, 8000, (B, T), generator=g)
        k = 300 if args.counts == "fixed" else 250 + int(torch.randint(0, 100, (), generator=g))
        labels = torch.full((B * T,), -100)
        pos = torch.randperm(B * T, generator=g)[:k]
        labels[pos] = ids.view(-1)[pos]
        train_step(model, opt, {"input_ids": ids, "labels": labels.view(B, T)}, bf16=not args.fp32)
        if step % 10 == 0:
            trace.append((step, round(rss_mb())))
    print(f"counts={args.counts} bucket={not args.no_bucket} glibc_thresholds_fixed={applied} "
          f"bf16={not args.fp32}: (step, RSS MB) {trace}")


if __name__ == "__main__":
    main()
