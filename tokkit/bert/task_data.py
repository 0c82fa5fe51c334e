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

from tokkit.bert.heads import IGNORE_INDEX, HeadConfig
from tokkit.errors import TokkitError
from tokkit.labelled import (classification_features, classification_report, qa_features, qa_predictions,
                             squad_report, tagging_features, tagging_report, word_predictions)

MODEL_INPUTS = ("input_ids", "token_type_ids", "attention_mask")
MAIN_METRIC = {"classify": "accuracy", "regress": "pearson", "tag": "token_accuracy", "qa": "f1"}


def reader_task(task: str) -> str:
    """The file layout a task reads: regression rows are classification rows with numbers for labels."""
    return "classify" if task == "regress" else task


@dataclass
class TaskData:
    """The rows of one labelled file and their model inputs (one feature row per text, or per QA window)."""

    task: str
    rows: list
    features: dict
    labelled: bool

    def __len__(self) -> int:
        return len(self.features["input_ids"])


def task_data(task: str, tokenizer, rows: list, head: HeadConfig, *, max_length: int, stride: int = 128,
              label_all_subtokens: bool = False, labelled: bool = True, training: bool = False) -> TaskData:
    """Features for `rows`; with `labelled`, the targets too (QA: answer positions for `training`,
    character offsets to read answers back otherwise)."""
    if not rows:
        raise TokkitError("no examples to encode")
    label2id = {name: i for i, name in enumerate(head.labels)}
    if task == "classify":
        feats = classification_features(tokenizer, rows, label2id if labelled else None, max_length=max_length)
    elif task == "regress":
        feats = classification_features(tokenizer, rows, None, max_length=max_length)
        if labelled:
            feats["labels"] = numbers(rows)
    elif task == "tag":
        feats = tagging_features(tokenizer, rows, label2id if labelled else None, max_length=max_length,
                                 label_all_subtokens=label_all_subtokens)
    else:
        feats = qa_features(tokenizer, rows, max_length=max_length, stride=stride, training=training and labelled)
        if "start_positions" in feats:
            feats["labels"] = np.stack([feats.pop("start_positions"), feats.pop("end_positions")], axis=1)
    return TaskData(task, rows, feats, labelled)


def numbers(rows: list, path=None) -> np.ndarray:
    """The rows' labels as float32 regression targets; a label that is not a finite number is a
    TokkitError naming the file and line."""
    where = f"{path}: " if path is not None else ""
    out = np.empty(len(rows), dtype=np.float32)
    for i, row in enumerate(rows):
        try:
            out[i] = float(row["label"])
        except (TypeError, ValueError, OverflowError):
            raise TokkitError(f"{where}line {row.get('line')}: label {row['label']!r} is not a number "
                              "(a regression task needs numbers)") from None
        if not np.isfinite(out[i]):
            raise TokkitError(f"{where}line {row.get('line')}: label {row['label']!r} is not a finite number")
    return out


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
    labels = data.features.get("labels")
    if data.task == "tag" and labels is not None and not (labels != IGNORE_INDEX).any():
        raise TokkitError(f"{path}: no row keeps a labelled word within max_length: every row is empty, or "
                          "--max-length leaves no room after the special tokens")


def batch(data: TaskData, index: np.ndarray, device=None, *, with_labels: bool = True) -> dict:
    """Tensors of the feature rows `index`, cut to the longest row among them."""
    mask = data.features["attention_mask"][index]
    width = max(1, int(mask.sum(axis=1).max(initial=1)))
    out = {k: torch.from_numpy(np.ascontiguousarray(data.features[k][index, :width]).astype(np.int64))
           for k in MODEL_INPUTS}
    if with_labels and "labels" in data.features:
        labels = data.features["labels"][index]
        out["labels"] = torch.from_numpy(np.ascontiguousarray(labels[:, :width] if labels.ndim == 2 and
                                                              data.task == "tag" else labels))
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
    if data.task == "classify":
        return [head.labels[i] for i in outputs.argmax(axis=1)]
    if data.task == "regress":
        return [float(x) for x in outputs]
    if data.task == "tag":
        words = word_predictions(data.features["word_ids"], outputs, [len(r["tokens"]) for r in data.rows])
        return [[head.labels[i] if i >= 0 else None for i in row] for row in words]
    return qa_predictions(data.rows, data.features, outputs[..., 0], outputs[..., 1], n_best=n_best,
                          max_answer_length=max_answer_length)


def score(data: TaskData, predictions: list, head: HeadConfig) -> dict:
    """The task's metrics against the rows' own labels; "metric" names the one that picks the best model."""
    task = data.task
    if task == "classify":
        report = classification_report([r["label"] for r in data.rows], predictions, list(head.labels))
    elif task == "regress":
        report = regression_report(numbers(data.rows), np.array(predictions, dtype=np.float64))
    elif task == "tag":
        report = tagging_report([r["tags"] for r in data.rows], predictions, list(head.labels))
    else:
        report = squad_report({p["id"]: p["answer"] for p in predictions}, data.rows)
    return {**report, "metric": MAIN_METRIC[task]}


def regression_report(gold: np.ndarray, pred: np.ndarray) -> dict:
    """Mean squared error and Pearson's r.

    >>> regression_report(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))["pearson"] > 0.98
    True
    """
    gold, pred = np.asarray(gold, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    spread = gold.std() * pred.std()
    r = float(((gold - gold.mean()) * (pred - pred.mean())).mean() / spread) if spread > 0 else 0.0
    return {"mse": float(((gold - pred) ** 2).mean()), "pearson": r, "examples": int(gold.size)}
