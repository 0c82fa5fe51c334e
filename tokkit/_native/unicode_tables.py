"""Build the text kernels' lookup arrays from tokkit/data/unicode_tables.json (at import, once).

The JSON holds ranges and sparse maps probed from the pinned oracles by dev/gen_unicode_tables.py;
this module turns them into numpy arrays that tokkit._native.text points its C pointers at:

- flags: uint8 per code point (GPT-2 classes and BERT character classes, bit values given by caller);
- tkcls: uint8 per code point, the GPT-2 classes as tokenizers' regex engine defines them;
- pattern_classes(): uint8 per code point, the classes of the cl100k / qwen2 / o200k patterns as
  tokenizers' regex engine defines them (bits PAT_*, the same values as in pattern_scan.hpp);
- maps: (stage1 uint16[0x1100], stage2 uint32 blocks) per character map, two-stage so most of the
  code space shares one all-zero block; values index `pool` ([length, code points...], 0 = unchanged);
- marks: the same two-stage layout (uint16) holding ccc | 0x100 for nonspacing marks (Mn).

norm_tables() adds the arrays of the pipeline's other normalizers and pre-tokenizers (the JSON's "norm"
section; NFD, Lowercase, ccc and the BERT classes stay in build_tables), all indexed by code point:

- flags: uint16[0x110000] of WHITESPACE (1: Rust's char::is_whitespace, used by Strip, WhitespaceSplit
  and BertPreTokenizer), PUNCT (2: tokenizers' punctuation, the Punctuation and Bert pre-tokenizers),
  NUMERIC (4: char::is_numeric, Digits), WORD (8: \\w of the Whitespace pre-tokenizer's regex),
  STRIP_ACCENT (16: what StripAccents removes) and REGEX_SPACE (32: \\s of that regex, equal to
  WHITESPACE in the pinned oracle);
- nfkd_index: uint32[0x110000], 0 = unchanged, else the index in nfkd_pool (uint32) of an entry
  [length, code points...] (nfkd_pool[0] is an unused 0, so no entry starts at 0);
- compose_keys: uint64 sorted, first << 21 | second, and compose_values: uint32, the composite of
  each pair (canonical composition, Hangul included): binary search for NFC/NFKC;
- grapheme: uint16[0x110000], Grapheme_Cluster_Break in the low 5 bits (GRAPHEME_BREAK: Other 0,
  CR 1, LF 2, Control 3, Extend 4, ZWJ 5, Regional_Indicator 6, Prepend 7, SpacingMark 8, L 9, V 10,
  T 11, LV 12, LVT 13) plus G_EXT_PICT (32, Extended_Pictographic), G_INCB_CONSONANT (64),
  G_INCB_LINKER (128) and G_INCB_EXTEND (256) (Indic_Conjunct_Break).

>>> t = build_tables({"L": 1, "N": 2, "S": 4, "clean_remove": 8, "clean_space": 16, "cjk": 32,
...                   "split_space": 64, "punct": 128})
>>> int(t["flags"][ord("a")]), int(t["flags"][ord(",")])
(1, 128)

The JSON is parsed once per process and the arrays that do not depend on the caller's bits are
built once (the compiled kernels, the general pipeline and the readable twins all start from them):
the arrays handed out are shared, so callers read them and never write them.
"""
import functools
import json
import os

import numpy as np

TABLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "unicode_tables.json")


def _once_per_file(build):
    """`build(path)` run once per file: a call with the default path and one naming it share the result."""
    cached = functools.lru_cache(maxsize=None)(build)

    @functools.wraps(build)
    def get(path=TABLES):
        return cached(os.path.abspath(path))
    return get


@_once_per_file
def table_data(path=TABLES):
    """unicode_tables.json at `path`, parsed (once per process: every builder here starts from it)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _codepoints(text):
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def _lengths(table):
    """A map's result lengths: a string of decimal digits (the bert maps) or a list of integers (norm)."""
    if isinstance(table["lengths"], list):
        return np.array(table["lengths"], dtype=np.int64)
    return np.frombuffer(table["lengths"].encode("ascii"), dtype=np.uint8).astype(np.int64) - 48


def _pool_block(table, base):
    """One map's pool entries [length, code points...] and its 0x110000 index array (0 = unchanged)."""
    keys = _codepoints(table["from"])
    lengths = _lengths(table)
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
    data = table_data(path)
    gpt2, bert = data["gpt2"], data["bert"]
    flags = np.zeros(0x110000, dtype=np.uint8)
    for name, runs in (("L", gpt2["L"]), ("N", gpt2["N"]), ("S", gpt2["S"])) + tuple(
            (k, bert[k]) for k in ("clean_remove", "clean_space", "cjk", "split_space", "punct")):
        set_runs(flags, runs, bits[name])
    tkcls = np.zeros(0x110000, dtype=np.uint8)      # the GPT-2 classes as tokenizers' regex engine has them
    for name in ("L", "N", "S"):
        set_runs(tkcls, data["gpt2_tokenizers"][name], bits[name])
    for g in (flags & (bits["L"] | bits["N"] | bits["S"]), tkcls):
        if np.any(g & (g - 1)):
            raise RuntimeError("unicode_tables.json: the GPT-2 classes overlap")
    return {"flags": flags, "tkcls": tkcls, **bert_maps(path)}


