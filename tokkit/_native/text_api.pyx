"""Python entry points over the compiled text kernels (used by tokkit.text.pretokenize / tokkit.text.normalize).

>>> gpt2_spans_str("I'm here")
[(0, 1), (1, 3), (3, 8)]
>>> pattern_split_utf8("HELLOworld's 12345", FAMILY["o200k"])
["HELLOworld's", ' ', '123', '45']
"""
import numpy as np

from tokkit.errors import OutOfMemory

from cpython.list cimport PyList_GET_ITEM
from cpython.unicode cimport PyUnicode_Check, PyUnicode_CheckExact
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint32_t
from libcpp.vector cimport vector

from tokkit._native.text cimport (FAMILY_CL100K, FAMILY_O200K, FAMILY_QWEN2, BertOptions, PatternClasses, Piece,
                                  TextView, bert_norm_pieces, bert_pieces, gpt2_pieces, gpt2_pieces_tokenizers,
                                  pattern_piece_ends, pattern_piece_ends_units, pattern_tokenizers_classes,
                                  text_view)

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)
    int PyUnicode_READY(object o) except -1


def text_lengths(list texts, str name="texts"):
    """Code-point length of each text (int64); an item that is not a str is a TypeError naming its index.

    Items of a str subclass (numpy.str_, enum members) are replaced in `texts` by plain str copies,
    since the encode kernels read exact str only: pass a list the caller owns.
    One C loop: batch encoders call it on every batch, and a Python loop over 100,000 texts would
    cost milliseconds of serial time before the threads start.

    >>> text_lengths(["ab", ""]).tolist()
    [2, 0]
    """
    cdef Py_ssize_t i, n = len(texts)
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] view = out
    cdef object item
    for i in range(n):
        item = <object>PyList_GET_ITEM(texts, i)
        if not PyUnicode_CheckExact(item):
            if not PyUnicode_Check(item):
                raise TypeError(f"{name}[{i}] must be str, not {type(item).__name__}")
            item = str.__str__(item)  # a plain copy of the subclass's text
            texts[i] = item
        PyUnicode_READY(item)  # a legacy str gets its code points now, so kernels may read it without the GIL
        view[i] = PyUnicode_GET_LENGTH(item)
    return out


cdef vector[Piece] gpt2_run(str text, bint tokenizers_classes):
    cdef TextView v = text_view(text)
    cdef vector[Piece] pieces
    cdef bint done
    with nogil:
        if tokenizers_classes:
            done = gpt2_pieces_tokenizers(v, 0, v.length, pieces)
        else:
            done = gpt2_pieces(v, 0, v.length, pieces)
    if not done:
        raise OutOfMemory(SPLIT_OOM)
    return pieces


def gpt2_spans_str(str text, bint tokenizers_classes=False):
    """Code-point spans of the GPT-2 pattern pieces of `text` (compiled scanner)."""
    return [(p.start, p.end) for p in gpt2_run(text, tokenizers_classes)]


def gpt2_split_str(str text, bint tokenizers_classes=False):
    """The GPT-2 pattern pieces of `text` as strings (compiled scanner)."""
    return [text[p.start:p.end] for p in gpt2_run(text, tokenizers_classes)]


# The families of pattern_scan.hpp by pattern name (tokkit._native.patterns.NAMED's names).
SPLIT_OOM = "out of memory while splitting a text into pieces; nothing of the call was kept"
FAMILY = {"cl100k": FAMILY_CL100K, "llama3": FAMILY_CL100K, "qwen2": FAMILY_QWEN2, "o200k": FAMILY_O200K}
cdef PatternClasses PATTERN_CLASSES
PATTERN_CLASSES.init(pattern_tokenizers_classes())


cdef PatternClasses pattern_classes(int family, int limit, int mode) except *:
    if family not in (FAMILY_CL100K, FAMILY_QWEN2, FAMILY_O200K):
        raise ValueError(f"no compiled scanner for pattern family {family}")
    if limit < 1:
        raise ValueError("limit must be at least 1")
    cdef PatternClasses cls = PATTERN_CLASSES
    if mode >= 0:
        cls.set_mode(mode)
    return cls


