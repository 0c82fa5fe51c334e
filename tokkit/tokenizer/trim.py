"""tokenizers' `trim_offsets`: a byte-level token's offsets leave out the spaces it carries.

A token with k leading spaces (`Ġ`, or any whitespace) starts k characters later, one with k
trailing spaces ends k earlier, never past its other end. With `add_prefix_space`, the first
token of a text keeps its one leading space (the one the pre-tokenizer added).

>>> lead, trail = space_counts(["Ġhi", "there", "Ġ"])
>>> trim(np.array([0, 1, 2]), np.array([0, 3, 8]), np.array([3, 8, 9]), np.array([True, False, False]),
...      lead, trail, add_prefix_space=False)
(array([1, 3, 9]), array([3, 8, 9]))
"""
from __future__ import annotations

import numpy as np

SPACE_SYMBOL = "\u0120"  # GPT-2's symbol for the byte 0x20
_NOT_WHITE_SPACE = "\x1c\x1d\x1e\x1f"  # str.isspace() says yes, Unicode's White_Space (Rust's) says no


def _is_space(ch: str) -> bool:
    return ch == SPACE_SYMBOL or (ch.isspace() and ch not in _NOT_WHITE_SPACE)


def space_counts(vocab: list[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """Leading and trailing space characters of every token, by id (none at an unused id)."""
    lead = np.zeros(len(vocab), dtype=np.int64)
    trail = np.zeros(len(vocab), dtype=np.int64)
    for i, tok in enumerate(vocab):
        if tok and (_is_space(tok[:1]) or _is_space(tok[-1:])):
            lead[i] = _run(tok)
            trail[i] = _run(tok[::-1])
    return lead, trail


def _run(tok: str) -> int:
    n = 0
    while n < len(tok) and _is_space(tok[n]):
        n += 1
    return n


def trim(ids: np.ndarray, starts: np.ndarray, ends: np.ndarray, first: np.ndarray, lead: np.ndarray,
         trail: np.ndarray, *, add_prefix_space: bool) -> tuple[np.ndarray, np.ndarray]:
    """Trimmed (starts, ends); `first` marks the tokens tokenizers treats as a text's first.

    tokenizers counts a token as first when it is first in its sequence or starts at offset 0.
    """
    lead_n = lead[ids]
    trail_n = trail[ids]
    if add_prefix_space:
        lead_n = np.where((first | (starts == 0)) & (lead_n == 1), 0, lead_n)
    new_starts = np.where(lead_n > 0, np.minimum(starts + lead_n, ends), starts)
    new_ends = np.where((trail_n > 0) & (ends >= trail_n), np.maximum(ends - trail_n, new_starts), ends)
    return new_starts, new_ends
