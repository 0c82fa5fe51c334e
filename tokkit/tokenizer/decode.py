"""Decoding ids back to text: the ids checked and turned into tokens, then the tokenizer's decoder
(tokkit.tokenizer.decoders) turns the tokens into text, as tokenizers does.

An id the vocabulary leaves unused decodes to nothing (tokenizers skips it too); an id outside the
vocabulary is an error, and a value that is no integer a TypeError.

>>> picked_ids([3, 1, 2], size=4, skip={1})
[3, 2]
"""
from __future__ import annotations

import operator
from typing import Iterable

import numpy as np

from tokkit.errors import TokkitError
from tokkit.tokenizer.decoders import decode_tokens


def decode(decoder, vocab: list[str | None], ids: Iterable[int], skip: set[int] | tuple = ()) -> str:
    """The text of `ids` under `decoder` (None: the tokens joined by spaces), leaving out the ids in `skip`.

    >>> from tokkit.tokenizer.decoders import WordPiece
    >>> decode(WordPiece(), ["[CLS]", "hel", "##lo", None, "!"], [0, 1, 2, 3, 4], skip={0})
    'hello!'
    """
    tokens = [vocab[i] for i in picked_ids(ids, len(vocab), skip)]
    return decode_tokens(decoder, [t for t in tokens if t is not None])


def check_ids(ids) -> Iterable:
    """`ids` as an iterable of integers: a str, bytes or a float array is a TypeError (never parsed)."""
    if isinstance(ids, (str, bytes, bytearray)):
        raise TypeError(f"ids must be a sequence of ints, not {type(ids).__name__}")
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            raise TypeError(f"ids must be a 1-D array of integers, got a {ids.ndim}-D {ids.dtype} array")
        return ids.tolist()
    return ids


def _as_id(value, pos: int) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"ids[{pos}] is a bool, not an int")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"ids[{pos}] must be an int, not {type(value).__name__} ({value!r})") from None


def picked_ids(ids: Iterable[int], size: int, skip: set[int] | tuple = ()) -> list[int]:
    """`ids` checked against a vocabulary of `size` ids, without those in `skip`."""
    picked = []
    for pos, i in enumerate(check_ids(ids)):
        i = i if type(i) is int else _as_id(i, pos)
        if not 0 <= i < size:
            raise TokkitError(f"id {i} at position {pos} is outside the vocabulary (size {size})")
        if i not in skip:
            picked.append(i)
    return picked
