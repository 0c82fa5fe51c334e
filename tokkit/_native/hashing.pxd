# The one hash of short byte strings, shared by the word counter's table and the encoder's tables.
from libc.stdint cimport uint64_t
from libc.string cimport memcpy


cdef inline uint64_t hash_bytes(const char* p, Py_ssize_t n) noexcept nogil:
    """A fast 64-bit hash of short byte strings (multiply-xorshift over 8-byte words)."""
    cdef uint64_t h = <uint64_t>n * 0x9E3779B97F4A7C15ULL
    cdef uint64_t w
    while n >= 8:
        memcpy(&w, p, 8)  # compiles to one unaligned load
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
        p += 8
        n -= 8
    if n > 0:
        w = 0
        memcpy(&w, p, n)
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL
        h ^= h >> 31
    h *= 0x94D049BB133111EBULL
    h ^= h >> 29
    return h
