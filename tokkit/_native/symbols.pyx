"""Character statistics and symbolization of counted words, for the trainers.

Words come as the WordCounter's arrays: a UTF-8 blob and int64 offsets (n + 1).

>>> import numpy as np
>>> blob, offsets = "ab".encode() + "c".encode(), np.array([0, 2, 3])
>>> sorted(char_counts(blob, offsets, np.array([5, 1])).items())
[(97, 5), (98, 5), (99, 1)]
>>> syms, sym_offsets, kept = symbolize(blob, offsets, first={97: 0}, middle={}, last={98: 1}, single={})
>>> syms.tolist(), sym_offsets.tolist(), kept.tolist()
([0, 1], [0, 2], [0])
"""
from libc.stdint cimport int32_t, int64_t, uint32_t
from libc.string cimport memcpy
from libcpp.vector cimport vector

from tokkit._native.text cimport utf8_check, utf8_decode

import numpy as np

cdef enum:
    NCP = 0x110000


def _words(blob, offsets):
    """Validate (blob, offsets) and return them as (bytes, contiguous int64 array)."""
    if not isinstance(blob, bytes):
        blob = bytes(blob)
    o = np.ascontiguousarray(offsets, dtype=np.int64)
    if o.ndim != 1 or len(o) == 0 or o[0] != 0 or o[-1] != len(blob) or np.any(np.diff(o) < 0):
        raise ValueError("offsets must start at 0, never decrease and end at len(blob)")
    cdef const unsigned char[::1] b = blob if len(blob) else b"\0"
    if len(blob) and utf8_check(&b[0], len(blob)) >= 0:
        raise ValueError("blob is not valid UTF-8")
    return blob, o


def char_counts(blob, offsets, counts):
    """{code point: occurrences weighted by word counts} over all words.

    >>> char_counts(b"aab", [0, 2, 3], [3, 1])
    {97: 6, 98: 1}
    """
    blob, o = _words(blob, offsets)
    c = np.ascontiguousarray(counts, dtype=np.int64)
    if c.shape != (len(o) - 1,):
        raise ValueError("counts must have one entry per word")
    acc = np.zeros(NCP, dtype=np.int64)
    cdef int64_t[::1] av = acc
    cdef const int64_t[::1] ov = o
    cdef const int64_t[::1] cv = c
    cdef const unsigned char* p = blob
    cdef vector[uint32_t] cps
    cdef Py_ssize_t w, k
    with nogil:
        for w in range(cv.shape[0]):
            utf8_decode(p + ov[w], ov[w + 1] - ov[w], cps)
            for k in range(<Py_ssize_t>cps.size()):
                av[cps[k]] += cv[w]
    nz = np.flatnonzero(acc)
    return dict(zip(nz.tolist(), acc[nz].tolist()))


def _table(t, name):
    """A code point -> symbol id table as int32[0x110000] (-1 = absent) from a dict or such an array."""
    if isinstance(t, dict):
        arr = np.full(NCP, -1, dtype=np.int32)
        if t:
            keys = np.fromiter(t.keys(), dtype=np.int64, count=len(t))
            vals = np.fromiter(t.values(), dtype=np.int64, count=len(t))
            if keys.min() < 0 or keys.max() >= NCP or vals.min() < 0 or vals.max() > 0x7FFFFFFF:
                raise ValueError(f"{name}: code points must be in [0, 0x110000) and ids in [0, 2**31)")
            arr[keys] = vals
        return arr
    arr = np.ascontiguousarray(t, dtype=np.int32)
    if arr.shape != (NCP,):
        raise ValueError(f"{name} must be a dict or an int32 array of size 0x110000")
    return arr


def symbolize(blob, offsets, *, first, middle, last, single):
    """Each word as symbol ids: 1 char -> single[c]; else first[c0], middle[c1..], last[c_last].

    The tables are dicts {code point: id} or int32 arrays of size 0x110000 with -1 for absent.
    A word holding any absent character is dropped. Returns (symbols int32, sym_offsets int64
    (n_kept + 1), kept int64: the indices of the words kept).
    """
    blob, o = _words(blob, offsets)
    cdef const int32_t[::1] tf = _table(first, "first")
    cdef const int32_t[::1] tm = _table(middle, "middle")
    cdef const int32_t[::1] tl = _table(last, "last")
    cdef const int32_t[::1] ts = _table(single, "single")
    cdef const int64_t[::1] ov = o
    cdef const unsigned char* p = blob
    cdef vector[uint32_t] cps
    cdef vector[int32_t] syms
    cdef vector[int64_t] soffs
    cdef vector[int64_t] kept
    cdef Py_ssize_t w, k, n, mark
    cdef int32_t s
    cdef bint ok
    soffs.push_back(0)
    with nogil:
        for w in range(ov.shape[0] - 1):
            utf8_decode(p + ov[w], ov[w + 1] - ov[w], cps)
            n = cps.size()
            if n == 0:
                continue
            mark = syms.size()
            ok = True
            for k in range(n):
                if n == 1:
                    s = ts[cps[k]]
                elif k == 0:
                    s = tf[cps[k]]
                elif k == n - 1:
                    s = tl[cps[k]]
                else:
                    s = tm[cps[k]]
                if s < 0:
                    ok = False
                    break
                syms.push_back(s)
            if ok:
                soffs.push_back(syms.size())
                kept.push_back(w)
            else:
                syms.resize(mark)
    return _array(syms, np.int32), _array64(soffs), _array64(kept)


cdef _array(vector[int32_t]& v, dtype):
    out = np.empty(v.size(), dtype=np.int32)
    cdef int32_t[::1] ov = out
    if v.size():
        memcpy(&ov[0], v.data(), v.size() * sizeof(int32_t))
    return out


cdef _array64(vector[int64_t]& v):
    out = np.empty(v.size(), dtype=np.int64)
    cdef int64_t[::1] ov = out
    if v.size():
        memcpy(&ov[0], v.data(), v.size() * sizeof(int64_t))
    return out


def symbolize_bytes(blob, offsets, byte_ids):
    """Byte-level symbols: each byte b of every word -> byte_ids[b] (an int32 array of 256).

    Returns (symbols int32 (len(blob)), offsets int64 (n + 1), unchanged).

    >>> s, o = symbolize_bytes(b"ab", [0, 1, 2], np.arange(256, dtype=np.int32) + 10); s.tolist()
    [107, 108]
    """
    if not isinstance(blob, bytes):
        blob = bytes(blob)
    o = np.ascontiguousarray(offsets, dtype=np.int64)
    if o.ndim != 1 or len(o) == 0 or o[0] != 0 or o[-1] != len(blob):
        raise ValueError("offsets must start at 0 and end at len(blob)")
    ids = np.ascontiguousarray(byte_ids, dtype=np.int32)
    if ids.shape != (256,):
        raise ValueError("byte_ids must be an int32 array of 256 ids")
    return ids[np.frombuffer(blob, dtype=np.uint8)], o.copy()
