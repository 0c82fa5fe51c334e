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

        The ids are copied once with memcpy; no Python object is made per token.
        """
        ids = np.empty(self.ids.size(), dtype=np.uint32)
        cdef uint32_t[::1] view = ids
        if self.ids.size():
            memcpy(&view[0], self.ids.data(), self.ids.size() * sizeof(uint32_t))
        return ids, _copy[int64_t](self.ptr, np.int64)


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
