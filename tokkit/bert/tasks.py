"""The fine-tuning tasks, each one object: its rows, labels, head, loss, metric, Hugging Face class and predictions.

A task reads one layout of labelled rows (tokkit.labelled.layouts), turns them into features,
shapes the head's output and its loss, decodes outputs into predictions, scores them by its
metric, and names the transformers class its folder loads in. Everything that differs between
tasks is here; the rest of tokkit asks `task(name)`. A new task is one new subclass in TASKS.

>>> task("regress").rows, task("regress").metric, task("tag").architecture("modernbert")
('classify', 'pearson', 'ModernBertForTokenClassification')
>>> [t.name for t in TASKS.values() if t.sentence]
['classify', 'regress']
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from tokkit.errors import TokkitError
from tokkit.labelled import (IGNORE_INDEX, check_labels, classification_features, classification_report,
                             qa_features, qa_predictions, squad_report, tagging_features, tagging_report, text_words,
                             word_predictions)

ARCH_PREFIX = {"bert": "Bert", "modernbert": "ModernBert"}  # transformers' class names start so


class Task:
    """What one fine-tuning task is; the subclasses below fill it in."""

    name: str
    rows: str                      # the layout of labelled rows it reads
    suffix: str                    # transformers' class: "Bert" / "ModernBert" + suffix, "AutoModel" + suffix
    metric: str                    # the report's figure that picks the best model
    min_labels = 0                 # a label set of at least this many (0: the task has no label set)
    sentence = False               # one output per row, from a pooled vector
    word_labels = False            # a label per word (--label-all-subtokens applies)
    windows = False                # rows read in windows of `stride` overlap; no --max-length auto
    default_length = 128
    bert_linear = "classifier"     # the name of BERT's final linear layer in transformers
    bert_head_dropout: Optional[float] = None  # None: BERT's hidden dropout
    problem_type: Optional[str] = None

    @property
    def has_labels(self) -> bool:
        """Whether the task predicts names from a label set (kept in config.json's id2label)."""
        return self.min_labels > 0

    def architecture(self, arch: str) -> str:
        """transformers' class of a fine-tuned `arch` ("bert", "modernbert") folder."""
        return ARCH_PREFIX[arch] + self.suffix

    @property
    def auto_class(self) -> str:
        return "AutoModel" + self.suffix

    # ------------------------------------------------------------------------ the head
    def outputs(self, head) -> int:
        """Width of the head's final linear layer."""
        return len(head.labels)

    def hf_labels(self, head) -> tuple:
        """config.json's id2label names (transformers numbers a head without names LABEL_0, ...)."""
        return head.labels

    def from_folder(self, config: dict, n_labels: int) -> "Task":
        """The task a folder fine-tuned for this task's class holds (a sequence classifier may regress)."""
        return self

    def forward(self, head, hidden: Tensor, labels: Optional[Tensor]) -> tuple[Optional[Tensor], Tensor]:
        """(loss or None, logits) of the head over the encoder's vectors."""
        logits = head(hidden)
        return (None if labels is None else self.loss(logits, labels)), logits

    def loss(self, logits: Tensor, labels: Tensor) -> Tensor:
        """Cross-entropy over the labels, -100 ignored; a batch with no label adds 0, not the NaN of
        a mean over nothing (a tagging row may be empty), which would read as a diverged run."""
        logits = logits.float()
        if not bool((labels != IGNORE_INDEX).any()):
            return logits.sum() * 0.0
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)

    # ------------------------------------------------------------------------ rows and features
    def features(self, tokenizer, rows: list, head, *, max_length: int, stride: int, label_all_subtokens: bool,
                 labelled: bool, training: bool) -> dict:
        """The model inputs of `rows` and, with `labelled`, their targets (numpy)."""
        raise NotImplementedError

    def check_eval_rows(self, rows: list, head, path, unseen_labels: str) -> None:
        """Refuse, before training, an evaluation file scoring would fail on."""
        if self.has_labels and unseen_labels == "error":
            check_labels(rows, self.rows, {x: i for i, x in enumerate(head.labels)}, path)

    def check_learnable(self, features: dict, path) -> None:
        """Refuse training rows that hold nothing to learn from."""

    def batch_labels(self, labels: np.ndarray, width: int) -> np.ndarray:
        """A batch's targets once its rows are cut to `width` tokens."""
        return labels

    def plain_rows(self, lines: list[str], tokenizer) -> list[dict]:
        """Rows for plain-text input, one text per line."""
        return [{"text": line, "text_pair": None, "label": None, "line": i + 1} for i, line in enumerate(lines)]

    # ------------------------------------------------------------------------ outputs back
    def decode(self, data, outputs: np.ndarray, head, *, n_best: int, max_answer_length: int) -> list:
        """Per row: the prediction."""
        raise NotImplementedError

    def report(self, rows: list, predictions: list, head) -> dict:
        """The metrics of `predictions` against the rows' own labels."""
        raise NotImplementedError

    def predictions(self, rows: list, decoded: list, outputs: np.ndarray) -> list[dict]:
        """One JSON-able prediction per row, as `tokkit predict` writes it."""
        return decoded


