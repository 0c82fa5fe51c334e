"""The fast byte-level path for tokenizers that NFC-normalize (ModernBERT, OLMo, Qwen2).

Most text is already NFC, and NFC leaves such text alone. One compiled scan finds the texts that
NFC might change (tokkit._native.encode.texts_nfc_may_change): they go to the general
path, which normalizes with tokenizers' alignments; every other text goes to the fast encoder as is.

>>> from tokkit._native.encode import texts_nfc_may_change
>>> from tokkit._native.pipeline_tables import nfc_table
>>> texts_nfc_may_change(["café", "cafe\\u0301", "日本", "\\u0915\\u094d"], 0, 4, nfc_table())
[1]
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from tokkit._native.encode import texts_nfc_may_change
from tokkit._native.pipeline_tables import nfc_table


class NfcEncoder:
    """The compiled Encoder's interface: `fast` for texts NFC leaves alone, `general()` for the rest."""

    def __init__(self, fast, general: Callable[[], object]):
        self._fast = fast
        self._make_general = general
        self._general = None
        self._unstable = nfc_table()

    @property
    def general(self):
        if self._general is None:
            self._general = self._make_general()
        return self._general

    def _pick(self, text: str):
        return self.general if texts_nfc_may_change([text], 0, 1, self._unstable) else self._fast

    def encode(self, text: str) -> list:
        return self._pick(text).encode(text)

    def encode_numpy(self, text: str):
        return self._pick(text).encode_numpy(text)

    def encode_full(self, text: str) -> tuple:
        return self._pick(text).encode_full(text)

    def encode_many(self, texts: list[str], a: int, b: int) -> list:
        changed = texts_nfc_may_change(texts, a, b, self._unstable)
        rows = self._fast.encode_many(texts, a, b)
        for k in changed:
            rows[k - a] = self.general.encode(texts[k])
        return rows

    def encode_flat(self, texts: list[str], a: int, b: int) -> tuple:
        if not texts_nfc_may_change(texts, a, b, self._unstable):
            return self._fast.encode_flat(texts, a, b)
        rows = self.encode_many(texts, a, b)
        ptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in rows], out=ptr[1:])
        return np.array([i for r in rows for i in r], dtype=np.uint32), ptr

    def encode_rows(self, texts: list[str], a: int, b: int, offsets: bool = True):
        # a slice with any text NFC may change runs whole on the general path: its rows carry
        # the word ids and offsets of tokenizers' alignments, and they cannot be spliced cheaply
        if texts_nfc_may_change(texts, a, b, self._unstable):
            return self.general.encode_rows(texts, a, b, offsets)
        return self._fast.encode_rows(texts, a, b, offsets)
