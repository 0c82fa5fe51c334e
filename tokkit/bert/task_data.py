"""A labelled file as model inputs, batches of it as tensors, and model outputs back to predictions and scores.

One object per file and task: `TaskData` holds the rows as read (tokkit.labelled) and their
features (numpy); `batch` cuts a batch and trims its padding; `predict` runs a model over all of
it; `decode` turns the outputs into labels, tags per word or answer spans, and `score` into the
task's metrics.

>>> data = task_data("classify", tok, rows, head, max_length=128)            # doctest: +SKIP
>>> report = score(data, decode(data, predict(model, data), head), head)    # doctest: +SKIP
>>> report["accuracy"]                                                      # doctest: +SKIP
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import torch

from tokkit.bert.heads import HeadConfig
from tokkit.bert.tasks import Task, numbers, regression_report, task
from tokkit.errors import TokkitError

MODEL_INPUTS = ("input_ids", "token_type_ids", "attention_mask")
__all__ = ["TaskData", "task_data", "check_fits", "check_learnable", "batch", "predict", "decode", "score",
           "numbers", "regression_report"]


@dataclass
class TaskData:
    """The rows of one labelled file and their model inputs (one feature row per text, or per QA window)."""

    task: Task
    rows: list
    features: dict
    labelled: bool

    def __len__(self) -> int:
        return len(self.features["input_ids"])


def task_data(name: str, tokenizer, rows: list, head: HeadConfig, *, max_length: int, stride: int = 128,
              label_all_subtokens: bool = False, labelled: bool = True, training: bool = False) -> TaskData:
    """Features for `rows`; with `labelled`, the targets too (QA: answer positions for `training`,
    character offsets to read answers back otherwise)."""
    if not rows:
        raise TokkitError("no examples to encode")
    kind = task(name)
    feats = kind.features(tokenizer, rows, head, max_length=max_length, stride=stride,
                          label_all_subtokens=label_all_subtokens, labelled=labelled, training=training)
    return TaskData(kind, rows, feats, labelled)


def check_fits(data: "TaskData", config, path) -> None:
    """Every feature row must be one the model can read: its token types within the model's
    (a template with type 5 on a 2-type BERT), its ids within the embeddings, its length within
    the positions. Checked before the first step, naming the file."""
    feats = data.features
    types = getattr(config, "type_vocab_size", None)  # ModernBERT reads no token types
    if types is not None and feats["token_type_ids"].size and int(feats["token_type_ids"].max()) >= types:
        raise TokkitError(f"{path}: the tokenizer's template gives token type {int(feats['token_type_ids'].max())}, "
                          f"but the model has {types} (type_vocab_size)")
    if feats["input_ids"].size and int(feats["input_ids"].max()) >= config.vocab_size:
        raise TokkitError(f"{path}: token id {int(feats['input_ids'].max())} has no embedding in the model "
                          f"(vocab_size {config.vocab_size})")
    if feats["input_ids"].shape[1] > config.max_position_embeddings:
        raise TokkitError(f"{path}: rows of {feats['input_ids'].shape[1]} tokens exceed the model's "
                          f"{config.max_position_embeddings} positions")


def check_learnable(data: "TaskData", path) -> None:
    """Training rows must hold something to learn from: a tagging file whose rows keep no labelled
    word (all empty, or --max-length too short for any word) would give no loss at all."""
    data.task.check_learnable(data.features, path)


def batch(data: TaskData, index: np.ndarray, device=None, *, with_labels: bool = True) -> dict:
    """Tensors of the feature rows `index`, cut to the longest row among them."""
    mask = data.features["attention_mask"][index]
    width = max(1, int(mask.sum(axis=1).max(initial=1)))
    out = {k: torch.from_numpy(np.ascontiguousarray(data.features[k][index, :width]).astype(np.int64))
           for k in MODEL_INPUTS}
    if with_labels and "labels" in data.features:
        labels = data.features["labels"][index]
        out["labels"] = torch.from_numpy(np.ascontiguousarray(data.task.batch_labels(labels, width)))
    return {k: v.to(device) for k, v in out.items()} if device is not None else out


@torch.no_grad()
def predict(model, data: TaskData, *, batch_size: int = 64, device=None, bf16: bool = False) -> np.ndarray:
    """The model's outputs for every feature row, in order: (N, n) class scores, (N,) numbers, or
    (N, T, n) / (N, T, 2) per-token scores padded to the features' width T."""
    was_training = model.training
    model.eval()
    order = np.argsort(data.features["attention_mask"].sum(axis=1), kind="stable")  # similar lengths together
    T = data.features["input_ids"].shape[1]
    out: Optional[np.ndarray] = None
    device_type = device.type if device is not None else "cpu"
    try:
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            b = batch(data, idx, device, with_labels=False)
            with torch.autocast(device_type, dtype=torch.bfloat16, enabled=bf16):
                logits = model(b["input_ids"], b["token_type_ids"], b["attention_mask"]).logits.float().cpu().numpy()
            if out is None:  # per-token outputs are padded to the features' width
                shape = (len(data), T, *logits.shape[2:]) if logits.ndim == 3 else (len(data), *logits.shape[1:])
                out = np.zeros(shape, dtype=np.float32)
            if logits.ndim == 3:
                out[idx, :logits.shape[1]] = logits
            else:
                out[idx] = logits
    finally:
        model.train(was_training)
    return out


def decode(data: TaskData, outputs: np.ndarray, head: HeadConfig, *, n_best: int = 20,
           max_answer_length: int = 30) -> list:
    """Per example: a label (classify), a number (regress), a list of tags (tag) or an answer dict (qa)."""
    return data.task.decode(data, outputs, head, n_best=n_best, max_answer_length=max_answer_length)


def score(data: TaskData, predictions: list, head: HeadConfig) -> dict:
    """The task's metrics against the rows' own labels; "metric" names the one that picks the best model."""
    report = data.task.report(data.rows, predictions, head)
    return {**report, "metric": data.task.metric}
