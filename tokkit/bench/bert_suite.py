"""BERT training-step speed: tokkit.bert against transformers' BertForPreTraining.

The measurement of `tokkit bench --suite bert` and benchmarks/bench_bert.py: one forward + backward + AdamW step
(with gradient clipping) at 4 layers x 256 hidden, batch 32 x 128 without padding, vocab 30,522,
15% of positions labelled, NSP labels, 2 torch threads; tokens/s = 4,096 / median step time.
tokkit's model steps with fused AdamW, transformers' with foreach AdamW (its Trainer's default).
Each model lives in its own worker process; steps alternate between the two (or blocks of steps:
see `run_bert_suite`).
"""
from __future__ import annotations

from tokkit.bench.contenders import skip_note
from tokkit.bench.harness import measure_tasks
from tokkit.bench.report import group_rows


def make_batch(vocab: int, B: int, T: int, seed: int = 0):
    """ids with 15% of positions replaced by [MASK] (id 4), their labels, NSP labels."""
    import torch

    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (B, T), generator=g)
    labels = torch.full((B, T), -100)
    chosen = torch.rand((B, T), generator=g) < 0.15
    labels[chosen] = ids[chosen]
    ids = ids.masked_fill(chosen, 4)
    nsp = torch.randint(0, 2, (B,), generator=g)
    return ids, torch.zeros_like(ids), torch.ones_like(ids), labels, nsp


def build_model(impl: str = "tokkit", vocab: int = 30522, compile_: bool = False):
    """(model, loss_fn(ids, tt, am, labels, nsp), AdamW options) for `impl`, "tokkit" or "transformers".

    Both are 4 x 256 BERTs with BERT's defaults otherwise; tokkit steps with fused AdamW,
    transformers with foreach AdamW (its Trainer's default).
    """
    if impl == "tokkit":
        import torch

        from tokkit.bert import BertConfig, BertForPreTraining

        model = BertForPreTraining(BertConfig(vocab_size=vocab))
        fwd = torch.compile(model) if compile_ else model

        def loss_fn(ids, tt, am, labels, nsp):
            return fwd(ids, tt, am, labels=labels, next_sentence_label=nsp).loss
        return model, loss_fn, {"fused": True}
    from transformers import BertConfig, BertForPreTraining

    cfg = BertConfig(vocab_size=vocab, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                     intermediate_size=1024)
    model = BertForPreTraining(cfg)

    def loss_fn(ids, tt, am, labels, nsp):
        return model(input_ids=ids, token_type_ids=tt, attention_mask=am, labels=labels,
                     next_sentence_label=nsp).loss
    return model, loss_fn, {"foreach": True}


def step_task(impl: str = "tokkit", vocab: int = 30522, batch: int = 32, seq: int = 128, threads: int = 2,
              bf16: bool = False, compile_: bool = False):
    """A zero-argument callable doing one optimizer step of `impl` ("tokkit" or "transformers").

    `bf16` runs the forward pass under bfloat16 autocast; `compile_` torch.compiles tokkit's model.
    """
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    data = make_batch(vocab, batch, seq)
    model, loss_fn, opt_kw = build_model(impl, vocab, compile_)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, **opt_kw)

    def run():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = loss_fn(*data)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return run


TRANSFORMERS = "transformers (BertForPreTraining)"
BF16 = "tokkit bf16"


def run_bert_suite(*, threads: int = 2, repeat: int = 8, warmup: int = 2, log=print, vocab: int = 30522,
                   batch: int = 32, seq: int = 128, block: int = 1, block_warmup: int = 0, rotate: bool = False,
                   compile_: bool = False, bf16: bool = False) -> list[dict]:
    """tokens/s of one training step, tokkit.bert vs transformers (vocab/batch/seq: smaller for tests).

    `warmup` untimed rounds, then `repeat` rounds; in each round every model takes a turn of
    `block_warmup` untimed steps and `block` timed ones (see `measure_tasks`; `rotate` changes which
    model leads). `compile_` torch.compiles tokkit's model; `bf16` adds tokkit under bfloat16
    autocast, with a second group comparing it to transformers in fp32.
    """
    notes, tasks = {}, {}
    B = "tokkit.bench.bert_suite:step_task"
    if skip_note("torch"):
        return group_rows("bert", "BERT training step", {}, baseline="tokkit",
                          notes={"tokkit": skip_note("torch") + " (pip install 'tokkit[bert]')"})
    shape = {"vocab": vocab, "batch": batch, "seq": seq, "threads": threads}
    tasks["tokkit"] = (B, {"impl": "tokkit", "compile_": compile_, **shape})
    if skip_note("transformers"):
        notes[TRANSFORMERS] = skip_note("transformers")
    else:
        tasks[TRANSFORMERS] = (B, {"impl": "transformers", **shape})
    if bf16:
        tasks[BF16] = (B, {"impl": "tokkit", "bf16": True, "compile_": compile_, **shape})
    group = f"BERT pretraining step: 4 x 256, batch {batch} x {seq}, vocab {vocab:,}, {threads} threads"
    log(f"bert: {group}")
    results = measure_tasks(tasks, repeat=repeat, warmup=warmup, log=log, block=block, block_warmup=block_warmup,
                            rotate=rotate)
    fp32 = {name: res for name, res in results.items() if name != BF16}
    rows = group_rows("bert", group, fp32, baseline="tokkit", work=batch * seq, unit="tokens/s", notes=notes,
                      target="tokkit/transformers speed >= 2x")
    if bf16:
        pair = {name: results[name] for name in (BF16, TRANSFORMERS) if name in results}
        rows += group_rows("bert", f"{group}, tokkit under bf16 autocast", pair, baseline=BF16,
                           work=batch * seq, unit="tokens/s", notes=notes)
    return rows
