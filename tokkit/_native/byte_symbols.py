"""The GPT-2 byte <-> unicode table: every byte gets a printable character for vocab files.

Printable Latin-1 bytes map to themselves; the other 68 bytes map to U+0100 upwards, in byte order.

>>> bytes_to_unicode()[ord("a")], bytes_to_unicode()[ord(" ")]
('a', 'Ġ')
>>> decode_symbols("Ġhi")
b' hi'
"""
from __future__ import annotations

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
    """decode_symbols() of each token (None stays None), with C loops over all of them at once: a
    128k vocabulary's tokens one by one took 0.17 s of the first encode.

    >>> decode_symbols_all(["Ġa", None, "中", ""])
    [b' a', None, None, b'']
    """
    inverse = unicode_to_bytes()
    table = np.full(max(map(ord, inverse)) + 2, -1, dtype=np.int16)  # the last entry: any other char
    for symbol, byte in inverse.items():
        table[ord(symbol)] = byte
    lengths = [0 if t is None else len(t) for t in tokens]
    cps = np.frombuffer("".join(t for t in tokens if t).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    values = table[np.minimum(cps, len(table) - 1)]
    blob = values.astype(np.uint8).tobytes()
    bad = np.concatenate([[0], np.cumsum(values < 0)]).tolist()
    out, at = [], 0
    for token, n in zip(tokens, lengths):
        out.append(None if token is None or bad[at + n] != bad[at] else blob[at:at + n])
        at += n
    return out
