"""Training-step speed: tokkit.bert against transformers' BertForPreTraining, side by side.

One forward + backward + AdamW step at 4 layers x 256 hidden, batch 32 x 128 without padding,
vocab 30,522, 15% of positions labelled, 2 torch threads. tokens/s = 4,096 / median step time.

    python benchmarks/bench_bert.py [--steps 8] [--warmup 2] [--threads 2] [--compile]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch


def batch(vocab: int, B: int, T: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (B, T), generator=g)
    labels = torch.full((B, T), -100)
    chosen = torch.rand((B, T), generator=g) < 0.15
    labels[chosen] = ids[chosen]
    ids = ids.masked_fill(chosen, 4)  # [MASK]
    nsp = torch.randint(0, 2, (B,), generator=g)
    return ids, torch.zeros_like(ids), torch.ones_like(ids), labels, nsp


def tokkit_model(vocab, compile_):
    from tokkit.bert import BertConfig, BertForPreTraining

    model = BertForPreTraining(BertConfig(vocab_size=vocab))
    fwd = torch.compile(model) if compile_ else model

    def loss(ids, tt, am, labels, nsp):
        return fwd(ids, tt, am, labels=labels, next_sentence_label=nsp).loss
    return model, loss


def hf_model(vocab):
    from transformers import BertConfig, BertForPreTraining

    cfg = BertConfig(vocab_size=vocab, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024)
    model = BertForPreTraining(cfg)

    def loss(ids, tt, am, labels, nsp):
        return model(input_ids=ids, token_type_ids=tt, attention_mask=am, labels=labels,
                     next_sentence_label=nsp).loss
    return model, loss


def time_steps(model, loss_fn, data, steps, warmup, fused, bf16=False):
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01,
                            **({"fused": True} if fused else {"foreach": True}))
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(*data)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if i >= warmup:
            times.append(dt)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--compile", action="store_true", help="torch.compile the tokkit model")
    ap.add_argument("--bf16", action="store_true", help="also time tokkit under bfloat16 autocast")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    data = batch(args.vocab, args.batch, args.seq)
    ntok = args.batch * args.seq

    results = {}
    for name in ("transformers", "tokkit"):
        if name == "tokkit":
            model, fn = tokkit_model(args.vocab, args.compile)
            fused = True
        else:
            model, fn = hf_model(args.vocab)
            fused = False  # transformers' usual Trainer default: foreach AdamW
        results[name] = time_steps(model, fn, data, args.steps, args.warmup, fused)
        print(f"{name:>13}: {results[name] * 1000:8.1f} ms/step  {ntok / results[name]:8.0f} tokens/s", flush=True)
        del model
    if args.bf16:
        model, fn = tokkit_model(args.vocab, args.compile)
        t = time_steps(model, fn, data, args.steps, args.warmup, True, bf16=True)
        print(f"{'tokkit bf16':>13}: {t * 1000:8.1f} ms/step  {ntok / t:8.0f} tokens/s "
              f"({results['transformers'] / t:.2f}x transformers fp32)")
    ratio = results["transformers"] / results["tokkit"]
    print(f"speed ratio tokkit / transformers: {ratio:.2f}x (target >= 2x)")


if __name__ == "__main__":
    main()
