"""Extractive question answering: (question, context) rows -> windows of model inputs, and the
start/end logits of those windows -> one answer span per question.

The question comes first and stays whole in every window; the context fills the rest of
`max_length`, in windows that each start `stride` tokens into the one before (tokkit.encode with
truncation="only_second" and return_overflowing), as transformers' run_qa example prepares
SQuAD. For training, a window's start/end positions are the answer's first and last tokens, or 0
(the [CLS] position) when the window does not hold the whole answer.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "sam", "ran"],
...                              merges=None, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
>>> row = {"id": "q1", "question": "who ran", "context": "sam ran",
...        "answers": {"text": ["sam"], "answer_start": [0]}}
>>> f = qa_features(tok, [row])
>>> f["input_ids"].tolist(), f["start_positions"].tolist(), f["end_positions"].tolist()
([[2, 4, 6, 3, 5, 6, 3]], [4], [4])
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tokkit.errors import TokkitError
from tokkit.inputs import encode
from tokkit.labelled.classify import MODEL_INPUTS
from tokkit.tokenizer import Tokenizer

CONTEXT = 1  # the context's sequence id: the second text of each pair


def qa_features(tokenizer: Tokenizer, rows: Sequence[dict], *, max_length: int = 384, stride: int = 128,
                training: bool = True) -> dict[str, np.ndarray]:
    """Windows of (question, context) pairs, padded to the longest window.

    Returns input_ids, token_type_ids, attention_mask (int32), example_index (int64: the row each
    window came from) and, with `training`, start_positions and end_positions (int64), else
    "offsets" (windows, T, 2) int32: each context token's character span in its context, -1 on
    every other position. Questions lose their leading spaces first (run_qa does so too: some
    SQuAD questions start with many, which would eat the context's room).
    """
    rows = list(rows)
    questions = [r["question"].lstrip() for r in rows]
    _check_room(tokenizer, rows, questions, max_length, stride)
    out = encode(tokenizer, questions, [r["context"] for r in rows], max_length=max_length,
                 truncation="only_second", stride=stride, return_overflowing=True, return_offsets=True,
                 padding="longest")
    features = {k: out[k] for k in MODEL_INPUTS}
    features["example_index"] = out["overflow_to_sample_mapping"].astype(np.int64)
    in_context = out["sequence_ids"] == CONTEXT
    offsets = np.where(in_context[..., None], out["offsets"], -1).astype(np.int32)
    if training:
        start, end = answer_positions(rows, features["example_index"], offsets)
        features["start_positions"], features["end_positions"] = start, end
    else:
        features["offsets"] = offsets
    return features


def _check_room(tokenizer: Tokenizer, rows: list[dict], questions: list[str], max_length: int, stride: int) -> None:
    """Refuse a question that leaves the context no more than `stride` tokens of a window when its
    context needs several windows (tokkit.encode would refuse it naming only its index)."""
    room = max_length - tokenizer.template.specials(True) if tokenizer.template is not None else max_length
    for row, ids in zip(rows, tokenizer.encode_batch(questions)):
        left = room - len(ids)
        if left > max(stride, 0) or len(ids) + len(tokenizer.encode(row["context"])) <= room:
            continue
        raise TokkitError(f"line {row.get('line')}: question {row.get('id')!r} has {len(ids)} tokens, which leaves "
                          f"{max(left, 0)} of max_length={max_length} for its context; its windows need more than "
                          f"stride={stride} (shorten the question, or raise max_length or lower stride)")


def answer_positions(rows: list[dict], example_index: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each window's first and last answer token (the row's first answer), or 0 and 0 when the
    window does not hold the whole answer or the row has none.

    `offsets`: (windows, T, 2) with -1 outside the context. Within a context the spans never go
    back, so the start is the last context token starting at or before the answer's first
    character, and the end the first one ending at or after its last.
    """
    n = example_index.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    start_char = np.full(n, -1, dtype=np.int64)
    end_char = np.full(n, -1, dtype=np.int64)
    for w, i in enumerate(example_index):
        answers = rows[i]["answers"]
        if answers["answer_start"]:
            start_char[w] = answers["answer_start"][0]
            end_char[w] = start_char[w] + len(answers["text"][0])
    starts, ends = offsets[..., 0], offsets[..., 1]
    context = starts >= 0
    positions = np.arange(offsets.shape[1])
    has_context = context.any(axis=1)
    first_ctx = np.where(has_context, context.argmax(axis=1), 0)
    last_ctx = np.where(context, positions, 0).max(axis=1)
    window = np.arange(n)
    inside = (start_char >= 0) & has_context & (starts[window, first_ctx] <= start_char) & \
        (ends[window, last_ctx] >= end_char)
    start_tok = np.where(context & (starts <= start_char[:, None]), positions, -1).max(axis=1, initial=-1)
    end_tok = np.where(context & (ends >= end_char[:, None]), positions, offsets.shape[1]).min(
        axis=1, initial=offsets.shape[1])
    return np.where(inside, start_tok, 0).astype(np.int64), np.where(inside, end_tok, 0).astype(np.int64)


def qa_predictions(rows: Sequence[dict], features: dict, start_logits, end_logits, *, n_best: int = 20,
                   max_answer_length: int = 30, allow_empty: bool = False) -> list[dict]:
    """The best answer span of each row over all its windows, as run_qa's postprocessing picks it.

    In each window the `n_best` highest start and end logits are paired; a pair counts when both
    tokens are in the context, the end is not before the start and the span has at most
    `max_answer_length` tokens; its score is start logit + end logit. Returns per row
    `{"id", "answer", "start", "end", "score"}` (character offsets into the context). A row with no
    valid span gets answer "", start = end = -1 and score None. With `allow_empty`, the empty answer
    (score: the lowest [CLS] start + end logit over the row's windows) wins when it outscores the
    best span, as SQuAD 2.0 models answer "no answer".
    """
    rows = list(rows)
    if n_best < 1 or max_answer_length < 1:
        raise TokkitError(f"n_best ({n_best}) and max_answer_length ({max_answer_length}) must be at least 1")
    if not rows:
        return []
    offsets = np.asarray(features["offsets"])
    example_index = np.asarray(features["example_index"])
    start_logits, end_logits = np.asarray(start_logits, dtype=np.float64), np.asarray(end_logits, dtype=np.float64)
    if start_logits.shape != offsets.shape[:2] or end_logits.shape != offsets.shape[:2]:
        raise TokkitError(f"start_logits {start_logits.shape} and end_logits {end_logits.shape} must have the "
                          f"windows' shape {offsets.shape[:2]}")
    score, start_tok, end_tok = best_spans(offsets, start_logits, end_logits, n_best, max_answer_length)
    null = start_logits[:, 0] + end_logits[:, 0]
    order = np.argsort(example_index, kind="stable")  # each row's windows, in their order
    bounds = np.searchsorted(example_index[order], np.arange(len(rows) + 1))
    return [_answer(rows[i], order[bounds[i]:bounds[i + 1]], score, start_tok, end_tok, offsets, null, allow_empty)
            for i in range(len(rows))]


def best_spans(offsets: np.ndarray, start_logits: np.ndarray, end_logits: np.ndarray, n_best: int,
               max_answer_length: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per window: the best valid span's score (-inf when none) and its start and end tokens.

    Ties go to the better-ranked start, then the better-ranked end (run_qa keeps its candidates in
    that order and sorts them stably).
    """
    k = min(n_best, offsets.shape[1])
    top_start = np.argsort(-start_logits, axis=1, kind="stable")[:, :k]  # (W, k)
    top_end = np.argsort(-end_logits, axis=1, kind="stable")[:, :k]
    in_context = offsets[..., 0] >= 0
    s, e = top_start[:, :, None], top_end[:, None, :]  # (W, k, 1), (W, 1, k)
    windows = np.arange(offsets.shape[0])[:, None, None]
    valid = in_context[windows, s] & in_context[windows, e] & (e >= s) & (e - s + 1 <= max_answer_length)
    scores = np.take_along_axis(start_logits, top_start, 1)[:, :, None] + \
        np.take_along_axis(end_logits, top_end, 1)[:, None, :]
    scores = np.where(valid, scores, -np.inf).reshape(offsets.shape[0], k * k)
    best = scores.argmax(axis=1)
    rows = np.arange(offsets.shape[0])
    return scores[rows, best], top_start[rows, best // k], top_end[rows, best % k]


def _answer(row: dict, windows: np.ndarray, score, start_tok, end_tok, offsets, null, allow_empty: bool) -> dict:
    empty = {"id": row["id"], "answer": "", "start": -1, "end": -1, "score": None}
    if windows.size == 0:
        raise TokkitError(f"row {row['id']!r} has no window in the features")
    w = windows[np.argmax(score[windows])]  # the first of equal bests
    null_score = float(null[windows].min())
    if allow_empty and (not np.isfinite(score[w]) or null_score > score[w]):
        return {**empty, "score": null_score}
    if not np.isfinite(score[w]):
        return empty
    start, end = int(offsets[w, start_tok[w], 0]), int(offsets[w, end_tok[w], 1])
    return {"id": row["id"], "answer": row["context"][start:end], "start": start, "end": end,
            "score": float(score[w])}
