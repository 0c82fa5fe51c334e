"""Compiled text kernels: the GPT-2 pattern scanner and BERT normalize + pre-tokenize.

The Unicode tables come from tokkit/data/unicode_tables.json (probed from the pinned oracles by
dev/gen_unicode_tables.py); they are built into C arrays once at import and only read after, so the
kernels are safe on several threads without the GIL. Other modules `cimport` them (see _text.pxd);
Python code uses tokkit.pretokenize and tokkit.normalize (through tokkit._textapi).

>>> from tokkit._text import WordCounter
>>> c = WordCounter("gpt2"); c.count(b"I'm here"); len(c), c.total
(3, 3)
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector

import json
import os

import numpy as np

cdef extern from "Python.h":
    int PyUnicode_READY(object s) except -1
    int PyUnicode_KIND(object s)
    void* PyUnicode_DATA(object s)
    Py_ssize_t PyUnicode_GET_LENGTH(object s)

ctypedef fused char_t:
    uint8_t
    uint16_t
    uint32_t

# Per code point flags. The low three bits are the GPT-2 classes (0 = none of them).
cdef enum:
    G_L = 1          # \p{L}
    G_N = 2          # \p{N}
    G_S = 4          # \s (as the regex package defines it)
    B_REMOVE = 8     # clean_text deletes it
    B_CLEANSP = 16   # clean_text turns it into " "
    B_CJK = 32       # handle_chinese_chars pads it with spaces
    B_SPLIT = 64     # BertPreTokenizer whitespace: ends a piece, dropped
    B_PUNCT = 128    # BertPreTokenizer punctuation: a piece of its own

cdef const uint8_t* FLAGS = NULL
# Character maps, two-stage: pool index = STAGE2[m][STAGE1[m][c >> 8] * 256 + (c & 255)];
# 0 means "unchanged", else POOL[idx] is the length and POOL[idx + 1 ...] the code points.
cdef const uint16_t* STAGE1[3]
cdef const uint32_t* STAGE2[3]
cdef const uint32_t* POOL = NULL
cdef enum:
    MAP_LOWER = 0
    MAP_STRIP = 1
    MAP_BOTH = 2
    CH_SPACE = 32
    CH_APOS = 39
    CH_d = 100
    CH_e = 101
    CH_l = 108
    CH_m = 109
    CH_r = 114
    CH_s = 115
    CH_t = 116
    CH_v = 118

_keep = []   # the numpy arrays behind the C pointers, alive as long as the module


def _load_tables():
    """Read the JSON tables and build the flag array and the three two-stage maps."""
    global FLAGS, POOL
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "unicode_tables.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    flags = np.zeros(0x110000, dtype=np.uint8)
    sections = [(data["gpt2"]["L"], G_L), (data["gpt2"]["N"], G_N), (data["gpt2"]["S"], G_S),
                (data["bert"]["clean_remove"], B_REMOVE), (data["bert"]["clean_space"], B_CLEANSP),
                (data["bert"]["cjk"], B_CJK), (data["bert"]["split_space"], B_SPLIT),
                (data["bert"]["punct"], B_PUNCT)]
    for runs, bit in sections:
        for lo, hi in runs:
            flags[lo:hi + 1] |= bit
    gpt2 = flags & 7
    if np.any(gpt2 & (gpt2 - 1)):
        raise RuntimeError("unicode_tables.json: the GPT-2 classes overlap")
    pool = [np.zeros(1, dtype=np.uint32)]     # pool index 0 means "unchanged"
    size = 1
    maps = []
    for name in ("lower", "strip", "strip_lower"):
        block, index = _pool_block(data["bert"][name], size)
        pool.append(block)
        size += len(block)
        maps.append(_two_stage(index))
    pool_arr = np.concatenate(pool)
    _keep.extend([flags, pool_arr] + [a for m in maps for a in m])
    cdef const uint8_t[::1] fv = flags
    cdef const uint32_t[::1] pv = pool_arr
    cdef const uint16_t[::1] s1
    cdef const uint32_t[::1] s2
    FLAGS = &fv[0]
    POOL = &pv[0]
    for m in range(3):
        s1 = maps[m][0]
        s2 = maps[m][1]
        STAGE1[m] = &s1[0]
        STAGE2[m] = &s2[0]


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


def _two_stage(idx):
    """Split a 0x110000 array into (block number per 256 code points, the distinct blocks)."""
    blocks = idx.reshape(0x1100, 256)
    seen = {bytes(256 * 4): 0}     # block 0: all unchanged, shared by most of the code space
    stage1 = np.zeros(0x1100, dtype=np.uint16)
    for b in np.flatnonzero(blocks.any(axis=1)).tolist():
        stage1[b] = seen.setdefault(blocks[b].tobytes(), len(seen))
    blocks = np.frombuffer(b"".join(seen), dtype=np.uint32)
    return stage1, np.ascontiguousarray(blocks)


_load_tables()


cdef inline uint8_t flags_of(uint32_t c) noexcept nogil:
    return FLAGS[c] if c < 0x110000 else 0


cdef inline const uint32_t* mapped(int m, uint32_t c) noexcept nogil:
    """The pool entry (length, code points...) for c under map m, or NULL when c is unchanged."""
    if c >= 0x110000:
        return NULL
    cdef uint32_t idx = STAGE2[m][<Py_ssize_t>STAGE1[m][c >> 8] * 256 + (c & 255)]
    return &POOL[idx] if idx else NULL


cdef TextView text_view(str s) except *:
    cdef TextView v
    PyUnicode_READY(s)
    v.data = PyUnicode_DATA(s)
    v.kind = PyUnicode_KIND(s)
    v.length = PyUnicode_GET_LENGTH(s)
    return v


# ---------------------------------------------------------------- GPT-2 pattern
# 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# One left-to-right pass: at each position the first alternative that matches wins, each + run is
# maximal, and the only backtrack (\s+(?!\S) giving back one space) moves by one character.

cdef inline void push_piece(vector[Piece]& out, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Piece p
    p.norm_start = a
    p.norm_end = b
    p.start = a
    p.end = b
    out.push_back(p)


cdef inline Py_ssize_t contraction(const char_t* s, Py_ssize_t i, Py_ssize_t end) noexcept nogil:
    """Length of 's 't 're 've 'm 'll 'd at s[i] (which is an apostrophe), or 0."""
    if i + 1 >= end:
        return 0
    cdef uint32_t d = s[i + 1]
    if d == CH_s or d == CH_t or d == CH_m or d == CH_d:
        return 2
    if i + 2 < end:
        if (d == CH_r or d == CH_v) and s[i + 2] == CH_e:
            return 3
        if d == CH_l and s[i + 2] == CH_l:
            return 3
    return 0


