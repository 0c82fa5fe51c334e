# Read-only hash tables shared by the encode kernels: built with the GIL, then only read, so any
# number of threads may look up at once without locks.
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdint cimport uint8_t
from libcpp.vector cimport vector
from tokkit._native.hashing cimport hash_bytes


cdef inline uint64_t load_tail(const char* p, Py_ssize_t n) noexcept nogil:
    # n < 8 bytes as a little-endian word, without a call to memcpy
    cdef uint64_t w = 0
    cdef Py_ssize_t k
    for k in range(n):
        w |= (<uint64_t>(<uint8_t>p[k])) << (8 * k)
    return w


cdef inline uint64_t load_head(const char* p, Py_ssize_t n) noexcept nogil:
    # the first 8 bytes (fewer when n < 8, zero-padded)
    if n >= 8:
        return (<const uint64_t*>p)[0] if (<size_t>p) % 8 == 0 else load_tail(p, 8)
    return load_tail(p, n)



cdef struct Slot:
    uint64_t hash
    uint64_t head      # the key's first 8 bytes, zero-padded: short keys compare without touching blob
    int64_t off        # where the key's bytes start in blob
    int32_t length     # -1: empty slot
    int32_t value

cdef struct PairSlot:
    uint64_t key
    int64_t val

cdef class StrMap:
    # bytes -> int32 id, open addressing over a power-of-two array of slots (one cache line per probe).
    cdef vector[Slot] slots
    cdef vector[char] blob
    cdef uint64_t mask
    cdef Py_ssize_t count
    cdef int32_t get(self, const char* p, Py_ssize_t n) noexcept nogil

cdef struct CacheSlot:
    uint64_t hash
    int64_t key_off    # key bytes: keys[key_off:key_off+length]
    int64_t val_off    # arena[val_off] = count, then (id, start, end) per token
    int32_t length
    int32_t used

cdef class PieceCache:
    # A bounded cache of merged pieces for ONE thread (no lock): bytes -> (id, start, end) triples.
    cdef vector[CacheSlot] slots
    cdef vector[char] keys
    cdef vector[int32_t] arena
    cdef uint64_t mask
    cdef Py_ssize_t count, limit
    cdef int64_t find(self, const char* p, Py_ssize_t n, uint64_t h) noexcept nogil
    cdef void clear(self) noexcept nogil
    cdef void grow(self) noexcept nogil
    cdef void add(self, const char* p, Py_ssize_t n, uint64_t h, const int32_t* ids, const int32_t* starts,
                  const int32_t* ends, Py_ssize_t count) noexcept nogil

cdef class PairMap:
    # (left id, right id) -> (rank, merged id), packed as rank << 32 | merged id; -1 when absent.
    cdef vector[PairSlot] slots
    cdef uint64_t mask
    cdef int64_t get(self, int32_t a, int32_t b) noexcept nogil
