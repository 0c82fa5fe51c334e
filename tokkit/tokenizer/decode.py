"""Decoding ids back to text with the `tokenizers` decoders' rules.

WordPiece: a token starting with the prefix is glued to the previous one, every other token gets
a space in front, then each token goes through the cleanup replacements. Byte-level: the tokens'
bytes are joined and read as UTF-8 (invalid sequences become U+FFFD). Char BPE: the `</w>` suffix
becomes a space, except on the last token.

>>> wordpiece_join(["[CLS]", "hel", "##lo", ",", "world", "[SEP]"], "##", True)
'[CLS] hello, world [SEP]'
"""
from __future__ import annotations

import operator
from typing import Iterable

import numpy as np

from tokkit._native.byte_symbols import decode_symbols
from tokkit.errors import TokkitError

# The cleanup of tokenizers' WordPiece decoder, applied to each token in this order.
CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
           (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def wordpiece_join(tokens: list[str], prefix: str, cleanup: bool) -> str:
    out = []
    for i, tok in enumerate(tokens):
        if i:
            tok = tok.replace(prefix, "", 1) if tok.startswith(prefix) else " " + tok
        if cleanup:
            for old, new in CLEANUP:
                tok = tok.replace(old, new)
        out.append(tok)
    return "".join(out)


def bpe_join(tokens: list[str], suffix: str) -> str:
    last = len(tokens) - 1
    return "".join(tok.replace(suffix, "" if i == last else " ") for i, tok in enumerate(tokens))


def byte_table(vocab: list[str]) -> list[bytes]:
    """Each token's bytes: its GPT-2 symbols read back, or its own UTF-8 when it is not all symbols."""

    out = []
    for tok in vocab:
        raw = decode_symbols(tok or "")
        out.append(tok.encode("utf-8", "surrogatepass") if raw is None else raw)
    return out


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


def picked_ids(tokenizer, ids: Iterable[int], skip_special_tokens: bool) -> list[int]:
    """`ids` checked against the vocabulary, without the special ones when asked."""
    n = tokenizer.vocab_size
    skip = set(tokenizer.special_ids) if skip_special_tokens else ()
    picked = []
    for pos, i in enumerate(check_ids(ids)):
        i = i if type(i) is int else _as_id(i, pos)
        if not 0 <= i < n:
            raise TokkitError(f"id {i} at position {pos} is outside the vocabulary (size {n})")
        if i not in skip:
            picked.append(i)
    return picked


def decode(tokenizer, ids: Iterable[int], skip_special_tokens: bool) -> str:
    """Text of `ids` for the fast kinds (the general ones go through their decoder component)."""
    spec = tokenizer.spec
    vocab = spec.vocab
    picked = picked_ids(tokenizer, ids, skip_special_tokens)
    if spec.kind == "bytelevel":
        if tokenizer._decode_table is None:
            tokenizer._decode_table = byte_table(vocab)
        table = tokenizer._decode_table
        return b"".join(table[i] for i in picked).decode("utf-8", "replace")
    tokens = [vocab[i] for i in picked if vocab[i] is not None]  # an unused id decodes to nothing
    if spec.kind == "wordpiece":
        return wordpiece_join(tokens, spec.prefix, spec.decoder_cleanup)
    return bpe_join(tokens, spec.suffix or "</w>")
