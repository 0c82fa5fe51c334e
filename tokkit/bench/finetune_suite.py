"""Fine-tuning step speed and accuracy: tokkit's TaskModel against transformers' Auto classes, side by side.

The same model (one initialisation, saved by tokkit, loaded by transformers'
AutoModelForSequenceClassification or AutoModelForTokenClassification), the same batches of a
labelled file (tokkit.labelled's features, each batch cut to its longest row), one step each:
forward with the labels, backward, clipping, AdamW. tokkit steps as `tokkit finetune` does
(tokkit.bert.ddp.task_step, fused AdamW); transformers with a plain loop (torch.optim.AdamW with
its defaults). The two take turns in blocks of steps, a warm-up step opening each block, so a
change in the machine's load touches both alike. With `parity_steps`, each model then trains that
many steps from the same start on the same batches, and both are scored on the evaluation file.
"""
from __future__ import annotations

import itertools

import numpy as np
import torch

from tokkit.bench.timing import time_calls
from tokkit.bert import HeadConfig, TaskModel, save_hf
from tokkit.bert import task_data as td
from tokkit.bert.ddp import task_step
from tokkit.bert.finetune_config import FinetuneConfig
from tokkit.bert.finetune_model import layerwise_optimizer
from tokkit.bert.folders import load_tokenizer
from tokkit.bert.recipe import model_config
from tokkit.labelled import label_list, read_examples


def _models(tok, arch: str, head, folder: str):
    import transformers

    torch.manual_seed(0)
    ours = TaskModel(model_config(arch, {"vocab_size": tok.vocab_size}), head)
    save_hf(ours, tok, folder, force=True)
    auto = getattr(transformers, head.kind.auto_class)
    theirs = auto.from_pretrained(folder)
    return ours.train(), theirs.train()


def _steppers(ours, theirs, arch: str, bf16: bool):
    opt = layerwise_optimizer(ours, FinetuneConfig(task=ours.task))
    hf_opt = torch.optim.AdamW(theirs.parameters(), lr=1e-4, weight_decay=0.01)

    def tokkit_step(b):
        return task_step(ours, opt, b, clip=1.0, bf16=bf16)

    def transformers_step(b):
        kw = {"input_ids": b["input_ids"], "attention_mask": b["attention_mask"], "labels": b["labels"]}
        if arch == "bert":
            kw["token_type_ids"] = b["token_type_ids"]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = theirs(**kw)
        hf_opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        hf_opt.step()
        return float(out.loss)
    return {"tokkit": tokkit_step, "transformers": transformers_step}


def _accuracy(model, data, head, arch: str, bf16: bool, transformers_model: bool) -> float:
    """Accuracy (classify) or token accuracy (tag) of `model` on `data`."""
    if not transformers_model:
        outputs = td.predict(model, data, bf16=bf16)
    else:
        model.eval()
        T = data.features["input_ids"].shape[1]
        parts = []
        with torch.no_grad():
            for start in range(0, len(data), 64):
                b = td.batch(data, np.arange(start, min(start + 64, len(data))), with_labels=False)
                kw = {"input_ids": b["input_ids"], "attention_mask": b["attention_mask"]}
                if arch == "bert":
                    kw["token_type_ids"] = b["token_type_ids"]
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    logits = model(**kw).logits.float().numpy()
                if logits.ndim == 3:
                    logits = np.pad(logits, ((0, 0), (0, T - logits.shape[1]), (0, 0)))
                parts.append(logits)
        model.train()
        outputs = np.concatenate(parts)
    report = td.score(data, td.decode(data, outputs, head), head)
    return report[report["metric"]]


def run_finetune_steps(*, tokenizer, train_file: str, dev_file: str, task: str = "classify",
                       arch: str = "modernbert", bf16: bool = False, batch_size: int = 32, max_length: int = 128,
                       steps: int = 30, rounds: int = 3, parity_steps: int = 0, threads: int = 2,
                       folder: str, limit: int = 4000, log=lambda m: None) -> dict:
    """Median seconds per step of each contender, their ratio, and (with parity_steps) both accuracies."""
    torch.set_num_threads(threads)
    tok = load_tokenizer(tokenizer)
    all_rows = read_examples(train_file, task)
    head = HeadConfig(task, labels=tuple(label_list(all_rows, task)))
    rows = all_rows[:limit]
    data = td.task_data(task, tok, rows, head, max_length=max_length)
    order = np.random.default_rng(0).permutation(len(data))
    n_batches = len(data) // batch_size
    batches = [td.batch(data, order[i * batch_size:(i + 1) * batch_size]) for i in range(n_batches)]
    ours, theirs = _models(tok, arch, head, folder)
    step = _steppers(ours, theirs, arch, bf16)
    per_block = max(1, steps // rounds)
    feeds = {name: itertools.cycle(batches) for name in step}  # every contender steps through the same batches
    calls = {name: (lambda name=name: step[name](next(feeds[name]))) for name in step}
    # each turn starts with an untimed step so the caches hold this model's weights again
    times = time_calls(calls, rounds=rounds, warmup=0, block=per_block, block_warmup=1, order="reverse", log=log)
    out = {"task": task, "arch": arch, "bf16": bf16, "batch_size": batch_size, "threads": threads,
           "real_tokens_per_row": float(data.features["attention_mask"].sum(1).mean()),
           **{f"{name}_s_per_step": res.median for name, res in times.items()}}
    out["ratio"] = out["transformers_s_per_step"] / out["tokkit_s_per_step"]
    if parity_steps:
        out.update(_parity(tok, arch, head, data, batches, bf16, parity_steps, task, dev_file, max_length, folder))
    return out


def _parity(tok, arch, head, data, batches, bf16, parity_steps, task, dev_file, max_length, folder) -> dict:
    """Both models trained `parity_steps` steps from one start on the same batches, then scored."""
    dev = td.task_data(task, tok, read_examples(dev_file, task), head, max_length=max_length, labelled=False)
    ours, theirs = _models(tok, arch, head, folder)
    step = _steppers(ours, theirs, arch, bf16)
    for name in step:
        for i in range(parity_steps):
            step[name](batches[i % len(batches)])
    return {"parity_steps": parity_steps,
            "tokkit_metric": _accuracy(ours, dev, head, arch, bf16, False),
            "transformers_metric": _accuracy(theirs, dev, head, arch, bf16, True)}