def pattern_split_utf8(str text, int family, int limit=64, int mode=-1):
    """The pieces of `text` under a pattern family (FAMILY), by the scanner over its UTF-8.

    `limit` pieces are asked for at a time; `mode` picks how ASCII runs are measured (0 byte by
    byte, 1 SWAR, 2 SSE2; -1 the best this machine has).
    """
    cdef PatternClasses cls = pattern_classes(family, limit, mode)
    cdef bytes data = text.encode("utf-8", "surrogatepass")
    cdef const uint8_t* p = data
    cdef size_t n = len(data), a = 0, k, count
    cdef vector[size_t] ends = vector[size_t](limit)
    pieces = []
    while a < n:
        count = pattern_piece_ends(cls, family, p, a, n, &ends[0], limit)
        for k in range(count):
            pieces.append(data[a:ends[k]].decode("utf-8", "surrogatepass"))
            a = ends[k]
    return pieces


def pattern_ends_utf8(const uint8_t[::1] data, int family, int limit=256):
    """The end offsets (int64) of the pieces of UTF-8 `data` under a pattern family: no object per piece.

    >>> pattern_ends_utf8(b"a  b", FAMILY["cl100k"]).tolist()
    [1, 2, 4]
    """
    cdef PatternClasses cls = pattern_classes(family, limit, -1)
    cdef size_t n = data.shape[0], a = 0, k, count, total = 0
    out = np.empty(n, dtype=np.int64)   # at most one piece per byte
    cdef int64_t[::1] view = out
    cdef vector[size_t] ends = vector[size_t](limit)
    with nogil:
        while a < n:
            count = pattern_piece_ends(cls, family, &data[0], a, n, &ends[0], limit)
            for k in range(count):
                view[total + k] = ends[k]
            total += count
            a = ends[count - 1]
    return out[:total].copy()


def pattern_split_str(str text, int family, int limit=64):
    """The pieces of `text` under a pattern family (FAMILY), by the scanner over its code points."""
    cdef PatternClasses cls = pattern_classes(family, limit, -1)
    cdef TextView v = text_view(text)
    cdef size_t n = v.length, a = 0, k, count
    cdef vector[size_t] ends = vector[size_t](limit)
    pieces = []
    while a < n:
        if v.kind == 1:
            count = pattern_piece_ends_units(cls, family, <const uint8_t*>v.data, a, n, &ends[0], limit)
        elif v.kind == 2:
            count = pattern_piece_ends_units(cls, family, <const uint16_t*>v.data, a, n, &ends[0], limit)
        else:
            count = pattern_piece_ends_units(cls, family, <const uint32_t*>v.data, a, n, &ends[0], limit)
        for k in range(count):
            pieces.append(text[a:ends[k]])
            a = ends[k]
    return pieces


cdef BertOptions make_options(bint clean_text, bint handle_chinese_chars, bint strip_accents, bint lowercase):
    cdef BertOptions o
    o.clean_text = clean_text
    o.handle_chinese_chars = handle_chinese_chars
    o.strip_accents = strip_accents
    o.lowercase = lowercase
    return o


cdef inline str ucs4_str(vector[Py_UCS4]& buf, Py_ssize_t a, Py_ssize_t b):
    if b <= a:
        return ""
    return PyUnicode_FromKindAndData(4, &buf[a], b - a)


def bert_split_str(str text, bint clean_text, bint handle_chinese_chars, bint strip_accents, bint lowercase):
    """[(normalized piece, (start, end) in text's code points)] -- BertNormalizer + BertPreTokenizer."""
    cdef TextView v = text_view(text)
    cdef BertOptions o = make_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    cdef vector[Py_UCS4] norm
    cdef vector[Piece] pieces
    cdef bint done
    with nogil:
        done = bert_norm_pieces(v, &o, norm, pieces)
    if not done:
        raise OutOfMemory(SPLIT_OOM)
    return [(ucs4_str(norm, p.norm_start, p.norm_end), (p.start, p.end)) for p in pieces]


def bert_normalize_str(str text, bint clean_text, bint handle_chinese_chars, bint strip_accents, bint lowercase):
    """BertNormalizer's output for `text`, plus each output character's original start and end lists."""
    cdef TextView v = text_view(text)
    cdef BertOptions o = make_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    cdef vector[Py_UCS4] norm
    cdef vector[Py_ssize_t] ostart, oend
    cdef vector[Piece] pieces
    cdef bint done
    with nogil:
        done = bert_pieces(v, &o, norm, ostart, oend, pieces)
    if not done:
        raise OutOfMemory(SPLIT_OOM)
    return ucs4_str(norm, 0, norm.size()), list(ostart), list(oend)
