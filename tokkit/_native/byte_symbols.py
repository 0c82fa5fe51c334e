"""The GPT-2 byte <-> unicode table: every byte gets a printable character for vocab files.

Printable Latin-1 bytes map to themselves; the other 68 bytes map to U+0100 upwards, in byte order.

>>> bytes_to_unicode()[ord("a")], bytes_to_unicode()[ord(" ")]
('a', 'Ġ')
>>> decode_symbols("Ġhi")
b' hi'
"""
from __future__ import annotations

import itertools
import operator
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def bytes_to_unicode() -> tuple[str, ...]:
    """The symbol of each byte value, indexed by the byte (a tuple of 256 one-character strings)."""
    keep = set(range(ord("!"), ord("~") + 1)) | set(range(0xA1, 0xAC + 1)) | set(range(0xAE, 0xFF + 1))
    table = []
    shifted = 0
    for b in range(256):
        if b in keep:
            table.append(chr(b))
        else:
            # The bytes that would be invisible or whitespace are moved past Latin-1, in order.
            table.append(chr(256 + shifted))
            shifted += 1
    return tuple(table)


@lru_cache(maxsize=None)
def unicode_to_bytes() -> dict[str, int]:
    """The inverse table: symbol -> byte value.

    >>> unicode_to_bytes()["Ġ"]
    32
    """
    return {c: b for b, c in enumerate(bytes_to_unicode())}


def encode_symbols(data: bytes) -> str:
    """Spell raw bytes with the GPT-2 symbols.

    >>> encode_symbols(" é".encode())
    'ĠÃ©'
    """
    table = bytes_to_unicode()
    return "".join(table[b] for b in data)


def decode_symbols(token: str) -> bytes | None:
    """The bytes a GPT-2 symbol string stands for, or None when a character is not a byte symbol.

    >>> decode_symbols("[CLS]"), decode_symbols("中") is None
    (b'[CLS]', True)
    """
    inverse = unicode_to_bytes()
    try:
        return bytes(inverse[c] for c in token)
    except KeyError:
        return None


def decode_symbols_all(tokens) -> list[bytes | None]:
    """decode_symbols() of each token (None stays None), from symbol_bytes' arrays.

    >>> decode_symbols_all(["Ġa", None, "中", ""])
    [b' a', None, None, b'']
    """
    runs = code_point_runs(tokens)
    blob, ok = symbol_bytes(runs)
    bounds = runs.bounds.tolist()
    return [blob[bounds[k]:bounds[k + 1]] if good else None for k, good in enumerate(ok.tolist())]


class CodePointRuns:
    """A vocabulary's tokens as one array of code points: `cps` (uint32), `bounds` (int64, where each
    token starts, one past the last at the end) and `present` (bool, False at a None). Built with C
    loops over all tokens at once (a 128k vocabulary token by token costs a good part of a load).

    >>> r = code_point_runs(["ab", None, "é"])
    >>> r.cps.tolist(), r.bounds.tolist(), r.present.tolist(), r.max_chars(), r.max_utf8_bytes()
    ([97, 98, 233], [0, 2, 2, 3], [True, False, True], 2, 2)
    """

    def __init__(self, cps: np.ndarray, bounds: np.ndarray, present: np.ndarray):
        self.cps, self.bounds, self.present = cps, bounds, present

    def max_chars(self) -> int:
        """Characters of the longest token (0 for none)."""
        return int(np.diff(self.bounds).max(initial=0))

    def max_utf8_bytes(self) -> int:
        """UTF-8 bytes of the longest token (a lone surrogate counts 3, as surrogatepass writes it)."""
        widths = 1 + (self.cps >= 0x80).astype(np.int64) + (self.cps >= 0x800) + (self.cps >= 0x10000)
        ends = np.concatenate([[0], np.cumsum(widths)])
        return int(np.diff(ends[self.bounds]).max(initial=0))


def code_point_runs(tokens) -> CodePointRuns:
    """`tokens` (strings or None) as a CodePointRuns."""
    present = np.fromiter(map(operator.is_not, tokens, itertools.repeat(None)), dtype=bool, count=len(tokens))
    texts = [t or "" for t in tokens]
    bounds = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=bounds[1:])
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return CodePointRuns(cps, bounds, present)


@lru_cache(maxsize=None)
def _byte_of_symbol() -> np.ndarray:
    """int16 per code point up to the last symbol, the byte each symbol stands for (-1: none), and a
    last entry of -1 that stands for every code point past them."""
    inverse = unicode_to_bytes()
    table = np.full(max(map(ord, inverse)) + 2, -1, dtype=np.int16)
    for symbol, byte in inverse.items():
        table[ord(symbol)] = byte
    return table


def symbol_bytes(runs: CodePointRuns) -> tuple[bytes, np.ndarray]:
    """The bytes the GPT-2 symbols of `runs` stand for, one per code point (so `runs.bounds` bound each
    token's bytes too), and per token whether it is present and all its code points are symbols.

    >>> blob, ok = symbol_bytes(code_point_runs(["Ġa", None, "中"]))
    >>> blob[:2], ok.tolist()
    (b' a', [True, False, False])
    """
    table = _byte_of_symbol()
    values = table[np.minimum(runs.cps, len(table) - 1)]
    bad = np.concatenate([[0], np.cumsum(values < 0)])
    ok = (bad[runs.bounds[1:]] == bad[runs.bounds[:-1]]) & runs.present
    return values.astype(np.uint8).tobytes(), ok
