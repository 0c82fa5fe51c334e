# cython: language_level=3
# Declarations for tokkit/_native/merge.pyx: the small C++ tables it uses (in merge.hpp)
# and the engine's state. The algorithm itself is in the .pyx.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "merge.hpp":
    uint64_t key "tk_key"(int32_t a, int32_t b) nogil
    int32_t left "tk_left"(uint64_t k) nogil
    int32_t right "tk_right"(uint64_t k) nogil
    double pmi_score "tk_score"(int64_t ab, int64_t a, int64_t b) nogil
    double xlogx "tk_xlogx"(int64_t x) nogil
    double gain "tk_gain"(int64_t n, int64_t a, double fa, int64_t b, double fb, int64_t total, double ft,
                          cbool same) nogil
    double gain_fn "tk_gain_fn"(int64_t n, double fn, int64_t a, double fa, int64_t b, double fb, int64_t total,
                                double ft, cbool same) nogil
    cppclass PairSlot "TkPairSlot":
        int64_t val
        int32_t aux
        uint8_t flag
        uint64_t key() nogil
        cbool empty() nogil
    cppclass PairMap "TkPairMap":
        void init(size_t n) nogil
        PairSlot* find(uint64_t k) nogil
        int64_t get(uint64_t k) nogil
        PairSlot* slot(uint64_t k, cbool* created) nogil
        void erase(PairSlot* s) nogil
        size_t used() nogil
        size_t capacity() nogil
        PairSlot* at(size_t i) nogil
    cppclass FreqEntry "TkFreqEntry":
        int64_t count
        uint64_t key
        uint32_t seq
        int32_t list
    cppclass PmiEntry "TkPmiEntry":
        double score
        int64_t count
        uint64_t key
        cbool operator<(const PmiEntry&) nogil
    cppclass Heap "TkHeap"[E]:
        vector[E] v
        void push(const E& e) nogil
        E pop() nogil
        void rebuild() nogil


cdef class _Engine:
    cdef vector[int32_t] sym, length
    cdef vector[int64_t] start, weight
    cdef PairMap pairs
    cdef vector[vector[int32_t]] lists  # word-index lists, recycled through `free`
    cdef vector[int32_t] free
    cdef Heap[FreqEntry] fheap
    cdef Heap[PmiEntry] pheap
    cdef uint32_t seq
    cdef bint pmi
    cdef int64_t threshold
    # per-merge scratch, indexed by the neighbour symbol: summed word counts, word lists, stamps
    cdef vector[int64_t] dl, dr
    cdef vector[int32_t] ll, lr, mark_l, mark_r, visited
    cdef vector[int32_t] touched_l, touched_r
    cdef int32_t stamp
    # pmi and likelihood: symbol counts and the (superset) list of live pairs touching each symbol
    cdef vector[int64_t] symcount
    cdef vector[vector[uint64_t]] sym_pairs
    # likelihood only: f(symbol count), (x, x) merges per symbol (floor(run / 2), weighted),
    # the total symbol count N, f(N), the heap bounds' margin, and scratch for `pick`
    cdef bint lik
    cdef vector[double] symf
    cdef vector[int64_t] halfruns
    cdef int64_t total
    cdef double ftotal, margin, crude, half_inv_total
    cdef vector[PmiEntry] near
    cdef vector[int64_t] low  # per symbol: the floor its count must stay at or above, and ln(floor)
    cdef vector[double] lnlow
    cdef vector[double] xlogx_table  # f(n) for small n
    cdef vector[vector[uint64_t]] listed  # per symbol: pairs carrying symbol-floor bounds

    cdef void setup(self, const int32_t[::1] symbols, const int64_t[::1] offsets,
                    const int64_t[::1] counts, int32_t vocab_len) noexcept nogil
    cdef void grow_symbols(self, size_t n) noexcept nogil
    cdef int32_t new_list(self) noexcept nogil
    cdef void release(self, int32_t i) noexcept nogil
    cdef void track(self, uint64_t k) noexcept nogil
    cdef void push_freq(self, int64_t count, uint64_t k, int32_t lst) noexcept nogil
    cdef void push_pmi(self, uint64_t k, int64_t count) noexcept nogil
    cdef void add(self, uint64_t k, int64_t delta) noexcept nogil
    cdef bint pick(self, uint64_t* best, int32_t* lst) noexcept nogil
    cdef bint valid_pmi(self, PmiEntry& e) noexcept nogil
    cdef void compact_pmi(self) noexcept nogil
    cdef void note(self, int32_t s, int64_t c, bint before) noexcept nogil
    cdef void note_word(self, int32_t lst, int32_t w) noexcept nogil
    cdef void merge(self, int32_t a, int32_t b, int32_t r, int32_t lst) noexcept nogil
    cdef void settle(self, uint64_t k, int32_t lst) noexcept nogil
    cdef void rescore(self, int32_t x) noexcept nogil
    cdef double lik_score(self, uint64_t k, int64_t count) noexcept nogil
    cdef bint pick_lik(self, uint64_t* best, int32_t* lst) noexcept nogil
    cdef void rebuild_lik(self) noexcept nogil
    cdef void note_listed(self, uint64_t k) noexcept nogil
    cdef void requeue(self, uint64_t k) noexcept nogil
    cdef void push_floor(self, uint64_t k, int64_t count) noexcept nogil
    cdef void requeue_flagged(self, uint64_t k) noexcept nogil
    cdef double lik_bound(self, uint64_t k, int64_t count) noexcept nogil
    cdef void set_low(self, int32_t x) noexcept nogil
    cdef double floor_term(self, int32_t x, int64_t m) noexcept nogil
    cdef double small_xlogx(self, int64_t n) noexcept nogil
    cdef void set_total(self, int64_t total) noexcept nogil
    cdef void refresh_symbol(self, int32_t x) noexcept nogil
    cdef bint count_runs(self, int32_t* buf, int32_t L, int32_t a, int32_t b, int32_t r, int64_t c) noexcept nogil
