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
BERT_REMOVE, BERT_SPACE, BERT_CJK, MN, BERT_SPLIT, BERT_PUNCT = 64, 128, 256, 512, 1024, 2048

# build_tables' flags are uint8: the BERT classes go in low bits there and move up here
_BERT_BITS = {"L": 0, "N": 0, "S": 0, "clean_remove": 1, "clean_space": 2, "cjk": 4, "split_space": 8, "punct": 16}
_BERT_MOVE = ((1, BERT_REMOVE), (2, BERT_SPACE), (4, BERT_CJK), (8, BERT_SPLIT), (16, BERT_PUNCT))


@functools.lru_cache(maxsize=1)
def pipeline_tables() -> dict:
    """The arrays pipeline.pyx points its tables at (see the module docstring)."""
    bert = ut.build_tables(_BERT_BITS)
    norm = ut.norm_tables()
    flags = norm["flags"].astype(np.uint16)
    for low, high in _BERT_MOVE:
        flags[(bert["flags"] & low) != 0] |= high
    marks_stage1, marks_stage2 = bert["marks"]
    marks = marks_stage2.reshape(-1, 256)[marks_stage1].reshape(-1)
    flags[(marks & 0x100) != 0] |= MN
    ccc = (marks & 0xFF).astype(np.uint8)
    pool = [bert["pool"]]
    size = len(bert["pool"])
    maps = dict(bert["maps"])
    for name in ("nfkd",):
        index = norm[name + "_index"].astype(np.uint32)
        block = norm[name + "_pool"].astype(np.uint32)
        maps[name] = ut.two_stage(np.where(index > 0, index + size, 0).astype(np.uint32))
        pool.append(block)
        size += len(block)
    return {"lower": maps["lower"], "nfd": maps["nfd"], "nfkd": maps["nfkd"], "pool": np.concatenate(pool),
            "flags": ut.two_stage(flags), "ccc": ut.two_stage(ccc),
            "compose_keys": norm["compose_keys"], "compose_values": norm["compose_values"],
            "grapheme": ut.two_stage(norm["grapheme"].astype(np.uint16))}



@functools.lru_cache(maxsize=1)
def nfc_unstable() -> np.ndarray:
    """uint8 per code point: 1 where NFC may change a text holding the char, 0 where it surely does not.

    Flagged: combining marks (ccc > 0, which NFC may reorder or compose), chars that compose onto
    the char before them (the second of a composition pair, Hangul vowel and final jamo), and chars
    with a canonical decomposition that are not a composition's result (singletons and excluded
    composites, which NFC replaces). A primary composite or Hangul syllable on its own is stable.
    A superset of the chars whose NFC_Quick_Check is No or Maybe, from the same tables as NFC.

    >>> u = nfc_unstable()
    >>> [int(u[ord(c)]) for c in "aé\u0301\u212b가\u1161"]
    [0, 0, 1, 1, 0, 1]
    """
    t = pipeline_tables()
    ccc = t["ccc"][1].reshape(-1, 256)[t["ccc"][0]].reshape(-1)
    nfd = t["nfd"][1].reshape(-1, 256)[t["nfd"][0]].reshape(-1)
    out = (ccc != 0) | (nfd != 0)
    out[t["compose_values"].astype(np.int64)] = False
    out[(t["compose_keys"] & 0x1FFFFF).astype(np.int64)] = True
    out[0xAC00:0xD7A4] = False
    out[0x1161:0x1176] = True
    out[0x11A8:0x11C3] = True
    return out.astype(np.uint8)
