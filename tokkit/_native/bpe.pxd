# BPE merging by rank over a word's symbols, shared by the char-BPE and byte-level kernels.
from libc.stdint cimport int32_t
from libcpp.vector cimport vector
from tokkit._native.encode_tables cimport PairMap

# Merge ids[0:n] in place (lowest rank first, leftmost on ties, as tokenizers does); starts/ends
# carry each symbol's span and are merged alongside. Linear-log time in the number of symbols.
cdef void bpe_merge(PairMap merges, vector[int32_t]& ids, vector[int32_t]& starts,
                    vector[int32_t]& ends) noexcept nogil
