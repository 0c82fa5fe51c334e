"""Python entry points over the compiled text kernels (used by tokkit.text.pretokenize / tokkit.text.normalize).

>>> gpt2_spans_str("I'm here")
[(0, 1), (1, 3), (3, 8)]
"""
import numpy as np

from cpython.list cimport PyList_GET_ITEM
from cpython.unicode cimport PyUnicode_Check, PyUnicode_CheckExact
from libc.stdint cimport int64_t
from libcpp.vector cimport vector

from tokkit._native.text cimport (BertOptions, Piece, TextView, bert_norm_pieces, bert_pieces, gpt2_pieces,
                           gpt2_pieces_tokenizers, text_view)

cdef extern from "Python.h":
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    Py_ssize_t PyUnicode_GET_LENGTH(object o)


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
        view[i] = PyUnicode_GET_LENGTH(item)
    return out


cdef vector[Piece] gpt2_run(str text, bint tokenizers_classes):
    cdef TextView v = text_view(text)
    cdef vector[Piece] pieces
    with nogil:
        if tokenizers_classes:
            gpt2_pieces_tokenizers(v, 0, v.length, pieces)
        else:
            gpt2_pieces(v, 0, v.length, pieces)
    return pieces


def gpt2_spans_str(str text, bint tokenizers_classes=False):
    """Code-point spans of the GPT-2 pattern pieces of `text` (compiled scanner)."""
    return [(p.start, p.end) for p in gpt2_run(text, tokenizers_classes)]


def gpt2_split_str(str text, bint tokenizers_classes=False):
    """The GPT-2 pattern pieces of `text` as strings (compiled scanner)."""
    return [text[p.start:p.end] for p in gpt2_run(text, tokenizers_classes)]


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
    with nogil:
        bert_norm_pieces(v, &o, norm, pieces)
    return [(ucs4_str(norm, p.norm_start, p.norm_end), (p.start, p.end)) for p in pieces]


def bert_normalize_str(str text, bint clean_text, bint handle_chinese_chars, bint strip_accents, bint lowercase):
    """BertNormalizer's output for `text`, plus each output character's original start and end lists."""
    cdef TextView v = text_view(text)
    cdef BertOptions o = make_options(clean_text, handle_chinese_chars, strip_accents, lowercase)
    cdef vector[Py_UCS4] norm
    cdef vector[Py_ssize_t] ostart, oend
    cdef vector[Piece] pieces
    with nogil:
        bert_pieces(v, &o, norm, ostart, oend, pieces)
    return ucs4_str(norm, 0, norm.size()), list(ostart), list(oend)
