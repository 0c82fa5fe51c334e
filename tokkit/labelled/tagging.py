"""Word tagging: words -> sub-tokens with aligned labels, and token predictions -> one label per word.

Each word is encoded on its own (`tokkit.encode(..., is_split_into_words=True)`), so word_ids tell
which word every sub-token belongs to. A word's label sits on its first sub-token and -100 (the
loss's ignore index) everywhere else, or on all its sub-tokens with `label_all_subtokens`.
Predictions are read back from first sub-tokens, as the labels were placed.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "jur", "##y"],
...                              merges=None, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
>>> out = tagging_features(tok, [{"tokens": ["The", "jury"], "tags": ["at", "nn"]}], {"at": 0, "nn": 1})
>>> out["labels"].tolist(), out["word_ids"].tolist(), out["n_words"].tolist()
([[-100, 0, 1, -100, -100]], [[-1, 0, 1, 1, -1]], [2])
>>> word_predictions(out["word_ids"], [[7, 0, 1, 0, 7]])
[[0, 1]]
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from tokkit.errors import TokkitError
from tokkit.inputs import encode
from tokkit.labelled.classify import MODEL_INPUTS
from tokkit.labelled.labels import check_labels
from tokkit.tokenizer import Tokenizer

IGNORE_INDEX = -100  # what torch's cross-entropy skips


def tagging_features(tokenizer: Tokenizer, rows: Sequence[dict], label2id: Mapping[str, int] | None = None, *,
                     max_length: int = 128, label_all_subtokens: bool = False) -> dict[str, np.ndarray]:
    """Model inputs for rows of words (`{"tokens": [...], "tags": [...]}`), padded to the longest.

    Returns input_ids, token_type_ids, attention_mask (int32), word_ids (int32, -1 on specials and
    padding), n_words (int64: the words of each row that kept a first sub-token; words cut off by
    `max_length` get no label and are not counted) and, with `label2id`, "labels" (int64).
    """
    rows = list(rows)
    out = encode(tokenizer, [r["tokens"] for r in rows], is_split_into_words=True, max_length=max_length,
                 truncation="longest_first", padding="longest")
    word_ids = out["word_ids"]
    first = first_subtokens(word_ids)
    features = {k: out[k] for k in MODEL_INPUTS}
    features["word_ids"] = word_ids
    features["n_words"] = first.sum(axis=1, dtype=np.int64)
    if label2id is not None:
        where = (word_ids >= 0) if label_all_subtokens else first
        features["labels"] = _aligned_labels(rows, label2id, word_ids, where)
    return features


def first_subtokens(word_ids: np.ndarray) -> np.ndarray:
    """Where each word's first sub-token is: a word id that differs from the one before it.

    >>> first_subtokens(np.array([[-1, 0, 0, 1, -1]])).tolist()
    [[False, True, False, True, False]]
    """
    word_ids = np.asarray(word_ids)
    before = np.full_like(word_ids, -1)
    before[:, 1:] = word_ids[:, :-1]
    return (word_ids >= 0) & (word_ids != before)


def _aligned_labels(rows: list[dict], label2id: Mapping[str, int], word_ids: np.ndarray,
                    where: np.ndarray) -> np.ndarray:
    """Each chosen position gets its word's label id; every other position IGNORE_INDEX."""
    for row in rows:
        if row.get("tags") is None:
            raise TokkitError(f"line {row.get('line')}: this row has no tags")
    check_labels(rows, "tag", label2id)
    tag_ids = np.array([label2id[t] for r in rows for t in r["tags"]], dtype=np.int64)
    row_start = np.cumsum([0] + [len(r["tags"]) for r in rows[:-1]])
    labels = np.full(word_ids.shape, IGNORE_INDEX, dtype=np.int64)
    r, c = np.nonzero(where)
    labels[r, c] = tag_ids[row_start[r] + word_ids[r, c]]
    return labels


def word_predictions(word_ids, token_predictions, lengths: Sequence[int] | None = None) -> list[list[int]]:
    """Per row, the predicted label id of each word, read from its first sub-token.

    `token_predictions`: (rows, T) label ids, or (rows, T, labels) scores (their argmax is taken).
    A row's list covers its words up to the last one with a sub-token, or `lengths[r]` words when
    given (the words of the row, e.g. len(row["tokens"])); a word with no sub-token (cut off by
    max_length, or one the tokenizer makes nothing of) gets -1.
    """
    word_ids = np.asarray(word_ids)
    predictions = np.asarray(token_predictions)
    if predictions.ndim == 3:
        predictions = predictions.argmax(axis=-1)
    if predictions.shape != word_ids.shape:
        raise TokkitError(f"token_predictions has shape {predictions.shape} but word_ids has shape {word_ids.shape}")
    first = first_subtokens(word_ids)
    out = []
    for r in range(word_ids.shape[0]):
        words, predicted = word_ids[r][first[r]], predictions[r][first[r]]
        size = lengths[r] if lengths is not None else int(words.max(initial=-1)) + 1
        row = np.full(size, -1, dtype=np.int64)
        keep = words < size
        row[words[keep]] = predicted[keep]
        out.append(row.tolist())
    return out


def text_words(text: str, tokenizer: Tokenizer | None = None) -> list[tuple[str, int, int]]:
    """The words of a raw text, as (word, start, end) character spans, for tagging text that was
    never split into words.

    Without a tokenizer the words are the runs of non-space characters (str.split). With one, they
    are the pieces its pre-tokenizer makes (BERT's splits punctuation off: "dog." -> "dog", "."),
    spaces trimmed. Tag the words as a row `{"tokens": [w for w, _, _ in words], "tags": None}`.

    >>> text_words("The  jury said.")
    [('The', 0, 3), ('jury', 5, 9), ('said.', 10, 15)]
    """
    if tokenizer is None:
        return _whitespace_words(text)
    encoding = tokenizer.encode_with_offsets(text)
    spans: dict[int, list[int]] = {}
    for word, (start, end) in zip(encoding.word_ids, encoding.offsets):
        span = spans.setdefault(word, [start, end])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    words = []
    for start, end in sorted(spans.values()):
        piece = text[start:end]
        start += len(piece) - len(piece.lstrip())
        end -= len(piece) - len(piece.rstrip())
        if end > start:
            words.append((text[start:end], start, end))
    return words


def _whitespace_words(text: str) -> list[tuple[str, int, int]]:
    words, at = [], 0
    for word in text.split():
        start = text.index(word, at)
        at = start + len(word)
        words.append((word, start, at))
    return words
