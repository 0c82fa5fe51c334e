"""The Unicode tables of the general encode path (pipeline.pyx), as flat numpy arrays, built once.

Everything comes from tokkit/data/unicode_tables.json (probed from the pinned oracles by
dev/gen_unicode_tables.py) through tokkit._native.unicode_tables; this module only lays the data out
the way pipeline_text.hpp reads it:

- "lower", "nfd", "nfkd": (stage1 uint16, stage2 uint32) over one shared "pool" uint32 of
  [length, code points...] entries (0 = unchanged);
- "flags": (stage1 uint16, stage2 uint16) of the F_* bits below;
- "ccc": (stage1 uint16, stage2 uint8), canonical combining classes;
- "compose_keys" uint64 (first << 21 | second, sorted) and "compose_values" uint32;
- "grapheme": (stage1 uint16, stage2 uint16) of the G_* values and bits.

>>> t = pipeline_tables()
>>> int(t["flags"][1][t["flags"][0][0] * 256 + ord(" ")] & WHITESPACE)
1
"""
from __future__ import annotations

import functools

import numpy as np

from tokkit._native import unicode_tables as ut

# pipeline_text.hpp's F_* bits
WHITESPACE, PUNCT, NUMERIC, WORD, STRIP_ACCENT, REGEX_SPACE = 1, 2, 4, 8, 16, 32
BERT_SPLIT, BERT_PUNCT = 1024, 2048  # (BertNormalizer runs on text.pyx's own tables)

# the BertPreTokenizer classes: the runs build_tables reads for its "split_space" and "punct" bits
_BERT_RUNS = (("split_space", BERT_SPLIT), ("punct", BERT_PUNCT))


@functools.lru_cache(maxsize=1)
def pipeline_tables() -> dict:
    """The arrays pipeline.pyx points its tables at (see the module docstring)."""
    bert = ut.bert_maps()
    norm = ut.norm_tables()
    flags = norm["flags"].astype(np.uint16)
    for name, bit in _BERT_RUNS:
        ut.set_runs(flags, ut.table_data()["bert"][name], bit)
    marks_stage1, marks_stage2 = bert["marks"]
    marks = marks_stage2.reshape(-1, 256)[marks_stage1].reshape(-1)
    ccc = marks.astype(np.uint8)  # the low 8 bits: the combining class (0x100 marks Mn)
    pool = [bert["pool"]]
    size = len(bert["pool"])
    maps = dict(bert["maps"])
    for name in ("nfkd",):
        block = norm[name + "_pool"].astype(np.uint32, copy=False)
        # the pool entries move up by `size`: shifting the distinct blocks' non-zero values gives the
        # same two stages as shifting every code point's (the shift keeps distinct blocks distinct)
        stage1, stage2 = ut.two_stage(norm[name + "_index"].astype(np.uint32, copy=False))
        maps[name] = stage1, np.where(stage2 > 0, stage2 + size, 0).astype(np.uint32, copy=False)
        pool.append(block)
        size += len(block)
    return {"lower": maps["lower"], "nfd": maps["nfd"], "nfkd": maps["nfkd"], "pool": np.concatenate(pool),
            "flags": ut.two_stage(flags), "ccc": ut.two_stage(ccc),
            "compose_keys": norm["compose_keys"], "compose_values": norm["compose_values"],
            "grapheme": ut.two_stage(norm["grapheme"].astype(np.uint16, copy=False))}



# nfc_table's bits above the combining class (low 8 bits)
NFC_ALWAYS, NFC_SECOND, NFC_FIRST = 0x100, 0x200, 0x400


@functools.lru_cache(maxsize=1)
def nfc_table() -> np.ndarray:
    """uint16 per code point, what tells whether NFC can change a text (encode.texts_nfc_may_change):

    - low 8 bits: the canonical combining class (marks out of order get reordered);
    - NFC_ALWAYS: NFC replaces the char itself (a canonical decomposition that is no composition's
      result: singletons and excluded composites);
    - NFC_SECOND: it composes onto a starter before it (the second of a composition pair, Hangul
      vowel and final jamo);
    - NFC_FIRST: a starter something may compose onto (the first of a pair, any char with a
      canonical decomposition, Hangul leading jamo and syllables).

    From the same tables as the general path's NFC, so the two agree on every char.

    >>> t = nfc_table()
    >>> [hex(int(t[ord(c)])) for c in "aé\u0301\u212b\u1161"]
    ['0x400', '0x400', '0x2e6', '0x500', '0x200']
    """
    t = pipeline_tables()
    ccc = t["ccc"][1].reshape(-1, 256)[t["ccc"][0]].reshape(-1).astype(np.uint16)
    nfd = t["nfd"][1].reshape(-1, 256)[t["nfd"][0]].reshape(-1)
    keys = t["compose_keys"]
    always = nfd != 0
    always[t["compose_values"].astype(np.int64)] = False
    always[0xAC00:0xD7A4] = False
    out = ccc | np.where(always, NFC_ALWAYS, 0).astype(np.uint16)
    out[(keys & 0x1FFFFF).astype(np.int64)] |= NFC_SECOND
    out[(keys >> 21).astype(np.int64)] |= NFC_FIRST
    out[nfd != 0] |= NFC_FIRST  # a composite stands for its decomposition: its base may take a mark after it
    out[0x1161:0x1176] |= NFC_SECOND
    out[0x11A8:0x11C3] |= NFC_SECOND
    out[0x1100:0x1113] |= NFC_FIRST
    out[0xAC00:0xD7A4] |= NFC_FIRST
    return out

