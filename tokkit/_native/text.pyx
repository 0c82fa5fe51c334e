"""Compiled text kernels: the GPT-2 pattern scanner and BERT normalize + pre-tokenize.

The Unicode tables come from tokkit/data/unicode_tables.json (probed from the pinned oracles by
dev/gen_unicode_tables.py); they are built into C arrays once at import and only read after, so the
kernels are safe on several threads without the GIL. Other modules `cimport` them (see text.pxd);
Python code reaches them through tokkit._native.text_api.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector
from tokkit._native.grow cimport grow_push, grow_resize, throw_bad_alloc

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
cdef const uint8_t* TKCLS = NULL    # GPT-2 classes only, as tokenizers' regex engine (older Unicode) has them
# Two-stage tables: value = STAGE2[STAGE1[c >> 8] * 256 + (c & 255)]. For the character maps a
# value 0 means "unchanged", else POOL[value] is the length and POOL[value + 1 ...] the code points.
cdef const uint16_t* LOWER1 = NULL
cdef const uint32_t* LOWER2 = NULL
cdef const uint16_t* NFD1 = NULL
cdef const uint32_t* NFD2 = NULL
cdef const uint32_t* POOL = NULL
# Marks: canonical combining class (low byte; 0 = starter) | MN for nonspacing marks.
cdef const uint16_t* MARK1 = NULL
cdef const uint16_t* MARK2 = NULL
cdef enum:
    MN = 0x100
    FIRST = 0x80000000              # run entries: the first character of an original's NFD
    CP = 0x1FFFFF
    CH_SPACE = 32

_keep = {}   # the numpy arrays behind the C pointers, alive as long as the module


cdef _load_tables():
    """Point the C tables at arrays built from tokkit/data/unicode_tables.json (once, at import:
    the pointers never change after, which is what makes the kernels safe on several threads)."""
    global FLAGS, TKCLS, POOL, LOWER1, LOWER2, NFD1, NFD2, MARK1, MARK2
    from tokkit._native.unicode_tables import build_tables

    t = build_tables({"L": G_L, "N": G_N, "S": G_S, "clean_remove": B_REMOVE, "clean_space": B_CLEANSP,
                      "cjk": B_CJK, "split_space": B_SPLIT, "punct": B_PUNCT})
    _keep.update(t)
    cdef const uint8_t[::1] flags = t["flags"], tkcls = t["tkcls"]
    cdef const uint32_t[::1] pool = t["pool"]
    cdef const uint16_t[::1] lower1 = t["maps"]["lower"][0], nfd1 = t["maps"]["nfd"][0]
    cdef const uint32_t[::1] lower2 = t["maps"]["lower"][1], nfd2 = t["maps"]["nfd"][1]
    cdef const uint16_t[::1] mark1 = t["marks"][0], mark2 = t["marks"][1]
    FLAGS, TKCLS, POOL = &flags[0], &tkcls[0], &pool[0]
    LOWER1, LOWER2, NFD1, NFD2 = &lower1[0], &lower2[0], &nfd1[0], &nfd2[0]
    MARK1, MARK2 = &mark1[0], &mark2[0]


_load_tables()


cdef inline uint8_t flags_of(uint32_t c) noexcept nogil:
    return FLAGS[c] if c < 0x110000 else 0


cdef inline const uint32_t* mapped(const uint16_t* stage1, const uint32_t* stage2, uint32_t c) noexcept nogil:
    """The pool entry (length, code points...) for c, or NULL when the map leaves c unchanged."""
    if c >= 0x110000:
        return NULL
    cdef uint32_t idx = stage2[<Py_ssize_t>stage1[c >> 8] * 256 + (c & 255)]
    return &POOL[idx] if idx else NULL


cdef inline uint16_t mark_of(uint32_t c) noexcept nogil:
    return MARK2[<Py_ssize_t>MARK1[c >> 8] * 256 + (c & 255)] if c < 0x110000 else 0


cdef TextView text_view(str s) except *:
    cdef TextView v
    PyUnicode_READY(s)
    v.data = PyUnicode_DATA(s)
    v.kind = PyUnicode_KIND(s)
    v.length = PyUnicode_GET_LENGTH(s)
    return v


# ---------------------------------------------------------------- GPT-2 pattern
# The scan is pattern_scan.hpp's GPT-2 family, over the str's code units; two class tables.

cdef PatternClasses REGEX_GPT2        # the `regex` package's classes (FLAGS)
cdef PatternClasses TOKENIZERS_GPT2   # tokenizers' regex engine's (TKCLS)
REGEX_GPT2.init(FLAGS)
TOKENIZERS_GPT2.init(TKCLS)


cdef inline size_t gpt2_ends(TextView text, size_t a, size_t end, size_t* ends,
                             const PatternClasses& cls) noexcept nogil:
    if text.kind == 1:
        return pattern_piece_ends_units(cls, FAMILY_GPT2, <const uint8_t*>text.data, a, end, ends, 64)
    if text.kind == 2:
        return pattern_piece_ends_units(cls, FAMILY_GPT2, <const uint16_t*>text.data, a, end, ends, 64)
    return pattern_piece_ends_units(cls, FAMILY_GPT2, <const uint32_t*>text.data, a, end, ends, 64)


cdef bint gpt2_run(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces,
                   const PatternClasses& cls) noexcept nogil:
    """Appends the pieces of text[begin:end]; False when memory ran out (grow.hpp)."""
    cdef size_t ends[64]
    cdef size_t a = begin, k, count
    cdef Piece p
    while a < <size_t>end:
        count = gpt2_ends(text, a, end, ends, cls)
        for k in range(count):
            p.start = p.norm_start = a
            p.end = p.norm_end = ends[k]
            if not grow_push[Piece](pieces, p):
                return False
            a = ends[k]
    return True


cdef bint gpt2_pieces(TextView text, Py_ssize_t begin, Py_ssize_t end, vector[Piece]& pieces) noexcept nogil:
    return gpt2_run(text, begin, end, pieces, REGEX_GPT2)


cdef bint gpt2_pieces_tokenizers(TextView text, Py_ssize_t begin, Py_ssize_t end,
                                 vector[Piece]& pieces) noexcept nogil:
    return gpt2_run(text, begin, end, pieces, TOKENIZERS_GPT2)


cdef const uint8_t* gpt2_tokenizers_classes() noexcept nogil:
    return TKCLS


cdef const uint8_t* gpt2_regex_classes() noexcept nogil:
    return FLAGS


cdef const uint8_t* PATCLS = NULL    # pattern_scan.hpp's classes, as tokenizers' regex engine has them


cdef _load_pattern_classes():
    """Point PATCLS at unicode_tables.pattern_classes() (once, at import, like _load_tables)."""
    global PATCLS
    from tokkit._native.unicode_tables import pattern_classes

    table = pattern_classes()
    _keep["pattern_classes"] = table
    cdef const uint8_t[::1] view = table
    PATCLS = &view[0]


_load_pattern_classes()


cdef const uint8_t* pattern_tokenizers_classes() noexcept nogil:
    return PATCLS


# ---------------------------------------------------------------- BERT normalize + pre-tokenize
# Per original character: clean_text (delete / space), handle_chinese_chars (pad), strip_accents,
# lowercase; each resulting character is fed to the pre-tokenizer, which closes the open piece at
# whitespace and isolates punctuation. Every emitted character carries the span of the original
# character it came from, as tokenizers' alignments do. strip_accents is NFD of the whole string
# then dropping Mn: non-starters are held in a run, put in canonical order when a starter (or the
# end) arrives, and, as in tokenizers, the spans stay where they were (alignments are positional).

cdef struct BertState:
    vector[Py_UCS4]* norm
    vector[Py_ssize_t]* ostart      # NULL when the caller does not want per-character spans
    vector[Py_ssize_t]* oend
    vector[Piece]* pieces
    Py_ssize_t open_norm            # norm index where the open piece starts, -1 if none
    Py_ssize_t open_orig            # original start of the open piece
    Py_ssize_t last_end             # original end of its last character
    vector[uint32_t]* run           # strip_accents: pending non-starters ...
    vector[Py_ssize_t]* run_pos     # ... and the original character each came from
    Py_ssize_t run_base             # the last original position consumed before the run
    Py_ssize_t last_first           # the last original position consumed (NFD input order)
    bint lower
    bint oom                        # memory ran out: the scan stops, its outputs are not to be read


cdef inline void bert_close(BertState* st, Py_ssize_t norm_end) noexcept nogil:
    cdef Piece p
    if st.open_norm >= 0:
        p.norm_start = st.open_norm
        p.norm_end = norm_end
        p.start = st.open_orig
        p.end = st.last_end
        if not grow_push[Piece](st.pieces[0], p):
            st.oom = True
        st.open_norm = -1


cdef inline void bert_emit(BertState* st, Py_UCS4 c, Py_ssize_t i) noexcept nogil:
    cdef uint8_t f = flags_of(c)
    cdef Py_ssize_t k = st.norm.size()
    cdef Piece p
    if not grow_push[Py_UCS4](st.norm[0], c):
        st.oom = True
    if st.ostart != NULL and not (grow_push[Py_ssize_t](st.ostart[0], i) and grow_push[Py_ssize_t](st.oend[0], i + 1)):
        st.oom = True
    if f & B_SPLIT:
        bert_close(st, k)
    elif f & B_PUNCT:
        bert_close(st, k)
        p.norm_start = k
        p.norm_end = k + 1
        p.start = i
        p.end = i + 1
        if not grow_push[Piece](st.pieces[0], p):
            st.oom = True
    else:
        if st.open_norm < 0:
            st.open_norm = k
            st.open_orig = i
        st.last_end = i + 1


cdef inline void emit_lower(BertState* st, uint32_t c, Py_ssize_t i) noexcept nogil:
    cdef const uint32_t* e
    cdef uint32_t k
    if st.lower:
        if c < 128:
            if 65 <= c <= 90:
                c += 32
        else:
            e = mapped(LOWER1, LOWER2, c)
            if e != NULL:
                for k in range(e[0]):
                    bert_emit(st, e[1 + k], i)
                return
    bert_emit(st, c, i)


cdef inline void run_swap(BertState* st, size_t a, size_t b) noexcept nogil:
    cdef uint32_t x = st.run[0][a]
    cdef Py_ssize_t p = st.run_pos[0][a]
    st.run[0][a] = st.run[0][b]
    st.run_pos[0][a] = st.run_pos[0][b]
    st.run[0][b] = x
    st.run_pos[0][b] = p


cdef void flush_run(BertState* st) noexcept nogil:
    """Emit the pending non-starters as tokenizers' NFD does: stable-sorted by combining class,
    entries that began an original character (FIRST) re-consuming the original positions in order,
    the others sharing the last consumed one; then drop Mn."""
    cdef vector[uint32_t]* run = st.run
    cdef size_t n = run.size(), a, b, k, used = 0
    cdef size_t count[257]
    cdef vector[uint32_t] tmp
    cdef vector[Py_ssize_t] tmp_pos, firsts
    cdef Py_ssize_t cur = st.run_base
    if n == 1:                          # the common case: one mark after its base letter
        if not (mark_of(run[0][0] & CP) & MN):
            emit_lower(st, run[0][0] & CP, st.run_pos[0][0] if run[0][0] & FIRST else cur)
        run.clear()
        st.run_pos.clear()
        return
    for a in range(n):
        if run[0][a] & FIRST and not grow_push[Py_ssize_t](firsts, st.run_pos[0][a]):
            st.oom = True
            return
    if n <= 16:                         # insertion sort: runs are usually one or two marks
        for a in range(1, n):
            b = a
            while b > 0 and (mark_of(run[0][b - 1] & CP) & 0xFF) > (mark_of(run[0][b] & CP) & 0xFF):
                run_swap(st, b - 1, b)
                b -= 1
    else:                               # counting sort: linear even for a million marks
        for k in range(257):
            count[k] = 0
        for a in range(n):
            count[(mark_of(run[0][a] & CP) & 0xFF) + 1] += 1
        for k in range(1, 257):
            count[k] += count[k - 1]
        if not (grow_resize(tmp, n) and grow_resize(tmp_pos, n)):
            st.oom = True
            return
        for a in range(n):
            k = mark_of(run[0][a] & CP) & 0xFF
            tmp[count[k]] = run[0][a]
            tmp_pos[count[k]] = st.run_pos[0][a]
            count[k] += 1
        run.swap(tmp)
        st.run_pos.swap(tmp_pos)
    for a in range(n):
        if run[0][a] & FIRST:
            cur = firsts[used]
            used += 1
        if not (mark_of(run[0][a] & CP) & MN):
            emit_lower(st, run[0][a] & CP, cur)
    run.clear()
    st.run_pos.clear()


cdef inline void strip_one(BertState* st, uint32_t x, bint first, Py_ssize_t i) noexcept nogil:
    cdef uint16_t m = mark_of(x)
    if m & 0xFF:
        if st.run.size() == 0:
            st.run_base = st.last_first
        if not (grow_push[uint32_t](st.run[0], x | (FIRST if first else 0)) and grow_push[Py_ssize_t](st.run_pos[0], i)):
            st.oom = True
    else:
        if st.run.size():
            flush_run(st)
        if not (m & MN):
            emit_lower(st, x, i)
    if first:
        st.last_first = i


cdef inline void strip_char(BertState* st, uint32_t c, Py_ssize_t i) noexcept nogil:
    cdef const uint32_t* e = mapped(NFD1, NFD2, c)
    cdef uint32_t k
    if e == NULL:
        strip_one(st, c, True, i)
    else:
        for k in range(e[0]):
            strip_one(st, e[1 + k], k == 0, i)


cdef inline void emit_space(BertState* st, Py_ssize_t i, bint strip) noexcept nogil:
    if strip and st.run.size():
        flush_run(st)
    st.last_first = i
    bert_emit(st, CH_SPACE, i)


cdef void bert_scan(const char_t* s, Py_ssize_t n, const BertOptions* o, BertState* st) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint32_t c
    cdef uint8_t f
    cdef bint cjk, strip = o.strip_accents
    st.open_norm = -1
    st.lower = o.lowercase
    st.last_first = 0
    st.oom = False
    for i in range(n):
        if st.oom:
            return
        c = s[i]
        f = flags_of(c)
        if o.clean_text:
            if f & B_REMOVE:
                continue
            if f & B_CLEANSP:
                emit_space(st, i, strip)
                continue
        if c < 128:          # ASCII: a starter with no decomposition, no CJK, simple case
            if strip and st.run.size():
                flush_run(st)
            st.last_first = i
            if st.lower and 65 <= c <= 90:
                c += 32
            bert_emit(st, c, i)
            continue
        cjk = o.handle_chinese_chars and (f & B_CJK)
        if cjk:
            emit_space(st, i, strip)
        if strip:
            strip_char(st, c, i)
        else:
            emit_lower(st, c, i)
        if cjk:
            emit_space(st, i, strip)
    if strip and st.run.size():
        flush_run(st)
    bert_close(st, st.norm.size())


cdef void bert_ascii_actions(const BertOptions* o, uint8_t* act, uint8_t* out) noexcept nogil:
    """What bert_scan does with each ASCII character under options o (see text.pxd)."""
    cdef uint32_t c, d
    cdef uint8_t f
    for c in range(128):
        f = flags_of(c)
        out[c] = <uint8_t>c
        if o.clean_text and f & B_REMOVE:
            act[c] = BERT_DROP
            continue
        if o.clean_text and f & B_CLEANSP:
            act[c] = BERT_SPLIT
            continue
        d = c + 32 if o.lowercase and 65 <= c <= 90 else c
        f = flags_of(d)
        out[c] = <uint8_t>d
        act[c] = BERT_SPLIT if f & B_SPLIT else (BERT_PUNCT if f & B_PUNCT else BERT_WORD)


cdef void bert_run(TextView text, const BertOptions* opts, BertState* st) noexcept nogil:
    if text.kind == 1:
        bert_scan(<const uint8_t*>text.data, text.length, opts, st)
    elif text.kind == 2:
        bert_scan(<const uint16_t*>text.data, text.length, opts, st)
    else:
        bert_scan(<const uint32_t*>text.data, text.length, opts, st)


cdef bint bert_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                      vector[Py_ssize_t]& orig_start, vector[Py_ssize_t]& orig_end,
                      vector[Piece]& pieces) noexcept nogil:
    cdef BertState st
    cdef vector[uint32_t] run
    cdef vector[Py_ssize_t] run_pos
    st.norm = &norm
    st.ostart = &orig_start
    st.oend = &orig_end
    st.pieces = &pieces
    st.run = &run
    st.run_pos = &run_pos
    bert_run(text, opts, &st)
    return not st.oom


cdef bint bert_norm_pieces(TextView text, const BertOptions* opts, vector[Py_UCS4]& norm,
                           vector[Piece]& pieces) noexcept nogil:
    cdef BertState st
    cdef vector[uint32_t] run
    cdef vector[Py_ssize_t] run_pos
    st.norm = &norm
    st.ostart = NULL
    st.oend = NULL
    st.pieces = &pieces
    st.run = &run
    st.run_pos = &run_pos
    bert_run(text, opts, &st)
    return not st.oom



cdef void bert_normalize(const uint32_t* c, size_t n, int clean_text, int handle_chinese_chars, int strip_accents,
                         int lowercase, vector[Py_UCS4]& out, vector[Py_ssize_t]& source) noexcept nogil:
    """BertNormalizer alone over c[0:n], for the general path (pipeline_text.hpp): bert_pieces'
    normalized chars and the start of each one's span, the index of the char of c it comes from (the
    pre-tokenizer's pieces are left out). Running out of memory throws std::bad_alloc on to the
    pipeline, which catches it (pipeline.pyx's `except +` entry points)."""
    cdef TextView t
    cdef BertOptions o
    cdef vector[Py_ssize_t] ends
    cdef vector[Piece] pieces
    t.data = c
    t.kind = 4
    t.length = n
    o.clean_text, o.handle_chinese_chars = clean_text, handle_chinese_chars
    o.strip_accents, o.lowercase = strip_accents, lowercase
    if not bert_pieces(t, &o, out, source, ends, pieces):
        throw_bad_alloc()
