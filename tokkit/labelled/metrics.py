"""Scores: accuracy and per-label precision/recall/F1 for classes and word tags, SQuAD's exact match
and F1 for answers, and a plain-text table of any of them. Every figure is a fraction in [0, 1].

>>> r = classification_report(["a", "a", "b"], ["a", "b", "b"], ["a", "b"])
>>> r["accuracy"], r["per_label"]["a"]
(0.6666666666666666, {'precision': 1.0, 'recall': 0.5, 'f1': 0.6666666666666666, 'support': 2})
>>> squad_report({"q1": "the Broncos"}, [{"id": "q1", "answers": {"text": ["Denver Broncos"], "answer_start": [0]}}])
{'exact_match': 0.0, 'f1': 0.6666666666666666}
"""
from __future__ import annotations

import re
import string
from collections import Counter
from typing import Iterable, Mapping, Sequence

from tokkit.errors import TokkitError


def classification_report(gold: Sequence[str], pred: Sequence[str | None], labels: Sequence[str]) -> dict:
    """Accuracy, macro F1 and per-label precision, recall, F1 and support of predicted labels.

    A prediction of None (no prediction) is wrong and counts against its gold label's recall only.
    `per_label` lists `labels` in their order, then any other label seen, but only labels that are
    in `gold` or `pred`; macro F1 is the mean F1 over those labels.
    """
    gold, pred = list(gold), list(pred)
    if len(gold) != len(pred):
        raise TokkitError(f"{len(gold)} gold labels but {len(pred)} predictions")
    if not gold:
        raise TokkitError("nothing to score: no gold labels")
    per_label = _per_label(gold, pred, labels)
    correct = sum(g == p for g, p in zip(gold, pred))
    return {"accuracy": correct / len(gold), "macro_f1": _mean(v["f1"] for v in per_label.values()),
            "per_label": per_label}


def _per_label(gold: list, pred: list, labels: Sequence[str]) -> dict:
    support, predicted = Counter(gold), Counter(p for p in pred if p is not None)
    hits = Counter(g for g, p in zip(gold, pred) if g == p)
    seen = list(dict.fromkeys(list(labels) + sorted(set(support) | set(predicted))))
    out = {}
    for label in seen:
        if not support[label] and not predicted[label]:
            continue
        precision = hits[label] / predicted[label] if predicted[label] else 0.0
        recall = hits[label] / support[label] if support[label] else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out[label] = {"precision": precision, "recall": recall, "f1": f1, "support": support[label]}
    return out


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def tagging_report(gold_words: Sequence[Sequence[str]], pred_words: Sequence[Sequence[str | None]],
                   labels: Sequence[str]) -> dict:
    """`classification_report` over words: token_accuracy (words tagged right / all words), macro_f1,
    per_label, "words" (all gold words) and "unpredicted_words" (words with no prediction: a row's
    prediction list shorter than its words, e.g. cut off by max_length, or a None; they count as wrong).
    """
    if len(gold_words) != len(pred_words):
        raise TokkitError(f"{len(gold_words)} gold rows but {len(pred_words)} predicted rows")
    gold, pred = [], []
    for i, (g, p) in enumerate(zip(gold_words, pred_words)):
        if len(p) > len(g):
            raise TokkitError(f"row {i}: {len(p)} predictions for {len(g)} words")
        gold.extend(g)
        pred.extend(list(p) + [None] * (len(g) - len(p)))
    report = classification_report(gold, pred, labels)
    return {"token_accuracy": report["accuracy"], "macro_f1": report["macro_f1"], "per_label": report["per_label"],
            "words": len(gold), "unpredicted_words": sum(p is None for p in pred)}


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lowercase, no punctuation, no articles, single spaces.

    >>> normalize_answer("The  Denver-Broncos!")
    'denverbroncos'
    """
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


def answer_f1(prediction: str, gold: str) -> float:
    """SQuAD's F1 between two answers: the harmonic mean of token precision and recall after
    normalisation (1.0 when both are empty, 0.0 when only one is)."""
    pred_tokens, gold_tokens = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if not common:
        return 0.0
    precision, recall = common / len(pred_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_report(predictions, rows: Sequence[dict]) -> dict:
    """SQuAD's exact match and F1 (each the best over a question's gold answers), averaged over `rows`.

    `predictions`: qa_predictions' list, or a mapping id -> answer text. A question with no gold
    answer (SQuAD 2.0) scores 1 only for an empty prediction; a question with no prediction scores 0.
    """
    answers = predictions if isinstance(predictions, Mapping) else {p["id"]: p["answer"] for p in predictions}
    if not rows:
        raise TokkitError("nothing to score: no rows")
    exact = f1 = 0.0
    for row in rows:
        golds = row["answers"]["text"] or [""]
        if row["id"] not in answers:
            continue
        prediction = answers[row["id"]]
        exact += max(float(normalize_answer(prediction) == normalize_answer(g)) for g in golds)
        f1 += max(answer_f1(prediction, g) for g in golds)
    return {"exact_match": exact / len(rows), "f1": f1 / len(rows)}


def format_report(report: dict) -> str:
    """A report as aligned text: its figures, then a table of per_label when it has one.

    >>> print(format_report(classification_report(["a", "b"], ["a", "a"], ["a", "b"])))
    accuracy  0.5000
    macro_f1  0.3333
    label  precision  recall  f1      support
    a      0.5000     1.0000  0.6667  1
    b      0.0000     0.0000  0.0000  1
    """
    scalars = [(k, v) for k, v in report.items() if not isinstance(v, dict)]
    width = max((len(k) for k, _ in scalars), default=0)
    lines = [f"{k:<{width}}  {_cell(v)}" for k, v in scalars]
    per_label = report.get("per_label")
    if per_label:
        table = [["label", "precision", "recall", "f1", "support"]]
        table += [[str(label)] + [_cell(v[k]) for k in ("precision", "recall", "f1", "support")]
                  for label, v in per_label.items()]
        widths = [max(len(row[c]) for row in table) for c in range(5)]
        lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines)


def _cell(value) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)
