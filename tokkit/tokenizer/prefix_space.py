"""Byte-level `add_prefix_space`: a space before every text part that does not start with one.

tokenizers' ByteLevel pre-tokenizer adds the space to each part of the text between added
tokens, so "hi<mask>there" is read as " hi", "<mask>", " there". `PrefixSpaceEncoder` wraps the
compiled Encoder: it hands it the spaced text and maps offsets back, so that an added space
counts as part of the character after it (as tokenizers aligns it).

>>> spaced("hi<mask>there <mask>", re.compile(re.escape("<mask>")))
(' hi<mask> there <mask>', [0, 9])
"""
from __future__ import annotations

import re

import numpy as np


def spaced(text: str, added: re.Pattern | None) -> tuple[str, list[int]]:
    """`text` with the spaces added, and where they are in the new text."""
    if added is None:
        if not text or text[0] == " ":
            return text, []
        return " " + text, [0]
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

    for m in added.finditer(text):
        part(at, m.start())
        parts.append(m.group())
        size += m.end() - m.start()
        at = m.end()
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

    def __init__(self, encoder, added_tokens: list[str]):
        self._inner = encoder
        # Longest first: at one place the longest added token wins, as in the compiled matcher.
        names = sorted(set(added_tokens), key=len, reverse=True)
        self._added = re.compile("|".join(map(re.escape, names))) if names else None

    def _texts(self, texts: list[str], a: int, b: int) -> list[str]:
        return [spaced(texts[k], self._added)[0] for k in range(a, b)]

    def encode(self, text: str) -> list:
        return self._inner.encode(spaced(text, self._added)[0])

    def encode_numpy(self, text: str):
        return self._inner.encode_numpy(spaced(text, self._added)[0])

    def encode_many(self, texts: list[str], a: int, b: int) -> list:
        return self._inner.encode_many(self._texts(texts, a, b), 0, b - a)

    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple:
        return self._inner.encode_flat(self._texts(texts, a, b), 0, b - a)

    def flat_job(self, texts: list[str], bounds) -> None:
        return None  # each slice's texts are spaced first: encode_flat

    def encode_full(self, text: str) -> tuple:
        new, where = spaced(text, self._added)
        ids, starts, ends, words = self._inner.encode_full(new)
        s, e = unshift(np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64), np.array(where))
        return ids, s.tolist(), e.tolist(), words

    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True) -> _Arrays:
        pairs = [spaced(texts[k], self._added) for k in range(a, b)]
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