cdef void gpt2_scan(const char_t* s, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& out) noexcept nogil:
    cdef Py_ssize_t i = begin, j, start, k
    cdef uint8_t cls, nxt
    while i < end:
        if s[i] == CH_APOS:
            k = contraction(s, i, end)
            if k:
                push_piece(out, i, i + k)
                i += k
                continue
        cls = FLAGS[s[i]] & 7
        start = i
        if s[i] == CH_SPACE and i + 1 < end:
            nxt = FLAGS[s[i + 1]] & 7
            if nxt != G_S:        # " ?" takes the space into the following letter/number/other run
                cls = nxt
                i += 1
        j = i + 1
        if cls != G_S:
            while j < end and (FLAGS[s[j]] & 7) == cls:
                j += 1
            push_piece(out, start, j)
        else:
            while j < end and (FLAGS[s[j]] & 7) == G_S:
                j += 1
            if j < end and j - start > 1:
                j -= 1            # \s+(?!\S): leave the last space for the next word
            push_piece(out, start, j)
        i = j


cdef void gpt2_pieces(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces) noexcept nogil:
    if text.kind == 1:
        gpt2_scan(<const uint8_t*>text.data, begin, end, pieces)
    elif text.kind == 2:
        gpt2_scan(<const uint16_t*>text.data, begin, end, pieces)
    else:
        gpt2_scan(<const uint32_t*>text.data, begin, end, pieces)


# ---------------------------------------------------------------- BERT normalize + pre-tokenize
# Per original character: clean_text (delete / space), handle_chinese_chars (pad), then the
# strip_accents / lowercase map; each resulting character is fed to the pre-tokenizer, which closes
# the open piece at whitespace and isolates punctuation. Every emitted character carries the span
# of the original character it came from, as tokenizers' alignments do.

