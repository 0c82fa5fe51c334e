"""The transformers side of bench_finetune_story.py: its own fine-tuning of the exported pretrained
folder with tokkit's settings, and tokkit's fine-tuned folder read through the Auto classes."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import torch

from tokkit.bert.finetune_run import epoch_order
from tokkit.bert.predict import load_finetuned, predict_rows
from tokkit.bert.schedule import Schedule
from tokkit.labelled import read_examples

LABELS = ("fresh", "rotten")


def _encode(auto_tok, rows, max_length):
    return auto_tok([r["text"] for r in rows], truncation=True, max_length=max_length, padding=True,
                    return_tensors="pt")


def _accuracy(model, auto_tok, rows, max_length, bf16) -> float:
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(rows), 64):
            part = rows[i:i + 64]
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits = model(**_encode(auto_tok, part, max_length)).logits
            right += sum(LABELS[k] == r["label"] for k, r in zip(logits.argmax(-1).tolist(), part))
    model.train()
    return right / len(rows)


def transformers_check(out: Path, pre: Path, rt: Path, tokkit_run: dict, args) -> dict:
    """transformers fine-tuning the exported pretrained folder with tokkit's settings; and tokkit's
    fine-tuned folder through AutoModelForSequenceClassification (share of test labels that agree)."""
    import transformers

    summary = json.loads((out / tokkit_run["name"] / "summary.json").read_text())
    cfg = summary["config"]
    torch.set_num_threads(args.threads)
    torch.manual_seed(cfg["seed"])
    folder = pre / "model"
    auto_tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        folder, num_labels=2, id2label=dict(enumerate(LABELS)), label2id={x: i for i, x in enumerate(LABELS)})
    train, dev, test = (read_examples(rt / f"{s}.jsonl", "classify") for s in ("train", "dev", "test"))
    decay = [p for p in model.parameters() if p.ndim >= 2]
    rest = [p for p in model.parameters() if p.ndim < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg["weight_decay"]}, {"params": rest,
                             "weight_decay": 0.0}], lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8)
    steps = summary["steps"]
    schedule = Schedule(peak=cfg["lr"], steps=steps, warmup_share=cfg["warmup"])
    per_epoch = -(-len(train) // cfg["batch_size"])
    best, best_state, step = -1.0, None, 0
    model.train()
    while step < steps:
        order = epoch_order(cfg["seed"], step // per_epoch, len(train))
        for b in range(step % per_epoch, per_epoch):
            rows = [train[i] for i in order[b * cfg["batch_size"]:(b + 1) * cfg["batch_size"]]]
            batch = _encode(auto_tok, rows, cfg["max_length"] or 128)
            labels = torch.tensor([LABELS.index(r["label"]) for r in rows])
            for g in opt.param_groups:
                g["lr"] = schedule.lr(step)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bool(cfg["bf16"])):
                loss = model(**batch, labels=labels).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["clip"])
            opt.step()
            step += 1
            if step == steps:
                break
        acc = _accuracy(model, auto_tok, dev, cfg["max_length"] or 128, bool(cfg["bf16"]))
        if acc > best:
            best, best_state = acc, {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state)
    test_acc = _accuracy(model, auto_tok, test, cfg["max_length"] or 128, bool(cfg["bf16"]))
    return {"test": test_acc, "dev": best, "steps": steps, "agreement": _agreement(out / tokkit_run["name"], test)}


def _agreement(folder: Path, test: list) -> float:
    """Share of test texts on which transformers' reading of tokkit's fine-tuned folder gives
    tokkit's label, both in float32."""
    import transformers

    ours = [p["label"] for p in predict_rows(dataclasses.replace(load_finetuned(folder), bf16=False), test)]
    auto_tok = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(folder).eval()
    theirs = []
    with torch.no_grad():
        for i in range(0, len(test), 64):
            logits = model(**_encode(auto_tok, test[i:i + 64], 128)).logits
            theirs += [model.config.id2label[k] for k in logits.argmax(-1).tolist()]
    return float(np.mean([a == b for a, b in zip(ours, theirs)]))
