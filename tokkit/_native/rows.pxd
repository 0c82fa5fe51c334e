# Per-token outputs of many encoded texts, in flat arrays: row r holds tokens ptr[r]:ptr[r+1].
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector
from tokkit._native.grow cimport grow_push

cdef class Rows:
    cdef vector[int32_t] ids, starts, ends, words
    cdef vector[int64_t] ptr
    cdef bint with_offsets              # starts and ends (and words) are kept
    cdef bint with_words                # words are kept (always so when with_offsets)
    cdef bint oom                       # memory ran out while a kernel wrote these: drop them
    cdef Py_ssize_t view_shape[1]       # the ids as a buffer (see Rows.flat)
    cdef Py_ssize_t view_strides[1]
    cdef inline void push(self, int32_t idx, Py_ssize_t start, Py_ssize_t end, int32_t word) noexcept nogil:
        if not grow_push(self.ids, idx):
            self.oom = True
        if self.with_words and not grow_push(self.words, word):
            self.oom = True
        if self.with_offsets and not (grow_push(self.starts, <int32_t>start) and grow_push(self.ends, <int32_t>end)):
            self.oom = True
    cdef inline void truncate(self, Py_ssize_t size) noexcept nogil:
        self.ids.resize(size)
        if self.with_words:
            self.words.resize(size)
        if self.with_offsets:
            self.starts.resize(size)
            self.ends.resize(size)
