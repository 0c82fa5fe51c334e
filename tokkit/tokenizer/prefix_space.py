"""Byte-level `add_prefix_space`: a space before every text part that does not start with one.

tokenizers' ByteLevel pre-tokenizer adds the space to each part of the text between added
tokens, so "hi<mask>there" is read as " hi", "<mask>", " there". `PrefixSpaceEncoder` wraps the
compiled Encoder: it finds the parts with the Encoder's own added-token matcher (`added_spans`,
flags applied), hands it the spaced text and maps offsets back, so that an added space counts as
part of the character after it (as tokenizers aligns it). The planner keeps this lane to tokens
the added spaces cannot change the matches of (plan.py's `_spaced_apart`).

>>> spaced("hi<mask>there <mask>", [(2, 8), (14, 20)])
(' hi<mask> there <mask>', [0, 9])
"""
from __future__ import annotations

from typing import Iterable

import numpy as np


def spaced(text: str, spans: Iterable[tuple[int, int]]) -> tuple[str, list[int]]:
    """`text` with the spaces added before the parts between the added tokens at `spans` (sorted
    (start, end) code-point spans), and where the spaces are in the new text."""
    parts: list[str] = []
    where: list[int] = []
    at = size = 0

    def part(a: int, b: int) -> None:
        nonlocal size
        if b > a and text[a] != " ":
            where.append(size)
            parts.append(" ")
            size += 1
        parts.append(text[a:b])
        size += b - a

    for a, b in spans:
        part(at, a)
        parts.append(text[a:b])
        size += b - a
        at = b
    part(at, len(text))
    return "".join(parts), where


def unshift(starts: np.ndarray, ends: np.ndarray, spaces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Offsets in the spaced text -> offsets in the text; `spaces`: the added spaces' sorted positions.

    A token's start counts the spaces before it; its end is one past the character holding its
    last one (an added space is held by the character after it).

    >>> unshift(np.array([0, 3]), np.array([3, 4]), np.array([0]))
    (array([0, 2]), array([2, 3]))
    """
    last = ends - 1
    return starts - np.searchsorted(spaces, starts), last - np.searchsorted(spaces, last) + 1


class PrefixSpaceEncoder:
    """The compiled Encoder's interface, for a tokenizer whose pre-tokenizer adds prefix spaces."""

    def __init__(self, encoder):
        self._inner = encoder

    def _spaced(self, text: str) -> tuple[str, list[int]]:
        return spaced(text, self._inner.added_spans(text))

    def _texts(self, texts: list[str], a: int, b: int) -> list[str]:
        return [self._spaced(texts[k])[0] for k in range(a, b)]

    def encode(self, text: str) -> list:
        return self._inner.encode(self._spaced(text)[0])

    def encode_numpy(self, text: str):
        return self._inner.encode_numpy(self._spaced(text)[0])

    def encode_many(self, texts: list[str], a: int, b: int) -> list:
        return self._inner.encode_many(self._texts(texts, a, b), 0, b - a)

    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple:
        return self._inner.encode_flat(self._texts(texts, a, b), 0, b - a)

    def flat_job(self, texts: list[str], bounds) -> None:
        return None  # each slice's texts are spaced first: encode_flat

    def encode_full(self, text: str) -> tuple:
        new, where = self._spaced(text)
        ids, starts, ends, words = self._inner.encode_full(new)
        s, e = unshift(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), np.array(where))
        return ids, s.tolist(), e.tolist(), words

    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True) -> _Arrays:
        pairs = [self._spaced(texts[k]) for k in range(a, b)]
        arrays = self._inner.encode_rows([p[0] for p in pairs], 0, b - a, offsets).arrays()
        if offsets and arrays["ids"].size:
            # One searchsorted over the whole slice: each row's spaces and offsets move to the row's
            # place in the joined texts, and the spaces of earlier rows are taken off again.
            base = np.cumsum([0] + [len(p[0]) for p in pairs[:-1]])
            counts = np.array([len(p[1]) for p in pairs])
            spaces = np.concatenate([np.array(p[1], dtype=np.int64) for p in pairs]) + np.repeat(base, counts)
            row = np.repeat(np.arange(len(pairs)), np.diff(arrays["ptr"]))
            shift = base[row]
            before = (np.cumsum(counts) - counts)[row]
            s, e = unshift(arrays["starts"] + shift, arrays["ends"] + shift, spaces)
            arrays["starts"] = (s - shift + before).astype(arrays["starts"].dtype)
            arrays["ends"] = (e - shift + before).astype(arrays["ends"].dtype)
        return _Arrays(arrays)


class _Arrays:
    """What Encoder.encode_rows returns, already turned into arrays."""

    def __init__(self, arrays: dict):
        self._arrays = arrays

    def arrays(self) -> dict:
        return self._arrays
