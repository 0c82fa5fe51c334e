"""The GPT-2 byte <-> unicode table: every byte gets a printable character for vocab files.

Printable Latin-1 bytes map to themselves; the other 68 bytes map to U+0100 upwards, in byte order.

>>> bytes_to_unicode()[ord("a")], bytes_to_unicode()[ord(" ")]
('a', 'Ġ')
>>> decode_symbols("Ġhi")
b' hi'
"""
from __future__ import annotations

from functools import lru_cache


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
