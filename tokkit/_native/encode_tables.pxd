# The encode kernels' tables (vocab_tables.hpp, added_tokens.hpp) and the shared model loops
# (bpe_merge.hpp, wordpiece.hpp). StrMap and PairMap are built with the GIL, then only read, so any
# number of threads may look up at once without locks.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.vector cimport vector

cdef extern from "vocab_tables.hpp" namespace "tokkit" nogil:
    cdef struct Tok:
        int32_t id
        uint32_t start, end
    cdef struct BytesKey:
        uint64_t h, head
    BytesKey bytes_key(const uint8_t* p, size_t n)
    cdef cppclass TokenTable:
        void add(const uint8_t* p, size_t n, int32_t id, bint prefixes) except +
        int32_t get(const uint8_t* p, size_t n)
        size_t size()
    cdef cppclass PairTable:
        void add(int32_t a, int32_t b, int32_t rank, int32_t merged) except +
        int64_t get(int32_t a, int32_t b)
    cdef cppclass TokenMemo:
        const Tok* find(const uint8_t* p, size_t n, BytesKey k, size_t* count)
        void add(const uint8_t* p, size_t n, BytesKey k, const Tok* toks, size_t count)
        void clear()

cdef extern from "bpe_merge.hpp" namespace "tokkit" nogil:
    void bpe_merge(const PairTable& merges, vector[Tok]& syms)
    bool bpe_merge_nothrow(const PairTable& merges, vector[Tok]& syms)  # False: out of memory

cdef extern from "wordpiece.hpp" namespace "tokkit" nogil:
    bool wordpiece_two(const TokenTable& first, const TokenTable& cont, const uint8_t* p, const int32_t* bpos,
                       size_t n, vector[Tok]& out)
    int wordpiece_two_nothrow(const TokenTable& first, const TokenTable& cont, const uint8_t* p,
                              const int32_t* bpos, size_t n, vector[Tok]& out)  # 1, 0 unknown, -1 out of memory

cdef extern from "pipeline_text.hpp" namespace "tokkit::pipe" nogil:
    cdef cppclass FlagMap:  # per-code-point class bits, two-stage (tokkit._native.pipeline_tables)
        const uint16_t* stage1
        const uint16_t* stage2

cdef extern from "added_tokens.hpp" namespace "tokkit" nogil:
    cdef struct AddedSpan:
        size_t a, b  # (and `from`, the ordinary text's start, which the fast paths know)
        int32_t index
    cdef cppclass AddedPasses:  # a text's cursor over both passes (raw tokens, then normalized ones)
        pass
    cdef cppclass AddedTokens:
        void add(const uint32_t* c, size_t n, int32_t id, bool single_word, bool lstrip, bool rstrip,
                 bool normalized, bool special) except +
        size_t size()
        bool reads_neighbours()
        bool next_in_units[Unit](const Unit* c, size_t n, bool split_specials, const FlagMap& flags,
                                 AddedPasses& st, AddedSpan* out)
        bool next_in_utf8(const uint8_t* p, size_t n, bool split_specials, AddedPasses& st, AddedSpan* out)
        int32_t id_of(const AddedSpan& s)


cdef class StrMap:
    # bytes -> int32 id (vocab_tables.hpp's TokenTable)
    cdef TokenTable table


cdef class PairMap:
    # (left id, right id) -> (rank, merged id), packed as rank << 32 | merged id; -1 when absent
    cdef PairTable table
