# The one hash (hash_table.hpp) and the tables keyed by short byte strings held inline
# (short_keys.hpp): the encoder's piece table, the word counter's short-word table and its table
# of words of any length.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libcpp cimport bool
from libcpp.vector cimport vector

cdef extern from "hash_table.hpp" namespace "tokkit" nogil:
    void key_words(const uint8_t* p, size_t n, bint room, uint64_t* k0, uint64_t* k1)
    uint64_t hash_words(uint64_t k0, uint64_t k1, uint64_t n)
    uint64_t hash_bytes(const void* p, size_t n)
    void prefetch_line(const void* p)

cdef extern from "short_keys.hpp" namespace "tokkit" nogil:
    cdef struct PieceEntry:
        int32_t ids[3]
        uint8_t count
    cdef struct PieceKey:
        uint64_t k0, k1, h
    cdef cppclass PieceTable:
        void stage(const uint8_t* p, size_t a, size_t n, const size_t* ends, size_t count, PieceKey* keys)
        size_t emit(const size_t* ends, size_t a, const PieceKey* keys, size_t q, size_t count, int32_t** w)
        const void* slot_address(uint64_t h)
        const PieceEntry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h)
        const int32_t* ids_of(const PieceEntry* e)
        bint insert(uint64_t k0, uint64_t k1, size_t n, uint64_t h, const int32_t* ids, size_t count)
        void clear()
        size_t size()
        void set_max_slots(size_t slots)

    cdef struct CountEntry:
        uint64_t k0, k1
        int64_t count
        uint8_t length
    cdef cppclass CountTable:
        const void* slot_address(uint64_t h)
        CountEntry* find(uint64_t k0, uint64_t k1, size_t n, uint64_t h)
        CountEntry* add(uint64_t k0, uint64_t k1, size_t n, uint64_t h, bool* full)
        void clear()
        size_t size()
        size_t capacity()
        CountEntry* slot(size_t i)
        void set_max_slots(size_t slots)

    cdef cppclass WordTable:
        vector[uint8_t] arena
        vector[uint64_t] offs
        vector[int64_t] counts
        bool add(const uint8_t* p, size_t n, int64_t count)
        size_t size()
        size_t slot_bytes()
