"""Flat per-token outputs of many texts (Rows) and their conversion to lists and numpy arrays.

>>> r = Rows()
>>> rows_to_lists(r)
[]
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint32_t
from cpython.list cimport PyList_New, PyList_SET_ITEM
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM
from cpython.buffer cimport PyBUF_FORMAT
from libc.string cimport memcpy


cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void *op)


cdef class Rows:
    """Tokens of texts; row r holds tokens ptr[r]:ptr[r+1] of ids / starts / ends / words."""

    def __len__(self):
        return max(0, <Py_ssize_t>self.ptr.size() - 1)

    def arrays(self) -> dict:
        """Copies as numpy arrays: ids, starts, ends, words (int32, those kept) and ptr (int64)."""
        out = {"ptr": _copy[int64_t](self.ptr, np.int64), "ids": _copy[int32_t](self.ids, np.int32)}
        if self.with_words:
            out["words"] = _copy[int32_t](self.words, np.int32)
        if self.with_offsets:
            out.update(starts=_copy[int32_t](self.starts, np.int32), ends=_copy[int32_t](self.ends, np.int32))
        return out

    def flat(self) -> tuple:
        """(ids as uint32, row pointers as int64): one row per text, tokens ptr[r]:ptr[r+1].

        The ids array is this object's own buffer, not a copy (ids are never negative: byte-level
        and char BPE drop unknown pieces, WordPiece always has [UNK]); it keeps this object alive.
        No Python object is made per token.
        """
        ids = np.frombuffer(self, dtype=np.uint32) if self.ids.size() else np.empty(0, dtype=np.uint32)
        return ids, _copy[int64_t](self.ptr, np.int64)

    def __getbuffer__(self, Py_buffer* buf, int flags):
        # the ids as one writable run of uint32; the vector is never resized while one is out
        self.view_shape[0] = self.ids.size()
        self.view_strides[0] = sizeof(uint32_t)
        buf.buf = <void*>self.ids.data()
        buf.obj = self
        buf.len = self.ids.size() * sizeof(uint32_t)
        buf.readonly = 0
        buf.itemsize = sizeof(uint32_t)
        buf.format = NULL
        if flags & PyBUF_FORMAT:
            buf.format = b"I"
        buf.ndim = 1
        buf.shape = self.view_shape
        buf.strides = self.view_strides
        buf.suboffsets = NULL
        buf.internal = NULL


ctypedef fused index_t:
    int32_t
    int64_t


cdef object _copy(vector[index_t]& v, dtype):
    """A numpy copy of `v` (dtype must match index_t)."""
    arr = np.empty(v.size(), dtype=dtype)
    cdef index_t[::1] view = arr
    if v.size():
        memcpy(&view[0], v.data(), v.size() * sizeof(index_t))
    return arr


def rows_to_lists(Rows rows, tuple ints=None) -> list:
    """The ids of each row as a list of ints; `ints[i]` (when given) is the int object reused for id i,
    which spares allocating millions of int objects while the GIL is held.

    The row lists are left out of the cycle collector: they hold only ints, so they cannot close a
    cycle, and a collector pass over a batch's rows (millions of ids, walked while every thread
    waits for the GIL) cost 20-50 ms per 10 MB batch, the largest serial part of encode_batch.
    They are ordinary lists otherwise; a row its user later fills with containers is still freed
    by reference counting, only a cycle through it would not be found.
    """
    cdef Py_ssize_t r, k, n = len(rows), size
    cdef Py_ssize_t count = 0 if ints is None else len(ints)
    cdef int32_t v
    cdef list out = PyList_New(n)
    cdef list row
    cdef object item
    for r in range(n):
        size = rows.ptr[r + 1] - rows.ptr[r]
        row = PyList_New(size)
        for k in range(size):
            v = rows.ids[rows.ptr[r] + k]
            if 0 <= v < count:
                item = <object>PyTuple_GET_ITEM(ints, v)
            else:
                item = v
            Py_INCREF(item)
            PyList_SET_ITEM(row, k, item)
        PyObject_GC_UnTrack(<void*>row)  # see the docstring
        Py_INCREF(row)
        PyList_SET_ITEM(out, r, row)
    return out


def place_runs(int32_t[:, ::1] dst, const int32_t[::1] src, const int64_t[::1] starts, const int64_t[::1] lengths,
               const int64_t[::1] col0, const int64_t[::1] add=None, int32_t fill=0):
    """Row r of `dst` gets, from column col0[r], lengths[r] values: src[starts[r]:starts[r] + lengths[r]]
    (plus add[r] when given), or `fill` when src is None. Every run must fit its row and src.

    The padded-batch builder (tokkit.encode) places each row's tokens this way: one short copy per
    row instead of fancy indexing through a (row, column) pair per token.

    >>> import numpy as np
    >>> m = np.zeros((2, 4), dtype=np.int32)
    >>> place_runs(m, np.arange(5, dtype=np.int32), np.array([0, 3]), np.array([2, 2]), np.array([1, 0]))
    >>> m.tolist()
    [[0, 0, 1, 0], [3, 4, 0, 0]]
    """
    cdef Py_ssize_t rows = dst.shape[0], width = dst.shape[1], r, k, n, c, s
    cdef int64_t plus
    if starts.shape[0] != rows and src is not None or lengths.shape[0] != rows or col0.shape[0] != rows \
            or (add is not None and add.shape[0] != rows):
        raise ValueError("place_runs needs one start, length, column (and add) per row")
    for r in range(rows):
        n, c = lengths[r], col0[r]
        if n < 0 or c < 0 or c + n > width or (src is not None and (starts[r] < 0 or starts[r] + n > src.shape[0])):
            raise ValueError(f"row {r}: a run of {n} from column {c} does not fit")
    with nogil:
        for r in range(rows):
            n, c = lengths[r], col0[r]
            if src is None:
                for k in range(n):
                    dst[r, c + k] = fill
            else:
                s = starts[r]
                plus = add[r] if add is not None else 0
                for k in range(n):
                    dst[r, c + k] = <int32_t>(src[s + k] + plus)