cdef struct BertState:
    vector[Py_UCS4]* norm
    vector[Py_ssize_t]* ostart      # NULL when the caller does not want per-character spans
    vector[Py_ssize_t]* oend
    vector[Piece]* pieces
    Py_ssize_t open_norm            # norm index where the open piece starts, -1 if none
    Py_ssize_t open_orig            # original start of the open piece
    Py_ssize_t last_end             # original end of its last character


cdef inline void bert_close(BertState* st, Py_ssize_t norm_end) noexcept nogil:
    cdef Piece p
    if st.open_norm >= 0:
        p.norm_start = st.open_norm
        p.norm_end = norm_end
        p.start = st.open_orig
        p.end = st.last_end
        st.pieces.push_back(p)
        st.open_norm = -1


cdef inline void bert_emit(BertState* st, Py_UCS4 c, Py_ssize_t i) noexcept nogil:
    cdef uint8_t f = flags_of(c)
    cdef Py_ssize_t k = st.norm.size()
    cdef Piece p
    st.norm.push_back(c)
    if st.ostart != NULL:
        st.ostart.push_back(i)
        st.oend.push_back(i + 1)
    if f & B_SPLIT:
        bert_close(st, k)
    elif f & B_PUNCT:
        bert_close(st, k)
        p.norm_start = k
        p.norm_end = k + 1
        p.start = i
        p.end = i + 1
        st.pieces.push_back(p)
    else:
        if st.open_norm < 0:
            st.open_norm = k
            st.open_orig = i
        st.last_end = i + 1


cdef void bert_scan(const char_t* s, Py_ssize_t n, const BertOptions* o, BertState* st) noexcept nogil:
    cdef int m = -1
    cdef Py_ssize_t i, k
    cdef uint32_t c
    cdef uint8_t f
    cdef bint cjk
    cdef const uint32_t* e
    if o.strip_accents:
        m = MAP_BOTH if o.lowercase else MAP_STRIP
    elif o.lowercase:
        m = MAP_LOWER
    st.open_norm = -1
    for i in range(n):
        c = s[i]
        f = flags_of(c)
        if o.clean_text:
            if f & B_REMOVE:
                continue
            if f & B_CLEANSP:
                bert_emit(st, CH_SPACE, i)
                continue
        if c < 128:          # ASCII: no CJK, accents or multi-character case mappings
            if o.lowercase and 65 <= c <= 90:
                c += 32
            bert_emit(st, c, i)
            continue
        cjk = o.handle_chinese_chars and (f & B_CJK)
        if cjk:
            bert_emit(st, CH_SPACE, i)
        e = mapped(m, c) if m >= 0 else NULL
        if e == NULL:
            bert_emit(st, c, i)
        else:
            for k in range(<Py_ssize_t>e[0]):
                bert_emit(st, e[1 + k], i)
        if cjk:
            bert_emit(st, CH_SPACE, i)
    bert_close(st, st.norm.size())


cdef void bert_run(TextView text, const BertOptions* opts, BertState* st) noexcept nogil:
    if text.kind == 1:
        bert_scan(<const uint8_t*>text.data, text.length, opts, st)
    elif text.kind == 2:
        bert_scan(<const uint16_t*>text.data, text.length, opts, st)
    else:
        bert_scan(<const uint32_t*>text.data, text.length, opts, st)


cdef void bert_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                      vector[Py_ssize_t]& orig_start, vector[Py_ssize_t]& orig_end,
                      vector[Piece]& pieces) noexcept nogil:
    cdef BertState st
    st.norm = &norm
    st.ostart = &orig_start
    st.oend = &orig_end
    st.pieces = &pieces
    bert_run(text, opts, &st)


cdef void bert_norm_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                           vector[Piece]& pieces) noexcept nogil:
    cdef BertState st
    st.norm = &norm
    st.ostart = NULL
    st.oend = NULL
    st.pieces = &pieces
    bert_run(text, opts, &st)


def __getattr__(name):
    """Word counting (tokkit._textcount) and symbolization (tokkit._textsym), re-exported lazily."""
    if name == "WordCounter":
        from tokkit._textcount import WordCounter
        return WordCounter
    if name in ("char_counts", "symbolize", "symbolize_bytes"):
        from tokkit import _textsym
        return getattr(_textsym, name)
    raise AttributeError(f"module 'tokkit._text' has no attribute {name!r}")
