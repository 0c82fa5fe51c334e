"""The fast byte-level path for tokenizers that NFC-normalize (ModernBERT, OLMo, Qwen2).

Most text is already NFC, and NFC leaves such text alone. One compiled scan finds the texts NFC
might change (tokkit._native.encode.texts_nfc_may_change); every other text goes to the fast
encoder as it is. For ids, a text NFC might change is normalized in the stretches where it might
(encode.nfc_windows: NFC acts on each alone), by the general path's compiled normalizer, and the
fast encoder takes the result. Offsets need tokenizers' alignments, so a call asking for them
with such a text runs on the general path.

Added tokens are found in the text before it is normalized (a `normalized: true` one, in NFC form,
in the text between the others), so normalizing first is exact only where no stretch NFC changes
touches an added token, before or after: a text where one does takes the general path for its ids
too (`touches`). A single_word token reads the chars next to it, whose class NFC may change
("=\u0338", whose mark is a word char, becomes "≠", which is none): with such a token a stretch
next to an occurrence touches it too. lstrip and rstrip need no more: NFC keeps white space white
(U+2000 and U+2001 become U+2002 and U+2003) and makes none of other chars, so they take the same
run of it.

>>> from tokkit._native.encode import texts_nfc_may_change
>>> from tokkit._native.pipeline_tables import nfc_table
>>> texts_nfc_may_change(["café", "cafe\\u0301", "日本", "\\u0915\\u094d"], 0, 4, nfc_table())
[1]
"""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from tokkit._native.encode import nfc_windows, texts_nfc_may_change
from tokkit._native.pipeline_tables import nfc_table


def touches(tokens: list[str], text: str, a: int, b: int, near: int = 0) -> bool:
    """Whether an occurrence of one of `tokens` in `text` overlaps text[a:b], or (near=1) ends or
    starts right next to it.

    >>> touches(["<s>"], "x<s>\u0338", 4, 5), touches(["<s>"], "x<s> e\u0301", 5, 7)
    (False, False)
    >>> touches(["<s>"], "x<s>\u0338", 3, 5), touches(["<s>"], "x<s>e\u0301", 4, 6, near=1)
    (True, True)
    """
    return any(token and token in text[max(a - len(token) - near + 1, 0):b + len(token) + near - 1]
               for token in tokens)


class NfcEncoder:
    """The compiled Encoder's interface: `fast` for texts NFC leaves alone, `general()` for the rest."""

    def __init__(self, fast, general: Callable[[], object], added: Iterable[str], single_word: bool = False):
        """`added`: every form an added token is matched in (a normalized one's NFC form too);
        `single_word`: some token reads the chars next to it."""
        self._fast = fast
        self._make_general = general
        self._general = None
        self._table = nfc_table()
        self._added = [t for t in added if t]
        self._near = int(single_word)
        self._longest = max(map(len, self._added), default=1)

    @property
    def general(self):
        if self._general is None:
            self._general = self._make_general()
        return self._general

    def _changed(self, texts: list[str], a: int, b: int) -> list[int]:
        return texts_nfc_may_change(texts, a, b, self._table)

    def _nfc(self, text: str) -> str | None:
        """`text` after NFC, normalizing only the stretches NFC might change; None when such a
        stretch touches an added token, in the text or in what NFC makes of it."""
        edits = self._nfc_edits(text)
        if edits is None:
            return None
        parts, at = [], 0
        for (a, b), new in zip(*edits):
            parts += [text[at:a], new]
            at = b
        parts.append(text[at:])
        return "".join(parts)

    def _nfc_edits(self, text: str) -> tuple[list, list] | None:
        """(the stretches NFC might change, what NFC makes of each): _nfc()'s edits, not applied."""
        windows = nfc_windows(text, self._table)
        news = []
        reach = self._longest - 1 + self._near  # the chars around a stretch an added token could take in
        for a, b in windows:
            new = self.general.inspect(text[a:b], False)[0][0]
            around, lead = text[max(a - reach, 0):a] + new + text[b:b + reach], min(a, reach)
            if (touches(self._added, text, a, b, self._near)
                    or touches(self._added, around, lead, lead + len(new), self._near)):
                return None
            news.append(new)
        return windows, news

    def _ids_by(self, text: str, method: str):
        normalized = self._nfc(text)  # (no stretch to normalize: the text itself)
        if normalized is not None:
            return getattr(self._fast, method)(normalized)
        return getattr(self.general, method)(text)

    def encode(self, text: str) -> list:
        return self._ids_by(text, "encode")

    def encode_numpy(self, text: str):
        edits = self._nfc_edits(text)
        if edits is None:
            return self.general.encode_numpy(text)
        if not edits[0]:
            return self._fast.encode_numpy(text)
        # the text's own UTF-8 with the edits written in: no new str of the whole text (a lane around
        # the fast encoder, such as PrefixSpaceEncoder, takes the normalized str instead)
        spliced = getattr(self._fast, "encode_numpy_spliced", None)
        ids = spliced(text, *edits) if spliced is not None else None
        return ids if ids is not None else self._ids_by(text, "encode_numpy")

    def encode_full(self, text: str) -> tuple:
        return (self.general if self._changed([text], 0, 1) else self._fast).encode_full(text)

    def _normalized_slice(self, texts: list[str], a: int, b: int, changed: list[int]) -> list[str] | None:
        out = texts[a:b]
        for k in changed:
            out[k - a] = self._nfc(texts[k])
            if out[k - a] is None:
                return None
        return out

    def encode_many(self, texts: list[str], a: int, b: int) -> list:
        changed = self._changed(texts, a, b)
        if not changed:
            return self._fast.encode_many(texts, a, b)
        normalized = self._normalized_slice(texts, a, b, changed)
        if normalized is not None:
            return self._fast.encode_many(normalized, 0, b - a)
        rows = self._fast.encode_many(texts, a, b)
        for k in changed:
            rows[k - a] = self._ids_by(texts[k], "encode")
        return rows

    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple:
        changed = self._changed(texts, a, b)
        if not changed:
            return self._fast.encode_flat(texts, a, b)
        normalized = self._normalized_slice(texts, a, b, changed)
        if normalized is not None:
            return self._fast.encode_flat(normalized, 0, b - a)
        rows = self.encode_many(texts, a, b)
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=ptr[1:])
        return np.array([i for r in rows for i in r], dtype=np.uint32), ptr

    def flat_job(self, texts: list[str], bounds) -> None:
        return None  # each slice is checked for NFC first: encode_flat

    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True):
        # a slice with any text NFC may change runs whole on the general path: its rows carry
        # the word ids and offsets of tokenizers' alignments, and they cannot be spliced cheaply
        if self._changed(texts, a, b):
            return self.general.encode_rows(texts, a, b, offsets)
        return self._fast.encode_rows(texts, a, b, offsets)
