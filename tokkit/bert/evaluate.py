"""Held-out MLM evaluation and the loss-curve chart.

Metrics: MLM loss and perplexity over labelled positions, accuracy on the positions replaced by
[MASK], accuracy on all labelled positions, and the [MASK] accuracy of always predicting the most
frequent token of the held-out text (the unigram baseline) with the ratio between the two.

>>> metrics = evaluate(model, eval_batches, mask_token_id=4, baseline_id=7)   # doctest: +SKIP
>>> metrics["mask_acc_ratio"]                                                  # doctest: +SKIP
"""
from __future__ import annotations

import json
import logging
import math
from collections import Counter
from pathlib import Path
from typing import Iterable, Optional

import torch

log = logging.getLogger(__name__)


def most_frequent_token(batches: Iterable[dict], special_ids: Iterable[int]) -> int:
    """The commonest non-special token of the original (unmasked) text in `batches`."""
    counts: Counter = Counter()
    special = torch.tensor(sorted(set(special_ids)))
    for b in batches:
        orig = torch.where(b["labels"] != -100, b["labels"], b["input_ids"])
        keep = ~torch.isin(orig, special)
        if "attention_mask" in b:
            keep &= b["attention_mask"].bool()
        ids, n = torch.unique(orig[keep], return_counts=True)
        counts.update(dict(zip(ids.tolist(), n.tolist())))
    if not counts:
        raise ValueError("evaluation text holds no ordinary tokens")
    return min(counts, key=lambda t: (-counts[t], t))


@torch.no_grad()
def evaluate(model, batches: list[dict], *, mask_token_id: int, baseline_id: int,
             device: Optional[torch.device] = None) -> dict:
    """MLM metrics of `model` (eval mode, restored afterwards) over pre-masked `batches`."""
    was_training = model.training
    model.eval()
    loss_sum = 0.0
    n_lab = n_lab_ok = n_mask = n_mask_ok = n_mask_base = 0
    for b in batches:
        b = {k: v.to(device) for k, v in b.items()} if device is not None else b
        labels = b["labels"]
        out = model(b["input_ids"], b.get("token_type_ids"), b.get("attention_mask"), labels=labels)
        sel = labels != -100
        target = labels[sel]
        pred = out.mlm_logits.argmax(-1)
        is_mask = b["input_ids"][sel] == mask_token_id
        loss_sum += float(out.mlm_loss_sum)
        n_lab += int(sel.sum())
        n_lab_ok += int((pred == target).sum())
        n_mask += int(is_mask.sum())
        n_mask_ok += int(((pred == target) & is_mask).sum())
        n_mask_base += int(((target == baseline_id) & is_mask).sum())
    model.train(was_training)
    loss = loss_sum / max(1, n_lab)
    acc = n_mask_ok / max(1, n_mask)
    base = n_mask_base / max(1, n_mask)
    return {
        "mlm_loss": loss,
        "perplexity": math.exp(loss) if loss < 700 else float("inf"),
        "mask_acc": acc,
        "labelled_acc": n_lab_ok / max(1, n_lab),
        "baseline_mask_acc": base,
        "mask_acc_ratio": acc / base if base else float("nan"),
        "mask_positions": n_mask,
        "labelled_positions": n_lab,
    }


def plot_loss_curve(metrics_path: Path, png_path: Path) -> Optional[Path]:
    """Draw train/eval loss and the eval accuracy ratio from metrics.jsonl; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: no loss-curve chart (metrics.jsonl has the numbers)")
        return None
    train, evals = [], []
    for line in Path(metrics_path).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        (evals if rec.get("kind") == "eval" else train).append(rec)
    if not train and not evals:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    if train:
        steps = [r["step"] for r in train]
        ax1.plot(steps, [r["mlm_loss"] for r in train], lw=0.6, alpha=0.5, label="train MLM loss")
        k = max(1, len(train) // 50)  # a running mean makes the trend readable
        smooth = [sum(r["mlm_loss"] for r in train[max(0, i - k):i + 1]) / len(train[max(0, i - k):i + 1])
                  for i in range(len(train))]
        ax1.plot(steps, smooth, lw=1.5, label="train (running mean)")
    if evals:
        ax1.plot([r["step"] for r in evals], [r["mlm_loss"] for r in evals], "o-", label="held-out MLM loss")
        ax2.plot([r["step"] for r in evals], [r["mask_acc_ratio"] for r in evals], "o-", color="C3",
                 label="[MASK] acc / most-frequent-token acc")
        ax2.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax2.axhline(2.0, color="green", lw=0.8, ls=":")
    ax1.set_xlabel("step")
    ax1.set_ylabel("loss")
    ax1.legend()
    ax2.set_xlabel("step")
    ax2.set_ylabel("ratio")
    if evals:
        ax2.legend()
    fig.tight_layout()
    tmp = Path(png_path).with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(png_path)
    return Path(png_path)
