"""The character alphabet shared by char BPE and WordPiece.

Both keep the `limit` most frequent characters (ties by code point), give each an id in code
point order, then give ids to the positional variants that occur (``##c`` for WordPiece,
``c</w>`` for char BPE), sorted by c. A word holding any other character is left out.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from tokkit._native.symbols import char_counts
from tokkit.text.count import WordTable
from tokkit.train.flow import Alphabet, compact_ids, symbols_from_tables, top_characters


def char_alphabet(table: WordTable, base: int, limit: int | None, *, variant: Callable[[str], str],
                  variant_at: str) -> Alphabet:
    """Build the alphabet; `variant_at` is "rest" (WordPiece: all but the first char) or "last" (BPE)."""

    chars = top_characters(char_counts(table.blob, table.offsets, table.counts), limit)
    plain = {cp: base + k for k, cp in enumerate(chars)}
    var = {cp: base + len(chars) + k for k, cp in enumerate(chars)}
    if variant_at == "rest":
        tables = dict(first=plain, middle=var, last=var, single=plain)
    elif variant_at == "last":
        tables = dict(first=plain, middle=plain, last=var, single=var)
    else:
        raise ValueError(f"variant_at must be 'rest' or 'last', not {variant_at!r}")
    symbols, offsets, kept, counts = symbols_from_tables(table, **tables)
    candidates = [variant(chr(cp)) for cp in chars]
    symbols, used = compact_ids(symbols, len(chars), candidates, base)
    total = int(table.counts.sum())
    return Alphabet(
        tokens=[chr(cp) for cp in chars] + used,
        symbols=np.ascontiguousarray(symbols, dtype=np.int32),
        offsets=offsets,
        counts=counts,
        skipped_words=len(table) - len(kept),
        skipped_occurrences=total - int(counts.sum()),
    )
