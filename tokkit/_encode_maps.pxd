# Read-only hash tables shared by the encode kernels: built with the GIL, then only read, so any
# number of threads may look up at once without locks.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector

cdef class StrMap:
    # bytes -> int32 id, open addressing over a power-of-two slot array.
    cdef vector[int32_t] slots
    cdef vector[uint64_t] hashes
    cdef vector[int64_t] offs
    cdef vector[char] blob
    cdef vector[int32_t] values
    cdef uint64_t mask
    cdef Py_ssize_t count
    cdef int32_t get(self, const char* p, Py_ssize_t n) noexcept nogil

cdef class PairMap:
    # (left id, right id) -> (rank, merged id), packed as rank << 32 | merged id; -1 when absent.
    cdef vector[uint64_t] keys
    cdef vector[int64_t] vals
    cdef uint64_t mask
    cdef int64_t get(self, int32_t a, int32_t b) noexcept nogil
