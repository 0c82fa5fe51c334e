"""Read-only hash tables for the encode kernels: token bytes -> id, and merge pair -> (rank, id).

>>> m = StrMap([b"ab", b"c"], [7, 9])
>>> m.lookup(b"ab"), m.lookup(b"x")
(7, -1)
>>> PairMap([(1, 2)], [5]).lookup(1, 2)
(0, 5)
"""
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy
from libcpp.vector cimport vector

cdef uint64_t EMPTY_KEY = 0xFFFFFFFFFFFFFFFFULL


cdef inline uint64_t hash_bytes(const char* p, Py_ssize_t n) noexcept nogil:
    # A multiply-xorshift hash over 8-byte words: tokens are short, so this stays a few cycles.
    cdef uint64_t h = 0x9E3779B97F4A7C15ULL ^ <uint64_t>n
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p, 8)
        h = (h ^ w) * 0xff51afd7ed558ccdULL
        h ^= h >> 32
        p += 8
        n -= 8
    w = 0
    if n:
        memcpy(&w, p, n)
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL
    return h ^ (h >> 29)


cdef inline uint64_t slots_for(Py_ssize_t n) noexcept:
    cdef uint64_t size = 16
    while size < <uint64_t>(2 * n + 1):
        size <<= 1
    return size


cdef class StrMap:
    """bytes -> id; the first of two equal keys wins."""

    def __cinit__(self, keys, values):
        cdef uint64_t size = slots_for(len(keys))
        cdef bytes key
        cdef Py_ssize_t n, k
        cdef uint64_t h, i
        self.mask = size - 1
        self.slots.assign(size, -1)
        self.offs.push_back(0)
        self.count = 0
        for key, value in zip(keys, values):
            n = len(key)
            if self.get(key, n) >= 0:
                continue
            h = hash_bytes(key, n)
            for k in range(n):
                self.blob.push_back(key[k])
            self.offs.push_back(self.blob.size())
            self.hashes.push_back(h)
            self.values.push_back(value)
            i = h & self.mask
            while self.slots[i] >= 0:
                i = (i + 1) & self.mask
            self.slots[i] = self.count
            self.count += 1

    cdef int32_t get(self, const char* p, Py_ssize_t n) noexcept nogil:
        cdef uint64_t h = hash_bytes(p, n)
        cdef uint64_t i = h & self.mask
        cdef int32_t e
        while True:
            e = self.slots[i]
            if e < 0:
                return -1
            if self.hashes[e] == h and self.offs[e + 1] - self.offs[e] == n:
                if n == 0 or memcmp(self.blob.data() + self.offs[e], p, n) == 0:
                    return self.values[e]
            i = (i + 1) & self.mask

    def lookup(self, bytes key) -> int:
        return self.get(key, len(key))

    def __len__(self):
        return self.count


cdef inline uint64_t pair_key(int32_t a, int32_t b) noexcept nogil:
    return (<uint64_t><uint32_t>a << 32) | <uint32_t>b


cdef inline uint64_t mix(uint64_t k) noexcept nogil:
    k = (k ^ (k >> 31)) * 0x9E3779B97F4A7C15ULL
    return k ^ (k >> 29)


cdef class PairMap:
    """(left, right) -> (rank, merged id); rank = position in `pairs`; the first of two equal pairs wins."""

    def __cinit__(self, pairs, merged):
        cdef uint64_t size = slots_for(len(pairs))
        cdef uint64_t key, i
        self.mask = size - 1
        self.keys.assign(size, EMPTY_KEY)
        self.vals.assign(size, -1)
        for rank, ((a, b), new) in enumerate(zip(pairs, merged)):
            key = pair_key(a, b)
            i = mix(key) & self.mask
            while self.keys[i] != EMPTY_KEY and self.keys[i] != key:
                i = (i + 1) & self.mask
            if self.keys[i] == EMPTY_KEY:
                self.keys[i] = key
                self.vals[i] = (<int64_t>rank << 32) | <uint32_t><int32_t>new

    cdef int64_t get(self, int32_t a, int32_t b) noexcept nogil:
        cdef uint64_t key = pair_key(a, b)
        cdef uint64_t i = mix(key) & self.mask
        while True:
            if self.keys[i] == key:
                return self.vals[i]
            if self.keys[i] == EMPTY_KEY:
                return -1
            i = (i + 1) & self.mask

    def lookup(self, int a, int b):
        cdef int64_t v = self.get(a, b)
        return None if v < 0 else (int(v >> 32), int(<uint32_t>v))
