"""`--max-length auto`: the sequence length fitted to a task's texts.

The 99th percentile of the rows' token counts (the template's special tokens included), rounded
up to a multiple of 8 and capped by the model's positions: long enough for nearly every row, and
no longer, since a row's cost grows with its length and the rare longer ones lose only their tail.

>>> fit_length([5, 9, 12, 30], cap=512, quantile=50)
16
>>> fit_length([5, 900], cap=512)
512
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tokkit.inputs import encode
from tokkit.labelled.layouts import layout
from tokkit.tokenizer import Tokenizer

AUTO = "auto"
QUANTILE = 99
MULTIPLE = 8  # tensor cores and SIMD lanes like widths that are multiples of 8

__all__ = ["AUTO", "fit_length", "row_lengths"]


def fit_length(counts: Sequence[int], *, cap: int, quantile: float = QUANTILE) -> int:
    """The `quantile`th percentile of `counts`, rounded up to a multiple of 8, at most `cap`."""
    top = int(np.percentile(np.asarray(counts, dtype=np.int64), quantile, method="higher"))
    return int(min(cap, -(-max(top, 1) // MULTIPLE) * MULTIPLE))


def row_lengths(tokenizer: Tokenizer, task: str, rows: list[dict]) -> list[int]:
    """Each row's token count as the model would read it untruncated, the template's specials included."""
    out = encode(tokenizer, **layout(task).texts(rows), truncation=None, padding=None)
    return [len(ids) for ids in out["input_ids"]]
