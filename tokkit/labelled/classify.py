"""Sentence (pair) classification rows -> model inputs and class ids.

>>> from tokkit.tokenizer import Tokenizer
>>> tok = Tokenizer.from_trained(kind="wordpiece", vocab=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad"],
...                              merges=None, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
>>> rows = [{"text": "good", "text_pair": None, "label": "fresh"},
...         {"text": "bad bad", "text_pair": None, "label": "rotten"}]
>>> out = classification_features(tok, rows, {"fresh": 0, "rotten": 1})
>>> out["input_ids"].tolist(), out["labels"].tolist()
([[2, 4, 3, 0], [2, 5, 5, 3]], [0, 1])
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from tokkit.errors import TokkitError
from tokkit.inputs import encode
from tokkit.labelled.labels import check_labels
from tokkit.labelled.rows import text_pairs
from tokkit.tokenizer import Tokenizer

MODEL_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


def classification_features(tokenizer: Tokenizer, rows: Sequence[dict], label2id: Mapping[str, int] | None = None,
                            *, max_length: int = 128) -> dict[str, np.ndarray]:
    """`[CLS] text [SEP]` (or `[CLS] text [SEP] text_pair [SEP]`) rows, truncated longest-first to
    `max_length` and padded to the longest: input_ids, token_type_ids, attention_mask (int32, 2-D),
    and with `label2id` "labels" (int64 class ids; a row without a label, or with a label outside
    `label2id`, is a TokkitError naming its line)."""
    rows = list(rows)
    pairs = text_pairs(rows)
    out = encode(tokenizer, [r["text"] for r in rows], pairs, max_length=max_length, truncation="longest_first",
                 padding="longest")
    features = {k: out[k] for k in MODEL_INPUTS}
    if label2id is not None:
        features["labels"] = np.array([_label_id(r, label2id) for r in rows], dtype=np.int64)
    return features


def _label_id(row: dict, label2id: Mapping[str, int]) -> int:
    if row["label"] is None:
        raise TokkitError(f"line {row.get('line')}: this row has no label")
    check_labels([row], "classify", label2id)
    return label2id[row["label"]]
