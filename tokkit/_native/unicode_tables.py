"""Build the text kernels' lookup arrays from tokkit/data/unicode_tables.json (at import, once).

The JSON holds ranges and sparse maps probed from the pinned oracles by dev/gen_unicode_tables.py;
this module turns them into numpy arrays that tokkit._native.text points its C pointers at:

- flags: uint8 per code point (GPT-2 classes and BERT character classes, bit values given by caller);
- tkcls: uint8 per code point, the GPT-2 classes as tokenizers' regex engine defines them;
- maps: (stage1 uint16[0x1100], stage2 uint32 blocks) per character map, two-stage so most of the
  code space shares one all-zero block; values index `pool` ([length, code points...], 0 = unchanged);
- marks: the same two-stage layout (uint16) holding ccc | 0x100 for nonspacing marks (Mn).

>>> t = build_tables({"L": 1, "N": 2, "S": 4, "clean_remove": 8, "clean_space": 16, "cjk": 32,
...                   "split_space": 64, "punct": 128})
>>> int(t["flags"][ord("a")]), int(t["flags"][ord(",")])
(1, 128)
"""
import json
import os

import numpy as np

TABLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "unicode_tables.json")


def _codepoints(text):
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _pool_block(table, base):
    """One map's pool entries [length, code points...] and its 0x110000 index array (0 = unchanged)."""
    keys = _codepoints(table["from"])
    lengths = np.frombuffer(table["lengths"].encode("ascii"), dtype=np.uint8).astype(np.int64) - 48
    values = _codepoints(table["to"])
    if len(keys) != len(lengths) or lengths.sum() != len(values):
        raise RuntimeError("unicode_tables.json: a character map is inconsistent")
    starts = np.zeros(len(keys), dtype=np.int64)
    np.cumsum(lengths[:-1] + 1, out=starts[1:])
    block = np.empty(len(keys) + len(values), dtype=np.uint32)
    is_length = np.zeros(len(block), dtype=bool)
    is_length[starts] = True
    block[starts] = lengths
    block[~is_length] = values
    index = np.zeros(0x110000, dtype=np.uint32)
    index[keys] = base + starts
    return block, index


def two_stage(values):
    """Split a 0x110000 array into (block number per 256 code points, the distinct blocks)."""
    blocks = values.reshape(0x1100, 256)
    seen = {bytes(256 * values.itemsize): 0}     # block 0: all zero, shared by most of the code space
    stage1 = np.zeros(0x1100, dtype=np.uint16)
    for b in np.flatnonzero(blocks.any(axis=1)).tolist():
        stage1[b] = seen.setdefault(blocks[b].tobytes(), len(seen))
    return stage1, np.frombuffer(b"".join(seen), dtype=values.dtype).copy()


def build_tables(bits, path=TABLES):
    """{"flags", "tkcls", "pool", "maps": {"lower", "nfd"} -> (stage1, stage2), "marks": (stage1, stage2)}."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    gpt2, bert = data["gpt2"], data["bert"]
    flags = np.zeros(0x110000, dtype=np.uint8)
    for name, runs in (("L", gpt2["L"]), ("N", gpt2["N"]), ("S", gpt2["S"])) + tuple(
            (k, bert[k]) for k in ("clean_remove", "clean_space", "cjk", "split_space", "punct")):
        for lo, hi in runs:
            flags[lo:hi + 1] |= bits[name]
    tkcls = np.zeros(0x110000, dtype=np.uint8)      # the GPT-2 classes as tokenizers' regex engine has them
    for name in ("L", "N", "S"):
        for lo, hi in data["gpt2_tokenizers"][name]:
            tkcls[lo:hi + 1] |= bits[name]
    for g in (flags & (bits["L"] | bits["N"] | bits["S"]), tkcls):
        if np.any(g & (g - 1)):
            raise RuntimeError("unicode_tables.json: the GPT-2 classes overlap")
    pool, size, maps = [np.zeros(1, dtype=np.uint32)], 1, {}
    for name in ("lower", "nfd"):
        block, index = _pool_block(bert[name], size)
        pool.append(block)
        size += len(block)
        maps[name] = two_stage(index)
    marks = np.zeros(0x110000, dtype=np.uint16)
    for cp, ccc in bert["ccc"]:
        marks[cp] = ccc
    for lo, hi in bert["mn"]:
        marks[lo:hi + 1] |= 0x100
    return {"flags": flags, "tkcls": tkcls, "pool": np.concatenate(pool), "maps": maps, "marks": two_stage(marks)}