class Classify(Task):
    """A label per text or text pair."""

    name, rows, suffix, metric = "classify", "classify", "ForSequenceClassification", "accuracy"
    min_labels, sentence, problem_type = 2, True, "single_label_classification"

    def from_folder(self, config: dict, n_labels: int) -> Task:
        return TASKS["regress"] if config.get("problem_type") == "regression" or n_labels == 1 else self

    def features(self, tokenizer, rows, head, *, max_length, stride, label_all_subtokens, labelled, training):
        label2id = {name: i for i, name in enumerate(head.labels)}
        return classification_features(tokenizer, rows, label2id if labelled else None, max_length=max_length)

    def decode(self, data, outputs, head, *, n_best, max_answer_length):
        return [head.labels[i] for i in outputs.argmax(axis=1)]

    def report(self, rows, predictions, head):
        return classification_report([r["label"] for r in rows], predictions, list(head.labels))

    def predictions(self, rows, decoded, outputs):
        probs = torch.softmax(torch.from_numpy(outputs), dim=-1).numpy()
        return [{"label": label, "score": round(float(p.max()), 6)} for label, p in zip(decoded, probs)]


class Regress(Classify):
    """A number per text or text pair: classification's rows, their labels read as numbers."""

    name, metric, min_labels, problem_type = "regress", "pearson", 0, "regression"

    def outputs(self, head) -> int:
        return 1

    def hf_labels(self, head) -> tuple:
        return ("LABEL_0",)

    def forward(self, head, hidden, labels):
        logits = head(hidden).squeeze(-1)
        return (None if labels is None else self.loss(logits, labels)), logits

    def loss(self, logits, labels):
        logits = logits.float()
        return F.mse_loss(logits, labels.to(logits.dtype))

    def features(self, tokenizer, rows, head, *, max_length, stride, label_all_subtokens, labelled, training):
        feats = classification_features(tokenizer, rows, None, max_length=max_length)
        if labelled:
            feats["labels"] = numbers(rows)
        return feats

    def check_eval_rows(self, rows, head, path, unseen_labels):
        numbers(rows, path)  # scored after the first epoch: a bad label must fail now

    def decode(self, data, outputs, head, *, n_best, max_answer_length):
        return [float(x) for x in outputs]

    def report(self, rows, predictions, head):
        return regression_report(numbers(rows), np.array(predictions, dtype=np.float64))

    def predictions(self, rows, decoded, outputs):
        return [{"value": v} for v in decoded]


