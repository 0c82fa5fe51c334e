"""The encode kernels' tables from Python: token bytes -> id, and merge pair -> (rank, id).

The tables are vocab_tables.hpp's, which the general path (pipeline_model.hpp) uses too.

>>> m = StrMap([b"ab", b"c"], [7, 9])
>>> m.lookup(b"ab"), m.lookup(b"x")
(7, -1)
>>> PairMap([(1, 2)], [5]).lookup(1, 2)
(0, 5)
>>> merge_ids(PairMap([(1, 1), (3, 1)], [3, 4]), [1, 1, 1])
[4]
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector


cdef class StrMap:
    """bytes -> id; the first of two equal keys wins."""

    def __cinit__(self, keys, values):
        cdef bytes key
        for key, value in zip(keys, values):
            self.table.add(<const uint8_t*><const char*>key, len(key), value, False)

    def lookup(self, bytes key) -> int:
        return self.table.get(<const uint8_t*><const char*>key, len(key))

    def __len__(self):
        return self.table.size()


cdef class PairMap:
    """(left, right) -> (rank, merged id); rank = position in `pairs`; the first of two equal pairs wins."""

    def __cinit__(self, pairs, merged):
        for rank, ((a, b), new) in enumerate(zip(pairs, merged)):
            self.table.add(a, b, rank, new)

    def lookup(self, int a, int b):
        cdef int64_t v = self.table.get(a, b)
        return None if v < 0 else (int(v >> 32), int(<uint32_t>v))


def merge_ids(PairMap merges, list symbols) -> list:
    """Merge a list of symbol ids by rank, as the encoders do (bpe_merge.hpp)."""
    cdef vector[Tok] syms
    cdef Tok t
    for k, s in enumerate(symbols):
        t.id, t.start, t.end = s, k, k + 1
        syms.push_back(t)
    bpe_merge(merges.table, syms)
    return [syms[k].id for k in range(syms.size())]