@_once_per_file
def bert_maps(path=TABLES):
    """build_tables' arrays that no bit value changes: {"pool", "maps", "marks"} (built once, shared)."""
    bert = table_data(path)["bert"]
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
    return {"pool": np.concatenate(pool), "maps": maps, "marks": two_stage(marks)}


# pattern_classes' bits (pattern_scan.hpp's PAT_* enum: keep the two equal). L, N and S are the GPT-2
# classes' bits, so a table of these also serves the GPT-2 scanner.
PAT_L, PAT_N, PAT_S, PAT_UPPER, PAT_LOWER, PAT_FOLD_S, PAT_NL = 1, 2, 4, 8, 16, 32, 64


def pattern_classes(path=TABLES):
    """uint8[0x110000]: \\p{L}, \\p{N}, \\s, o200k's upper and lower letter sets, (?i:s) and [\\r\\n].

    As tokenizers' regex engine (the one the Hub's tokenizer.json files run on) defines them.

    >>> t = pattern_classes()
    >>> int(t[ord("A")]) == PAT_L | PAT_UPPER, int(t[0x17F]) == PAT_L | PAT_LOWER | PAT_FOLD_S
    (True, True)
    """
    data = table_data(path)
    classes = np.zeros(0x110000, dtype=np.uint8)
    for name, bit in (("L", PAT_L), ("N", PAT_N), ("S", PAT_S)):
        set_runs(classes, data["gpt2_tokenizers"][name], bit)
    for name, bit in (("upper", PAT_UPPER), ("lower", PAT_LOWER), ("fold_s", PAT_FOLD_S)):
        set_runs(classes, data["pattern_tokenizers"][name], bit)
    classes[[0x0A, 0x0D]] |= PAT_NL
    return classes


# norm_tables' flag bits (the compiled pipeline's F_* bits)
WHITESPACE, PUNCT, NUMERIC, WORD, STRIP_ACCENT, REGEX_SPACE = 1, 2, 4, 8, 16, 32
# Grapheme_Cluster_Break values, in the order of their numbers in norm_tables()["grapheme"]
GRAPHEME_BREAK = ("Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend",
                  "SpacingMark", "L", "V", "T", "LV", "LVT")
G_EXT_PICT, G_INCB_CONSONANT, G_INCB_LINKER, G_INCB_EXTEND = 32, 64, 128, 256
_INCB = {"Consonant": G_INCB_CONSONANT, "Linker": G_INCB_LINKER, "Extend": G_INCB_EXTEND}


def set_runs(array, runs, value):
    """OR `value` into `array` over each inclusive [lo, hi] run of code points."""
    for lo, hi in runs:
        array[lo:hi + 1] |= value


def grapheme_array(norm):
    """uint16[0x110000] of grapheme properties from the JSON's "norm" section (see the module docstring)."""
    g = np.zeros(0x110000, dtype=np.uint16)
    for value, name in enumerate(GRAPHEME_BREAK[1:], start=1):
        set_runs(g, norm["gcb"].get(name, []), value)
    set_runs(g, norm["ext_pict"], G_EXT_PICT)
    for name, bit in _INCB.items():
        set_runs(g, norm["incb"].get(name, []), bit)
    return g


def compose_arrays(compose):
    """(keys uint64 sorted: first << 21 | second, composites uint32) from the "norm.compose" strings."""
    keys = (_codepoints(compose["first"]).astype(np.uint64) << np.uint64(21)) | _codepoints(compose["second"])
    order = np.argsort(keys, kind="stable")
    return keys[order], _codepoints(compose["composite"])[order].copy()


@_once_per_file
def norm_tables(path=TABLES):
    """{"flags", "nfkd_index", "nfkd_pool", "compose_keys", "compose_values", "grapheme"} (module docstring;
    built once, shared).

    >>> t = norm_tables()
    >>> int(t["flags"][ord("5")]) == NUMERIC | WORD, int(t["grapheme"][0x200D]) & 31
    (True, 5)
    """
    data = table_data(path)
    bert, norm = data["bert"], data["norm"]
    flags = np.zeros(0x110000, dtype=np.uint16)
    set_runs(flags, bert["split_space"], WHITESPACE | REGEX_SPACE)
    set_runs(flags, bert["punct"], PUNCT)
    set_runs(flags, norm["numeric"], NUMERIC)
    set_runs(flags, norm["word"], WORD)
    set_runs(flags, norm["mark"], STRIP_ACCENT)
    block, index = _pool_block(norm["nfkd"], 1)
    keys, values = compose_arrays(norm["compose"])
    return {"flags": flags, "nfkd_index": index, "nfkd_pool": np.concatenate([np.zeros(1, np.uint32), block]),
            "compose_keys": keys, "compose_values": values, "grapheme": grapheme_array(norm)}