class Tag(Task):
    """A label per word; the head reads each word's first sub-token."""

    name, rows, suffix, metric = "tag", "tag", "ForTokenClassification", "token_accuracy"
    min_labels, word_labels = 1, True

    def forward(self, head, hidden, labels):
        if labels is None:
            return None, head(hidden)
        keep = labels != IGNORE_INDEX  # training reads the words' first sub-tokens only: the head runs there alone
        logits = head(hidden[keep])  # (labelled tokens, n)
        return self.loss(logits, labels[keep]), logits

    def features(self, tokenizer, rows, head, *, max_length, stride, label_all_subtokens, labelled, training):
        label2id = {name: i for i, name in enumerate(head.labels)}
        return tagging_features(tokenizer, rows, label2id if labelled else None, max_length=max_length,
                                label_all_subtokens=label_all_subtokens)

    def check_learnable(self, features, path):
        labels = features.get("labels")
        if labels is not None and not (labels != IGNORE_INDEX).any():
            raise TokkitError(f"{path}: no row keeps a labelled word within max_length: every row is empty, or "
                              "--max-length leaves no room after the special tokens")

    def batch_labels(self, labels, width):
        return labels[:, :width] if labels.ndim == 2 else labels

    def plain_rows(self, lines, tokenizer):
        """Each line's words as the tokenizer's pre-tokenizer cuts them."""
        return [{"tokens": [w for w, _, _ in text_words(line, tokenizer)], "tags": None, "line": i + 1}
                for i, line in enumerate(lines)]

    def decode(self, data, outputs, head, *, n_best, max_answer_length):
        words = word_predictions(data.features["word_ids"], outputs, [len(r["tokens"]) for r in data.rows])
        return [[head.labels[i] if i >= 0 else None for i in row] for row in words]

    def report(self, rows, predictions, head):
        return tagging_report([r["tags"] for r in rows], predictions, list(head.labels))

    def predictions(self, rows, decoded, outputs):
        return [{"tokens": r["tokens"], "tags": tags} for r, tags in zip(rows, decoded)]


class QA(Task):
    """An answer span of a context, read in windows."""

    name, rows, suffix, metric = "qa", "qa", "ForQuestionAnswering", "f1"
    windows, default_length, bert_linear = True, 384, "qa_outputs"
    bert_head_dropout = 0.0  # transformers' BERT span head has no dropout

    def outputs(self, head) -> int:
        return 2

    def hf_labels(self, head) -> tuple:
        return ("LABEL_0", "LABEL_1")

    def loss(self, logits, labels):
        """The mean of the start and end cross-entropies; a position past the row is ignored, as
        transformers does."""
        logits = logits.float()
        T = logits.shape[1]
        start, end = labels.clamp(0, T).unbind(-1)
        return (F.cross_entropy(logits[..., 0], start, ignore_index=T)
                + F.cross_entropy(logits[..., 1], end, ignore_index=T)) / 2

    def features(self, tokenizer, rows, head, *, max_length, stride, label_all_subtokens, labelled, training):
        feats = qa_features(tokenizer, rows, max_length=max_length, stride=stride, training=training and labelled)
        if "start_positions" in feats:
            feats["labels"] = np.stack([feats.pop("start_positions"), feats.pop("end_positions")], axis=1)
        return feats

    def plain_rows(self, lines, tokenizer):
        raise TokkitError("question answering reads JSON lines with a question and a context, not plain text")

    def decode(self, data, outputs, head, *, n_best, max_answer_length):
        return qa_predictions(data.rows, data.features, outputs[..., 0], outputs[..., 1], n_best=n_best,
                              max_answer_length=max_answer_length)

    def report(self, rows, predictions, head):
        return squad_report({p["id"]: p["answer"] for p in predictions}, rows)


# In the order a folder's class is matched: a sequence classifier is read as classify first (from_folder).
TASKS: dict[str, Task] = {t.name: t for t in (Classify(), Regress(), Tag(), QA())}


def task(name: str) -> Task:
    """The task called `name`."""
    try:
        return TASKS[name]
    except (KeyError, TypeError):
        raise ValueError(f"task must be one of {list(TASKS)}, not {name!r}") from None


def task_of_architecture(architecture: str) -> Optional[str]:
    """The task of a transformers class name ("BertForTokenClassification" -> "tag"), or None."""
    for t in TASKS.values():
        if architecture in (t.architecture(arch) for arch in ARCH_PREFIX):
            return t.name
    return None


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


def regression_report(gold: np.ndarray, pred: np.ndarray) -> dict:
    """Mean squared error and Pearson's r.

    >>> regression_report(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))["pearson"] > 0.98
    True
    """
    gold, pred = np.asarray(gold, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    spread = gold.std() * pred.std()
    r = float(((gold - gold.mean()) * (pred - pred.mean())).mean() / spread) if spread > 0 else 0.0
    return {"mse": float(((gold - pred) ** 2).mean()), "pearson": r, "examples": int(gold.size)}
